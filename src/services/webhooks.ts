// Webhook subscriptions (`webhooks`): validation, create/update/delete with their audit entries,
// and each hook's delivery health (consecutive failures, last outcome). Every write bumps the
// `webhooks` revision, which each instance's outbox compares to keep its table of subscribed
// events current. Whether a URL may be called is checked by `checkUrl` (the outbound policy,
// supplied by src/automation, which this layer cannot reach). Hooks and deliveries that carry
// user records are for principals who may read users (assertMayFollow, at the bottom).
import { badRequest, conflict, forbidden, notFound } from '../lib/errors.ts';
import { isId } from '../lib/ids.ts';
import { withNameNotId } from '../model/cron-job.ts';
import { hasAnyPermission, principalUserId, type Principal } from '../model/principal.ts';
import { keepSecretHeaders, maskSecretHeaders } from '../model/secret-headers.ts';
import { compileValidator } from '../model/validation.ts';
import { FAILING_AFTER, HELD_UNTIL, RESERVED_HEADERS, WEBHOOK_EVENTS, WEBHOOK_PROPERTIES, type WebhookDeliveryDoc, type WebhookDoc, type WebhookFilter } from '../model/webhook.ts';
import { DuplicateKeyError, type Page, type Store } from '../store/types.ts';
import type { AuditLog } from './audit-log.ts';
import type { RequestInfo } from './auth.ts';
import type { Revisions } from './revisions.ts';
import { throwIfProblems, validatedWithAll, type FieldProblems } from './field-problems.ts';
import { assertNoIdOnCreate, assertShownUnchanged, setShownFieldsAside } from './shown-fields.ts';

export interface WebhookInput {
  name: string;
  url: string;
  events: string[];
  filter?: WebhookFilter | null;
  secret?: string | null;
  enabled?: boolean;
  headers?: Record<string, string>;
}

/** Who changes a hook, for the audit entry; `principal` null: the platform itself (the project file sync). */
export interface WebhookActor {
  principal: Principal | null;
  /** Absent for changes that do not come from an HTTP request (the project sync). */
  request?: RequestInfo;
  /** The audit entry's source; default `webhooks`. */
  source?: string;
}

/** Throws an Error whose message is fit for the client when the URL may not be called. */
export type WebhookUrlCheck = (url: string) => Promise<void>;

export interface PublicWebhook {
  _id: string;
  name: string;
  url: string;
  events: string[];
  filter: WebhookFilter | null;
  /** Whether a secret is set; the secret itself is never returned. */
  secret: 'set' | 'unset';
  enabled: boolean;
  /** Credentials among them (`Authorization`, …) as `(secret)`: see model/secret-headers.ts. */
  headers: Record<string, string>;
  /** `failing` from FAILING_AFTER failed attempts in a row until the next success. */
  health: 'ok' | 'failing' | 'unknown';
  consecutiveFailures: number;
  lastDeliveryAt: string | null;
  lastStatus: 'ok' | 'failed' | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
}

export const WEBHOOK_REVISION = 'webhooks';
const validateCreate = compileValidator<WebhookInput>({ type: 'object', additionalProperties: false, required: ['name', 'url', 'events'], properties: WEBHOOK_PROPERTIES });
const validateUpdate = compileValidator<Partial<WebhookInput>>({ type: 'object', additionalProperties: false, properties: WEBHOOK_PROPERTIES });
/** What a hook is shown with and the service keeps: ignored when sent back (shown-fields.ts). */
const SHOWN_KEPT = ['health', 'consecutiveFailures', 'lastDeliveryAt', 'lastStatus', 'lastError', 'createdAt', 'updatedAt'];

/**
 * The input without the secret as a hook is shown with it (`set` or `unset`, never the secret):
 * sent back, it keeps the secret as it is. So these two words cannot be secrets themselves; on
 * create `set` is a 400 (there is no secret to keep).
 */
function withoutShownSecret(input: unknown, creating: boolean): unknown {
  if (typeof input !== 'object' || input === null) return input;
  const { secret, ...rest } = input as Record<string, unknown>;
  if (secret !== 'set' && secret !== 'unset') return input;
  if (creating && secret === 'set') throw badRequest('Invalid request body: secret "set" is how a secret is shown; send the secret itself', [{ field: 'secret', message: 'is the shown form, not a secret' }]);
  return rest;
}

const iso = (value: string | Date | null): string | null => (value === null ? null : new Date(value).toISOString());

export function publicWebhook(doc: WebhookDoc): PublicWebhook {
  return {
    _id: doc._id,
    name: doc.name,
    url: doc.url,
    events: doc.events,
    filter: doc.filter,
    secret: doc.secret ? 'set' : 'unset',
    enabled: doc.enabled,
    headers: maskSecretHeaders(doc.headers),
    health: doc.consecutiveFailures >= FAILING_AFTER ? 'failing' : doc.lastStatus === null ? 'unknown' : 'ok',
    consecutiveFailures: doc.consecutiveFailures,
    lastDeliveryAt: iso(doc.lastDeliveryAt),
    lastStatus: doc.lastStatus,
    lastError: doc.lastError,
    createdAt: iso(doc.createdAt) as string,
    updatedAt: iso(doc.updatedAt) as string,
  };
}

const nameKey = (name: string): string => name.toLowerCase();

export class WebhooksService {
  private readonly store: Store;
  private readonly revisions: Revisions;
  private readonly audit: AuditLog;
  private readonly checkUrl: WebhookUrlCheck;

  constructor(deps: { store: Store; revisions: Revisions; audit: AuditLog; checkUrl: WebhookUrlCheck }) {
    this.store = deps.store;
    this.revisions = deps.revisions;
    this.audit = deps.audit;
    this.checkUrl = deps.checkUrl;
  }

  private get hooks() {
    return this.store.collection<WebhookDoc>('webhooks');
  }

  private get deliveries() {
    return this.store.collection<WebhookDeliveryDoc>('webhookdeliveries');
  }

  list(query: { page: number; limit: number; search?: string }): Promise<Page<WebhookDoc>> {
    return this.hooks.findPage({}, {
      page: query.page,
      limit: query.limit,
      sort: { nameKey: 1 },
      ...(query.search ? { search: { term: query.search, fields: ['name', 'url'] } } : {}),
    });
  }

  /** Every hook (for the outbox's table of subscriptions). */
  all(): Promise<WebhookDoc[]> {
    return this.hooks.find({}, { sort: { nameKey: 1 } });
  }

  revision(): Promise<number> {
    return this.revisions.current(WEBHOOK_REVISION);
  }

  /** The revision when known without a read (see Revisions.known). */
  knownRevision(): number | null {
    return this.revisions.known(WEBHOOK_REVISION);
  }

  /** The newest revision this instance has seen, a floor for the current one (see Revisions.atLeast). */
  revisionAtLeast(): number | null {
    return this.revisions.atLeast(WEBHOOK_REVISION);
  }

  async get(id: string): Promise<WebhookDoc> {
    const hook = isId(id) ? await this.hooks.findById(id) : null;
    if (!hook) throw notFound('Webhook not found');
    return hook;
  }

  /** By id, else by name (names are the keys people and files use). */
  async find(idOrName: string): Promise<WebhookDoc> {
    const hook = (isId(idOrName) ? await this.hooks.findById(idOrName) : null) ?? (await this.hooks.findOne({ nameKey: nameKey(idOrName) }));
    if (!hook) throw notFound('Webhook not found');
    return hook;
  }

  async create(input: unknown, actor: WebhookActor): Promise<WebhookDoc> {
    const { rest, shown } = setShownFieldsAside(input, ['_id'], SHOWN_KEPT);
    assertNoIdOnCreate(shown);
    const valid = await this.validated(() => validateCreate(withoutShownSecret(rest, true)), rest, undefined);
    const hook = await this.checked({ filter: null, secret: null, enabled: true, headers: {}, ...valid }, undefined);
    assertMayFollow(hook.events, actor);
    const now = new Date();
    let doc: WebhookDoc;
    try {
      doc = await this.hooks.insertOne({
        ...hook,
        nameKey: nameKey(hook.name),
        consecutiveFailures: 0,
        lastDeliveryAt: null,
        lastStatus: null,
        lastError: null,
        createdBy: principalUserId(actor.principal),
        createdAt: now,
        updatedAt: now,
      });
    } catch (error) {
      throw duplicateName(error);
    }
    await this.changed(actor, 'webhook_created', `Webhook "${doc.name}" created`, 201);
    return doc;
  }

  /** `secret` left out (or sent as shown, `set`/`unset`) keeps the current one; `null` removes it. A secret header sent as `(secret)` keeps its value. */
  async update(id: string, input: unknown, actor: WebhookActor): Promise<WebhookDoc> {
    const { rest, shown } = setShownFieldsAside(input, ['_id'], SHOWN_KEPT);
    const current = await this.get(id);
    // Before validation: a caller who may not touch this hook learns nothing more from its input.
    await this.assertMayChange(current, actor);
    const valid = await this.validated(() => validateUpdate(withoutShownSecret(rest, false)), rest, current);
    assertShownUnchanged(shown, current);
    const { name, url, events, filter, secret, enabled, headers } = current;
    const hook = await this.checked({ name, url, events, filter, secret, enabled, headers, ...valid }, current);
    assertMayFollow(hook.events, actor);
    // For a caller who may not read users, the checks above hold only for the hook as it was read:
    // written only if nobody changed it since (an administrator making it follow user.* meanwhile
    // would be undone unseen, and a user.* delivery queued in between sent to this caller's URL).
    const unchanged = mayReadUsers(actor.principal) || !(current.updatedAt instanceof Date) ? {} : { updatedAt: current.updatedAt };
    let updated: WebhookDoc | null;
    try {
      updated = await this.hooks.updateOne({ _id: current._id, ...unchanged }, { $set: { ...hook, nameKey: nameKey(hook.name), updatedBy: principalUserId(actor.principal), updatedAt: new Date() } });
    } catch (error) {
      throw duplicateName(error);
    }
    if (!updated && 'updatedAt' in unchanged && (await this.hooks.findById(current._id))) throw conflict('The hook changed while this save was checked; read it again and retry');
    if (!updated) throw notFound('Webhook not found');
    // Enabled (again): the deliveries the dispatcher held while it was disabled are due now. After
    // the hook is written, so a dispatcher holding one meanwhile sees it enabled (see its hold()).
    // Enabled from disabled: so are retries whose wait had not run out, which were shown with no
    // next attempt meanwhile (publicDelivery); claimed ones are left to the instance sending them.
    if (updated.enabled) {
      const held = { nextAttemptAt: { $gte: HELD_UNTIL } };
      const waiting = current.enabled ? held : { $or: [held, { claimedBy: null, nextAttemptAt: { $gt: new Date() } }] };
      await this.deliveries.updateMany({ webhookId: updated._id, status: 'pending', ...waiting }, { $set: { nextAttemptAt: new Date() } });
    }
    await this.changed(actor, 'webhook_updated', `Webhook "${updated.name}" updated`, 200);
    return updated;
  }

  /** Deletes the hook and its deliveries (queued ones are not sent). */
  async delete(id: string, actor: WebhookActor): Promise<WebhookDoc> {
    const current = await this.get(id);
    await this.assertMayChange(current, actor);
    const deleted = await this.hooks.deleteOne({ _id: current._id });
    if (!deleted) throw notFound('Webhook not found');
    await this.deliveries.deleteMany({ webhookId: deleted._id });
    await this.changed(actor, 'webhook_deleted', `Webhook "${deleted.name}" deleted`, 200);
    return deleted;
  }

  /**
   * 403 unless the actor may read users, when the hook follows user events or still has some of
   * their deliveries queued: whatever URL it has when they are sent receives them, so a caller
   * who could not subscribe to them may not repoint (nor rename, disable or delete) such a hook.
   * The queue is read only for such a caller.
   */
  private async assertMayChange(hook: WebhookDoc, actor: WebhookActor): Promise<void> {
    if (mayReadUsers(actor.principal)) return;
    assertMayFollow(hook.events, actor);
    const queued = await this.deliveries.findOne({ webhookId: hook._id, status: 'pending', event: { $in: USER_EVENTS } });
    if (queued) throw forbidden('Forbidden: this hook has user.* deliveries queued, which carry user records: changing it requires view or manage_users');
  }

  /** Records an attempt's outcome on the hook (no revision bump: the subscription did not change). */
  async recordAttempt(hookId: string, outcome: { ok: boolean; error: string | null; at: Date }): Promise<void> {
    const set = { lastDeliveryAt: outcome.at, lastStatus: outcome.ok ? 'ok' : 'failed', lastError: outcome.error };
    if (outcome.ok) await this.hooks.updateOne({ _id: hookId }, { $set: { ...set, consecutiveFailures: 0 } });
    else await this.hooks.updateOne({ _id: hookId }, { $set: set, $inc: { consecutiveFailures: 1 } });
  }

  /** The input validated. When it is not, its problems are listed with those of beyondSchema (field-problems.ts). */
  private validated<T extends { name?: string }>(validate: () => T, input: unknown, current: WebhookDoc | undefined): Promise<T> {
    return validatedWithAll(() => withNameNotId(validate()), input, (given, problems) => this.beyondSchema(given, problems, current));
  }

  /**
   * Headers, URL: what validation alone cannot check. `current`, the hook as stored on update: a
   * header name it has already and a URL it keeps while staying as enabled as it is are not checked
   * again (see headersToCheck and urlToCheck).
   */
  private async beyondSchema(hook: { url?: unknown; headers?: unknown; enabled?: unknown }, problems: FieldProblems, current: WebhookDoc | undefined): Promise<void> {
    if (typeof hook.headers === 'object' && hook.headers !== null) {
      for (const name of headersToCheck(hook.headers, current)) {
        if (isReservedHeader(name)) {
          problems.push({ message: `Invalid request body: headers.${name}: this header cannot be set on a webhook`, details: [{ field: `headers.${name}`, message: 'hop-by-hop, framing and X-Webhook-* headers cannot be set' }] });
        }
      }
    }
    if (typeof hook.url !== 'string' || !urlToCheck(hook, current)) return;
    try {
      await this.checkUrl(hook.url);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      problems.push({ message: `Invalid request body: url: ${message}`, details: [{ field: 'url', message }] });
    }
  }

  /** The hook as stored, once beyondSchema passes. `current`: the hook as stored, on update, whose headers a masked secret header keeps. */
  private async checked(hook: Required<WebhookInput>, current: WebhookDoc | undefined): Promise<Required<WebhookInput>> {
    const problems: FieldProblems = [];
    await this.beyondSchema(hook, problems, current);
    throwIfProblems(problems);
    const headers = keepSecretHeaders(hook.headers, current?.headers, 'headers');
    return { name: hook.name, url: hook.url, events: hook.events, filter: hook.filter ?? null, secret: hook.secret ?? null, enabled: hook.enabled, headers };
  }

  private async changed(actor: WebhookActor, action: string, message: string, statusCode: number): Promise<void> {
    await this.revisions.bump(WEBHOOK_REVISION);
    await this.audit.record({ action, message, source: actor.source ?? 'webhooks', userId: principalUserId(actor.principal), statusCode, ...actor.request });
  }
}

function duplicateName(error: unknown): unknown {
  return error instanceof DuplicateKeyError ? conflict('A webhook with this name already exists') : error;
}

/** Hop-by-hop and framing headers, and every `X-Webhook-*` name: the delivery sets those itself. */
const isReservedHeader = (name: string): boolean => RESERVED_HEADERS.has(name.toLowerCase()) || name.toLowerCase().startsWith('x-webhook-');

/**
 * The header names a save checks: those the hook does not have yet (letter case ignored). One it
 * has stays as saved, so a rule added since (X-Webhook-* refused) does not keep a hook from being
 * disabled or edited; leaving the header out removes it.
 */
function headersToCheck(headers: object, current: WebhookDoc | undefined): string[] {
  const kept = new Set(Object.keys(current?.headers ?? {}).map((name) => name.toLowerCase()));
  return Object.keys(headers).filter((name) => !kept.has(name.toLowerCase()));
}

/**
 * Whether a save checks the URL against the outbound policy: on create, when the URL changes, and
 * when the hook is enabled again. A URL the policy has refused since it was saved (the allow list
 * narrowed) so never keeps a hook from being disabled or edited; its deliveries are refused when
 * sent (the policy is checked again then).
 */
function urlToCheck(hook: { url?: unknown; enabled?: unknown }, current: WebhookDoc | undefined): boolean {
  if (!current) return true;
  return (hook.url !== undefined && hook.url !== current.url) || (hook.enabled === true && !current.enabled);
}

/** The events whose deliveries carry a user record. */
export const USER_EVENTS: readonly string[] = WEBHOOK_EVENTS.filter((event) => event.startsWith('user.'));

/** Whether a delivery of `event` (or a hook following it: `*` follows all) carries a user record. */
export const carriesUsers = (event: string): boolean => event === '*' || USER_EVENTS.includes(event);

/** Whether the principal may read users; null is the platform itself (the project sync). */
export const mayReadUsers = (principal: Principal | null): boolean => principal === null || hasAnyPermission(principal, ['view', 'manage_users']);

/**
 * `user.*` events carry user records (login, email, name, groups), which `manage_api` alone may not
 * read. So making a hook follow them (or `*`), changing or deleting a hook that does
 * (assertMayChange), and redelivering one of them (WebhookDeliveriesService.redeliver) require
 * `view` or `manage_users`. Checked on every save, like a cron job's `runAs`.
 */
function assertMayFollow(events: readonly string[], actor: WebhookActor): void {
  if (events.some(carriesUsers) && !mayReadUsers(actor.principal)) {
    throw forbidden('Forbidden: a hook following user.* events (or *) requires view or manage_users: they carry user records');
  }
}
