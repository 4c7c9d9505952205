// Cron jobs as data: the stored document, the input schemas (one per action type, a table), the
// timezone check, and the next run time (schedules themselves: cron-schedule.ts). What an action
// does when it runs lives in src/automation/cron/actions.
import { badRequest } from '../lib/errors.ts';
import { nextFireAfter, parseSchedule } from './cron-schedule.ts';
import type { Stamp } from './records.ts';
import { maskedSecretHeaders, maskSecretHeaders, withStoredSecrets } from './secret-headers.ts';

/**
 * The name of a cron job, or of a webhook: the natural key people and project files use. Routes
 * take an id or a name for `:id`, an id first, and names compare case-insensitively, so a name of
 * 24 hex digits in any case could stand for another job's or hook's id: assertNameNotId refuses it
 * (schemas/cron-job.schema.json and webhook.schema.json say the same to project files).
 */
export const NAME_SCHEMA = { type: 'string', minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' };
export const ID_LIKE_NAME = 'must not look like an id (24 hexadecimal characters)';

/** A 400 naming `name` when it looks like an id; run after the schema (a name left out is fine). */
export function assertNameNotId(name: string | undefined): void {
  if (name !== undefined && /^[0-9a-f]{24}$/i.test(name)) throw badRequest(`Invalid request body: name ${ID_LIKE_NAME}`, [{ field: 'name', message: ID_LIKE_NAME }]);
}

/** The validated input, once its name (if it has one) is no id (assertNameNotId). */
export function withNameNotId<T extends { name?: string }>(valid: T): T {
  assertNameNotId(valid.name);
  return valid;
}

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;

export interface JavascriptAction {
  type: 'javascript';
  code: string;
}
export interface HttpAction {
  type: 'http';
  url: string;
  method: (typeof HTTP_METHODS)[number];
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  timeoutMs?: number;
}
export interface EndpointAction {
  type: 'endpoint';
  path: string;
  method: (typeof HTTP_METHODS)[number];
  body?: unknown;
  query?: Record<string, string | string[]>;
}
export type CronAction = JavascriptAction | HttpAction | EndpointAction;
export type CronActionType = CronAction['type'];

/** The shape of each action type's input, keyed by `type`. */
export const ACTION_SCHEMAS: Record<CronActionType, object> = {
  javascript: {
    type: 'object',
    additionalProperties: false,
    required: ['type', 'code'],
    properties: { type: { const: 'javascript' }, code: { type: 'string', minLength: 1, maxLength: 100_000 } },
  },
  http: {
    type: 'object',
    additionalProperties: false,
    required: ['type', 'url', 'method'],
    properties: {
      type: { const: 'http' },
      url: { type: 'string', minLength: 1, maxLength: 2000 },
      method: { enum: [...HTTP_METHODS] },
      headers: { type: 'object', maxProperties: 50, additionalProperties: { type: 'string', maxLength: 4000, pattern: '^[^\\r\\n\\u0000]*$' }, propertyNames: { pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$" } },
      body: {},
      timeoutMs: { type: 'integer', minimum: 1, maximum: 60_000 },
    },
  },
  endpoint: {
    type: 'object',
    additionalProperties: false,
    required: ['type', 'path', 'method'],
    properties: {
      type: { const: 'endpoint' },
      // The query goes in `query`: a path is matched against the route table as it is.
      path: { type: 'string', minLength: 1, maxLength: 500, pattern: '^/[^?#\\s]*$' },
      method: { enum: [...HTTP_METHODS] },
      // JSON as a request to the endpoint would carry it: text here is a JSON body typed wrong
      // (the admin's form once saved it so), which every run would send and the endpoint refuse.
      body: { anyOf: [{ type: 'object' }, { type: 'array' }, { type: 'null' }] },
      query: {
        type: 'object',
        maxProperties: 50,
        additionalProperties: { anyOf: [{ type: 'string', maxLength: 1000 }, { type: 'array', maxItems: 50, items: { type: 'string', maxLength: 1000 } }] },
      },
    },
  },
};

/** The action with an HTTP action's headers passed through `change` (the same action when they come back unchanged). */
export function withHttpHeaders(action: CronAction, change: (headers: Record<string, string>) => Record<string, string>): CronAction {
  if (action.type !== 'http' || !action.headers) return action;
  const headers = change(action.headers);
  return headers === action.headers ? action : { ...action, headers };
}

/** An action's headers if it is an HTTP action. */
export const httpHeadersOf = (action: CronAction | undefined): Record<string, string> | undefined => (action?.type === 'http' ? action.headers : undefined);

/** The action as it may be shown: an HTTP action's credential headers as `(secret)` (secret-headers.ts). */
export const maskedAction = (action: CronAction, shown?: (value: string) => boolean): CronAction => withHttpHeaders(action, (headers) => maskSecretHeaders(headers, shown));

/** An HTTP action whose masked credential headers take the values `current` (an HTTP action too) holds for them. */
export const actionWithStoredSecrets = (action: CronAction, current: CronAction | undefined): CronAction =>
  withHttpHeaders(action, (headers) => withStoredSecrets(headers, httpHeadersOf(current)));

/** Where an HTTP action still says `(secret)` for a credential header (`headers.Authorization`). */
export function maskedActionHeaders(action: CronAction): string[] {
  return action.type === 'http' && action.headers ? maskedSecretHeaders(action.headers).map((name) => `headers.${name}`) : [];
}

export const CRON_ACTION_TYPES = Object.keys(ACTION_SCHEMAS) as CronActionType[];

export interface CronJobDoc {
  _id: string;
  [key: string]: unknown;
  name: string;
  nameKey: string;
  description: string;
  schedule: string;
  timezone: string;
  enabled: boolean;
  action: CronAction;
  /** Login the endpoint action runs as; null: an anonymous caller. */
  runAs: string | null;
  lastRunAt: Stamp | null;
  lastStatus: 'ok' | 'failed' | null;
  lastError: string | null;
  lastDurationMs: number | null;
  /** Failed runs since the last successful one. */
  failureCount: number;
  createdBy: string | null;
  updatedBy: string | null;
  createdAt: Stamp;
  updatedAt: Stamp;
}

export interface CronRunDoc {
  _id: string;
  [key: string]: unknown;
  jobId: string;
  jobName: string;
  trigger: 'schedule' | 'manual';
  /** The fire time a scheduled run was claimed for; null for a manual run. */
  scheduledAt: string | null;
  status: 'ok' | 'failed';
  error: string | null;
  durationMs: number;
  /** What the action produced: console output, a response's status and (truncated) body. */
  output: unknown;
  startedAt: Stamp;
  finishedAt: Stamp;
}

// The schedule's syntax, days and daylight-saving rules: cron-schedule.ts.
export { scheduleProblem } from './cron-schedule.ts';

/** What a `timezone` must be, as a 400 and a project problem say. */
export const TIMEZONE_PROBLEM = 'must be an IANA time zone such as Europe/Berlin, or an offset from UTC such as +02:00';

/** An IANA time zone, or a fixed offset from UTC (`+02:00`): what Intl, and so the scheduler, reads. */
export function isTimezone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/**
 * The next time after `after` (default now) the job runs, by the rules of cron-schedule.ts; null
 * when it does not run within the horizon, or when a stored schedule or time zone no longer reads.
 */
export function nextRunOf(schedule: string, timezone: string, after = Date.now()): Date | null {
  try {
    const at = nextFireAfter(parseSchedule(schedule), timezone, after);
    return at === null ? null : new Date(at);
  } catch {
    // A ScheduleError, or Intl refusing the time zone: shown as no next run, as for a disabled job.
    return null;
  }
}
