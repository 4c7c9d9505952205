// Cron job definitions (`cronjobs`): validation, create/update/delete with their audit entries, and
// the bookkeeping of each run's outcome. Every write bumps the `cronjobs` revision, which each
// instance's scheduler watches to pick the change up. What an action does at run time is checked
// by `checkAction` (supplied by src/automation: outbound policy, script compile), since this layer
// cannot reach it; a save checks as much of the action as it changes (actionCheckOf, at the bottom).
import { isDeepStrictEqual } from 'node:util';
import { badRequest, conflict, forbidden, notFound } from '../lib/errors.ts';
import { isId } from '../lib/ids.ts';
import { ACTION_SCHEMAS, CRON_ACTION_TYPES, httpHeadersOf, isTimezone, maskedAction, TIMEZONE_PROBLEM, NAME_SCHEMA, nextRunOf, scheduleProblem, withHttpHeaders, withNameNotId, type CronAction, type CronJobDoc } from '../model/cron-job.ts';
import { isPermission, type Permission } from '../model/permissions.ts';
import type { GroupDoc, UserDoc } from '../model/records.ts';
import { missingPermissions, principalUserId, type Principal } from '../model/principal.ts';
import { keepSecretHeaders } from '../model/secret-headers.ts';
import { compileValidator } from '../model/validation.ts';
import { DuplicateKeyError, type Page, type Store } from '../store/types.ts';
import type { AuditLog } from './audit-log.ts';
import { collect, collectAsync, throwIfProblems, validatedWithAll, type FieldProblems } from './field-problems.ts';
import type { RequestInfo } from './auth.ts';
import type { Authenticator } from './authenticator.ts';
import type { Revisions } from './revisions.ts';
import { assertNoIdOnCreate, assertShownUnchanged, setShownFieldsAside } from './shown-fields.ts';
import { LOGIN_SCHEMA, type UsersService } from './users.ts';

export interface CronJobInput {
  name: string;
  description?: string;
  schedule: string;
  timezone?: string;
  enabled?: boolean;
  action: CronAction;
  runAs?: string | null;
}

/**
 * Who changes a job, for the permission check on runAs and the audit entry. `principal` null: the
 * platform itself, applying the project directory's files for whoever administers the server
 * (the file sync); runAs is then taken as written, and the audit entry names the source.
 */
export interface CronActor {
  principal: Principal | null;
  /** Absent for changes that do not come from an HTTP request (the project sync). */
  request?: RequestInfo;
  /** The audit entry's source; default `cron`. */
  source?: string;
}

export type CronActionCheck = (action: CronAction) => Promise<void>;

export interface PublicCronJob {
  _id: string;
  name: string;
  description: string;
  schedule: string;
  timezone: string;
  enabled: boolean;
  action: CronAction;
  runAs: string | null;
  lastRunAt: string | null;
  lastStatus: 'ok' | 'failed' | null;
  lastError: string | null;
  lastDurationMs: number | null;
  nextRunAt: string | null;
  failureCount: number;
  createdAt: string;
  updatedAt: string;
}

export const CRON_REVISION = 'cronjobs';
const properties = {
  name: NAME_SCHEMA,
  description: { type: 'string', maxLength: 1000 },
  schedule: { type: 'string', minLength: 1, maxLength: 200 },
  timezone: { type: 'string', minLength: 1, maxLength: 100 },
  enabled: { type: 'boolean' },
  runAs: { anyOf: [LOGIN_SCHEMA, { type: 'null' }] },
  // One `then` per action type: only the matching type's errors are reported.
  action: {
    type: 'object',
    required: ['type'],
    properties: { type: { enum: CRON_ACTION_TYPES } },
    allOf: CRON_ACTION_TYPES.map((type) => ({ if: { properties: { type: { const: type } }, required: ['type'] }, then: ACTION_SCHEMAS[type] })),
  },
};
const validateCreate = compileValidator<CronJobInput>({ type: 'object', additionalProperties: false, required: ['name', 'schedule', 'action'], properties });
const validateUpdate = compileValidator<Partial<CronJobInput>>({ type: 'object', additionalProperties: false, properties });
/** What a job is shown with and the service keeps: ignored when sent back (shown-fields.ts). */
const SHOWN_KEPT = ['lastRunAt', 'lastStatus', 'lastError', 'lastDurationMs', 'nextRunAt', 'failureCount', 'createdAt', 'updatedAt'];

export function publicCronJob(doc: CronJobDoc): PublicCronJob {
  const next = doc.enabled ? nextRunOf(doc.schedule, doc.timezone) : null;
  return {
    _id: doc._id,
    name: doc.name,
    description: doc.description,
    schedule: doc.schedule,
    timezone: doc.timezone,
    enabled: doc.enabled,
    action: maskedAction(doc.action),
    runAs: doc.runAs,
    lastRunAt: doc.lastRunAt ? new Date(doc.lastRunAt).toISOString() : null,
    lastStatus: doc.lastStatus,
    lastError: doc.lastError,
    lastDurationMs: doc.lastDurationMs,
    nextRunAt: next ? next.toISOString() : null,
    failureCount: doc.failureCount,
    createdAt: new Date(doc.createdAt).toISOString(),
    updatedAt: new Date(doc.updatedAt).toISOString(),
  };
}

const nameKey = (name: string): string => name.toLowerCase();

/** The schedule with its spaces made single, or a 400 saying what is wrong with it. */
function normalSchedule(given: string): string {
  const schedule = given.trim().split(/\s+/).join(' ');
  const problem = scheduleProblem(schedule);
  if (problem) throw badRequest(`Invalid request body: schedule "${schedule}" is not a valid cron expression: ${problem}`, [{ field: 'schedule', message: problem }]);
  return schedule;
}

function assertTimezone(timezone: string): void {
  if (!isTimezone(timezone)) throw badRequest(`Invalid request body: timezone "${timezone}" is not a time zone`, [{ field: 'timezone', message: TIMEZONE_PROBLEM }]);
}

export class CronJobsService {
  private readonly store: Store;
  private readonly revisions: Revisions;
  private readonly audit: AuditLog;
  private readonly users: UsersService;
  private readonly authenticator: Authenticator;
  private readonly checkAction: CronActionCheck;

  constructor(deps: { store: Store; revisions: Revisions; audit: AuditLog; users: UsersService; authenticator: Authenticator; checkAction: CronActionCheck }) {
    this.store = deps.store;
    this.revisions = deps.revisions;
    this.audit = deps.audit;
    this.users = deps.users;
    this.authenticator = deps.authenticator;
    this.checkAction = deps.checkAction;
  }

  private get jobs() {
    return this.store.collection<CronJobDoc>('cronjobs');
  }

  list(query: { page: number; limit: number; search?: string }): Promise<Page<CronJobDoc>> {
    return this.jobs.findPage({}, {
      page: query.page,
      limit: query.limit,
      sort: { nameKey: 1 },
      ...(query.search ? { search: { term: query.search, fields: ['name', 'description', 'schedule'] } } : {}),
    });
  }

  /** Every job, for the scheduler. */
  all(): Promise<CronJobDoc[]> {
    return this.jobs.find({}, { sort: { nameKey: 1 } });
  }

  revision(): Promise<number> {
    return this.revisions.current(CRON_REVISION);
  }

  async get(id: string): Promise<CronJobDoc> {
    const job = isId(id) ? await this.jobs.findById(id) : null;
    if (!job) throw notFound('Cron job not found');
    return job;
  }

  /** By id, else by name (names are the keys people and files use). */
  async find(idOrName: string): Promise<CronJobDoc> {
    const job = (isId(idOrName) ? await this.jobs.findById(idOrName) : null) ?? (await this.jobs.findOne({ nameKey: nameKey(idOrName) }));
    if (!job) throw notFound('Cron job not found');
    return job;
  }

  async create(input: unknown, actor: CronActor): Promise<CronJobDoc> {
    const { rest, shown } = setShownFieldsAside(input, ['_id'], SHOWN_KEPT);
    assertNoIdOnCreate(shown);
    const valid = await this.validated(() => validateCreate(rest), rest);
    const job = await this.checked({ description: '', timezone: 'UTC', enabled: true, runAs: null, ...valid }, actor, undefined);
    const now = new Date();
    const by = principalUserId(actor.principal ?? undefined);
    let doc: CronJobDoc;
    try {
      doc = await this.jobs.insertOne({
        ...job,
        nameKey: nameKey(job.name),
        lastRunAt: null,
        lastStatus: null,
        lastError: null,
        lastDurationMs: null,
        failureCount: 0,
        createdBy: by,
        updatedBy: by,
        createdAt: now,
        updatedAt: now,
      });
    } catch (error) {
      throw duplicateName(error);
    }
    await this.changed(actor, 'cron_job_created', `Cron job "${doc.name}" created`, 201);
    return doc;
  }

  async update(id: string, input: unknown, actor: CronActor): Promise<CronJobDoc> {
    const { rest, shown } = setShownFieldsAside(input, ['_id'], SHOWN_KEPT);
    const valid = await this.validated(() => validateUpdate(rest), rest);
    const current = await this.get(id);
    assertShownUnchanged(shown, current);
    const { name, description, schedule, timezone, enabled, action, runAs } = current;
    // A job keeps running as its runAs user only while whoever last saved it could do as much.
    const job = await this.checked({ name, description, schedule, timezone, enabled, action, runAs, ...valid }, actor, current);
    let updated: CronJobDoc | null;
    try {
      updated = await this.jobs.updateOne(
        { _id: current._id },
        { $set: { ...job, nameKey: nameKey(job.name), updatedBy: principalUserId(actor.principal ?? undefined), updatedAt: new Date() } },
      );
    } catch (error) {
      throw duplicateName(error);
    }
    if (!updated) throw notFound('Cron job not found');
    await this.changed(actor, 'cron_job_updated', `Cron job "${updated.name}" updated`, 200);
    return updated;
  }

  async delete(id: string, actor: CronActor): Promise<CronJobDoc> {
    const current = await this.get(id);
    const deleted = await this.jobs.deleteOne({ _id: current._id });
    if (!deleted) throw notFound('Cron job not found');
    await this.changed(actor, 'cron_job_deleted', `Cron job "${deleted.name}" deleted`, 200);
    return deleted;
  }

  /** Records a run's outcome on the job (no revision bump: the schedule did not change). */
  async recordOutcome(jobId: string, outcome: { status: 'ok' | 'failed'; error: string | null; durationMs: number; at: Date }): Promise<void> {
    const set = { lastRunAt: outcome.at, lastStatus: outcome.status, lastError: outcome.error, lastDurationMs: outcome.durationMs };
    if (outcome.status === 'ok') await this.jobs.updateOne({ _id: jobId }, { $set: { ...set, failureCount: 0 } });
    else await this.jobs.updateOne({ _id: jobId }, { $set: set, $inc: { failureCount: 1 } });
  }

  /**
   * The caller an endpoint action runs as: undefined (anonymous) without runAs, else that user with
   * the permissions their groups give now. Throws when the user is gone or disabled.
   */
  async runAsPrincipal(job: CronJobDoc): Promise<Principal | undefined> {
    if (!job.runAs) return undefined;
    const user = await this.users.findByLogin(job.runAs);
    if (!user || user.status !== 'active') throw new Error(`runAs user "${job.runAs}" does not exist or is disabled`);
    const permissions = await this.authenticator.permissionsOf(user);
    return { kind: 'user', userId: user._id, login: user.login, groupIds: user.groupIds, permissions };
  }

  /**
   * The input validated. When it is not, its problems are listed with those the schedule, time
   * zone and runAs checks find (field-problems.ts); the action is checked once it has its shape.
   */
  private validated<T extends { name?: string }>(validate: () => T, input: unknown): Promise<T> {
    return validatedWithAll(() => withNameNotId(validate()), input, async (given, problems) => {
      if (typeof given.schedule === 'string') collect(problems, () => normalSchedule(given.schedule as string));
      if (typeof given.timezone === 'string') collect(problems, () => assertTimezone(given.timezone as string));
      // Only whether the user exists: whether the caller may run as them (a 403) waits for a valid body.
      if (typeof given.runAs === 'string' && given.runAs.trim() !== '') await collectAsync(problems, () => this.runAsUser(given.runAs as string));
    });
  }

  /** `current`: the job as stored, on update; an HTTP action's headers sent as `(secret)` keep its values. */
  private async checked(job: Omit<CronJobInput, 'description' | 'timezone' | 'enabled' | 'runAs'> & { description: string; timezone: string; enabled: boolean; runAs: string | null }, actor: CronActor, current: CronJobDoc | undefined) {
    const problems: FieldProblems = [];
    // A schedule saved before the syntax was narrowed (`0 0 L * *`) is not scheduled, but does not
    // keep the job from being disabled or edited: checked when it changes or the job is enabled.
    const schedule = scheduleKept(job, current) ? job.schedule : collect(problems, () => normalSchedule(job.schedule));
    collect(problems, () => assertTimezone(job.timezone));
    const runAs = job.runAs?.trim() || null;
    if (runAs !== null && job.action.type !== 'endpoint' && (!current || runAs !== current.runAs || job.action.type !== current.action.type)) {
      const message = `applies to endpoint actions only (this is a ${job.action.type} action); send runAs: null`;
      problems.push({ message: `Invalid request body: runAs ${message}`, details: [{ field: 'runAs', message }] });
    }
    const runAsUser = runAs === null ? undefined : await collectAsync(problems, () => this.runAsUser(runAs));
    // Credential headers sent as `(secret)` keep the stored values (a 400 where none is stored).
    const action = collect(problems, () => withHttpHeaders(job.action, (headers) => keepSecretHeaders(headers, httpHeadersOf(current?.action), 'action.headers')));
    if (action !== undefined) await this.checkActionInto(problems, action, actionCheckOf(action, job.enabled, current));
    throwIfProblems(problems);
    // A 403 only for a job that is otherwise right: it would hide every problem of the body.
    if (runAsUser !== undefined) await this.assertMayRunAs(runAsUser, actor.principal);
    return { name: job.name, description: job.description, schedule: schedule as string, timezone: job.timezone, enabled: job.enabled, action: action as CronAction, runAs };
  }

  /** Adds what checkAction refuses of the action to `problems`, as far as `check` asks. */
  private async checkActionInto(problems: FieldProblems, action: CronAction, check: ActionCheck): Promise<void> {
    if (check === 'none') return;
    try {
      await this.checkAction(action);
    } catch (error) {
      if (!(error instanceof CronActionProblem)) throw error;
      if (check === 'all-but-url' && error.field === 'action.url') return;
      problems.push({ message: `Invalid request body: ${error.field}: ${error.message}`, details: [{ field: error.field, message: error.message }] });
    }
  }

  /** The runAs user, or a 400 naming the login. */
  private async runAsUser(login: string): Promise<UserDoc> {
    const user = await this.users.findByLogin(login);
    if (!user) throw badRequest(`Invalid request body: runAs user "${login}" does not exist`, [{ field: 'runAs', message: 'no user with this login' }]);
    return user;
  }

  /**
   * Only someone who could do what the runAs user can may make a job act as them: who holds at
   * least their permissions, and is in every group they are in (a `group` endpoint answers its
   * groups' members, whatever their permissions), unless they hold `manage_users` and so could
   * join those groups themselves.
   */
  private async assertMayRunAs(user: UserDoc, actor: Principal | null): Promise<void> {
    if (actor === null) return;
    const permissions: Permission[] = [...(await this.authenticator.permissionsOf(user))].filter(isPermission);
    const missing = missingPermissions(actor, permissions);
    if (missing.length > 0) throw forbidden(`You cannot make a job run as "${user.login}": they hold permissions you do not have: ${missing.join(', ')}`);
    if (actor.permissions.has('manage_users')) return;
    const own = actor.kind === 'user' ? actor.groupIds : [];
    const outside = user.groupIds.filter((id) => !own.includes(id));
    if (outside.length === 0) return;
    const names = (await this.store.collection<GroupDoc>('groups').find({ _id: { $in: outside } })).map((group) => group.name).sort();
    if (names.length === 0) return;
    throw forbidden(`You cannot make a job run as "${user.login}": they are in groups you are not in: ${names.join(', ')}`);
  }

  private async changed(actor: CronActor, action: string, message: string, statusCode: number): Promise<void> {
    await this.revisions.bump(CRON_REVISION);
    await this.audit.record({ action, message, source: actor.source ?? 'cron', userId: principalUserId(actor.principal ?? undefined), statusCode, ...actor.request });
  }
}

/** An action check that refuses a value names the field it refused (e.g. `action.url`). */
export class CronActionProblem extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.name = 'CronActionProblem';
    this.field = field;
  }
}

function duplicateName(error: unknown): unknown {
  return error instanceof DuplicateKeyError ? conflict('A cron job with this name already exists') : error;
}

type ActionCheck = 'all' | 'all-but-url' | 'none';

/**
 * How much of the action a save checks (checkAction: an HTTP action's URL under the outbound
 * policy and its headers, a script's compile): all of it on create and when the job is enabled
 * (again); else only what changed, the URL included only when it changes. A URL the policy has
 * refused since it was saved (the allow list narrowed) so never keeps a job from being disabled or
 * edited; its runs are refused when they send (the policy is checked again then).
 */
function actionCheckOf(action: CronAction, enabled: boolean, current: CronJobDoc | undefined): ActionCheck {
  if (!current || (enabled && !current.enabled)) return 'all';
  if (isDeepStrictEqual(action, current.action)) return 'none';
  return urlOf(action) === urlOf(current.action) ? 'all-but-url' : 'all';
}

const urlOf = (action: CronAction): string | undefined => (action.type === 'http' ? action.url : undefined);

/** Whether a save keeps the stored schedule as it is: the same text, on a job not being enabled. */
const scheduleKept = (job: { schedule: string; enabled: boolean }, current: CronJobDoc | undefined): boolean =>
  current !== undefined && job.schedule === current.schedule && !(job.enabled && !current.enabled);
