// Webhooks as data: the subscription (`webhooks`), its deliveries (`webhookdeliveries`, which are
// also the outbox the dispatcher reads), the events a hook may follow, and the input schema.
import { NAME_SCHEMA } from './cron-job.ts';

/** Events a hook may subscribe to (`*` is all of them). `webhook.test` is sent only by POST /:id/test. */
export const WEBHOOK_EVENTS = [
  'user.created',
  'user.updated',
  'user.deleted',
  'endpoint.created',
  'endpoint.updated',
  'endpoint.deleted',
  'endpoint.called',
  'api.error',
  'record.created',
  'record.updated',
  'record.deleted',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
export const TEST_EVENT = 'webhook.test';

/**
 * Hop-by-hop and framing headers: the HTTP client sets them for each request and each hop, so no
 * request an administrator configures may (a webhook's `headers`, a cron http action's too).
 */
export const FRAMING_HEADERS: ReadonlySet<string> = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade',
  'host', 'content-length', 'expect',
]);

/** Headers a hook may not set: FRAMING_HEADERS, and the ones the delivery itself sets. */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([...FRAMING_HEADERS, 'content-type', 'x-webhook-id', 'x-webhook-event', 'x-webhook-timestamp', 'x-webhook-signature']);

/** Follow one resource: events whose path is `path` (or under it), or of endpoints in `group`. */
export interface WebhookFilter {
  path?: string;
  group?: string;
}

export interface WebhookDoc {
  _id: string;
  [key: string]: unknown;
  name: string;
  nameKey: string;
  url: string;
  events: string[];
  filter: WebhookFilter | null;
  /** Write-only: never leaves the service. */
  secret: string | null;
  enabled: boolean;
  headers: Record<string, string>;
  /** Failed attempts since the last success; the hook shows as failing from FAILING_AFTER on. */
  consecutiveFailures: number;
  lastDeliveryAt: string | Date | null;
  lastStatus: 'ok' | 'failed' | null;
  lastError: string | null;
  createdAt: string | Date;
  updatedAt: string | Date;
}

export const FAILING_AFTER = 3;

/**
 * The `nextAttemptAt` of a delivery held while its hook is disabled: never due, until enabling the
 * hook makes it due at once (WebhooksService.update, in the store, so every instance sees it).
 * Shown as null. Far ahead, and a date whose ISO text still sorts with the others.
 */
export const HELD_UNTIL = new Date('9999-12-31T00:00:00.000Z');

/** Whether a pending delivery is held for its disabled hook. */
export const isHeld = (delivery: Pick<WebhookDeliveryDoc, 'nextAttemptAt'>): boolean => new Date(delivery.nextAttemptAt).getTime() >= HELD_UNTIL.getTime();

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDeliveryDoc {
  _id: string;
  [key: string]: unknown;
  webhookId: string;
  event: string;
  /** The exact body sent on every attempt (`{event, timestamp, data}` as JSON). */
  body: string;
  status: DeliveryStatus;
  attempts: number;
  /** When the next attempt is due; while an instance holds the delivery, when its lease ends. */
  nextAttemptAt: string | Date;
  /** Bumped by every claim: the compare-and-set that lets one instance win a delivery. */
  lease: number;
  claimedBy: string | null;
  responseCode: number | null;
  durationMs: number | null;
  error: string | null;
  createdAt: string | Date;
  updatedAt: string | Date;
}

const HEADER_NAME = "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$";

export const WEBHOOK_PROPERTIES = {
  // Names that look like ids are refused by assertNameNotId (cron-job.ts), after the schema.
  name: NAME_SCHEMA,
  url: { type: 'string', minLength: 1, maxLength: 2000 },
  events: { type: 'array', minItems: 1, maxItems: WEBHOOK_EVENTS.length + 1, uniqueItems: true, items: { enum: [...WEBHOOK_EVENTS, '*'] } },
  // Nullable as a type list, not `anyOf: [null, …]`: ajv would report "must be null" first, and
  // the first error is the one a client is shown (`filter` with two keys, an empty `secret`).
  filter: {
    type: ['object', 'null'],
    additionalProperties: false,
    minProperties: 1,
    maxProperties: 1,
    properties: { path: { type: 'string', minLength: 1, maxLength: 500, pattern: '^/[^?#\\s]*$' }, group: { type: 'string', minLength: 1, maxLength: 100 } },
  },
  secret: { type: ['string', 'null'], minLength: 1, maxLength: 500 },
  enabled: { type: 'boolean' },
  headers: { type: 'object', maxProperties: 50, additionalProperties: { type: 'string', maxLength: 4000, pattern: '^[^\\r\\n\\u0000]*$' }, propertyNames: { pattern: HEADER_NAME } },
};
