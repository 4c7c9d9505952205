import { createHash, randomBytes } from 'node:crypto';
import bcrypt from 'bcryptjs';
import { badRequest, forbidden, notFound } from '../lib/errors.ts';
import { isId } from '../lib/ids.ts';
import type { EventBus } from '../events/bus.ts';
import { PERMISSIONS, type Permission } from '../model/permissions.ts';
import type { CallerActor } from '../model/actor.ts';
import { assertHolds, type Principal } from '../model/principal.ts';
import type { AuditLog } from './audit-log.ts';
import { assertNoIdOnCreate, assertShownUnchanged, setShownFieldsAside } from './shown-fields.ts';
import type { ApiKeyDoc } from '../model/records.ts';
import { compileValidator } from '../model/validation.ts';
import type { Page, Store } from '../store/types.ts';

/**
 * API keys: `dyn_<keyId>_<secret>`. Only a bcrypt hash of the whole key is stored, with the
 * non-secret keyId to find it. A verified key is cached by the SHA-256 of the presented text
 * together with the document's `version`; every request still reads the key document (one
 * indexed lookup), so a change or revocation on any instance applies on the next request,
 * while bcrypt runs only on a cache miss.
 */
export interface ApiKeyInput {
  name: string;
  permissions: Permission[];
  expiresAt?: string | null;
}

const properties = {
  name: { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' },
  permissions: { type: 'array', maxItems: PERMISSIONS.length, uniqueItems: true, items: { enum: [...PERMISSIONS] } },
  expiresAt: { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] },
};
const validateCreate = compileValidator<ApiKeyInput>({
  type: 'object',
  additionalProperties: false,
  required: ['name', 'permissions'],
  properties,
});
const validateUpdate = compileValidator<Partial<ApiKeyInput>>({ type: 'object', additionalProperties: false, properties });
/** What a key is shown with and the service keeps: ignored when sent back (shown-fields.ts). */
const SHOWN_KEPT = ['prefix', 'lastUsedAt', 'createdBy', 'createdAt', 'updatedAt'];

const KEY_PATTERN = /^dyn_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;
const CACHE_TTL_MS = 5 * 60_000;
const USE_AUDIT_INTERVAL_MS = 60_000;

export interface PublicApiKey {
  _id: string;
  name: string;
  prefix: string;
  permissions: string[];
  expiresAt: string | null;
  lastUsedAt: string | null;
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
}

export function publicApiKey(doc: ApiKeyDoc): PublicApiKey {
  return {
    _id: doc._id,
    name: doc.name,
    prefix: `dyn_${doc.keyId}`,
    permissions: doc.permissions,
    expiresAt: doc.expiresAt ? String(doc.expiresAt) : null,
    lastUsedAt: doc.lastUsedAt ? String(doc.lastUsedAt) : null,
    createdBy: doc.createdBy,
    createdAt: String(doc.createdAt),
    updatedAt: String(doc.updatedAt),
  };
}

export interface VerifiedKey {
  principal: Principal & { kind: 'apiKey' };
  /** True when this use should be written to the audit log (at most once a minute per key). */
  auditUse: boolean;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export class ApiKeysService {
  private readonly verified = new Map<string, { keyId: string; version: number; cachedAt: number }>();
  private readonly store: Store;
  private readonly events: EventBus;
  private readonly rounds: number;
  private readonly audit: AuditLog;

  constructor(deps: { store: Store; events: EventBus; bcryptRounds: number; audit: AuditLog }) {
    this.store = deps.store;
    this.events = deps.events;
    this.rounds = deps.bcryptRounds;
    this.audit = deps.audit;
  }

  private get keys() {
    return this.store.collection<ApiKeyDoc>('apikeys');
  }

  list(query: { page: number; limit: number; search?: string }): Promise<Page<ApiKeyDoc>> {
    return this.keys.findPage({}, {
      page: query.page,
      limit: query.limit,
      sort: { createdAt: -1 },
      ...(query.search ? { search: { term: query.search, fields: ['name'] } } : {}),
    });
  }

  async get(id: string): Promise<ApiKeyDoc> {
    const key = isId(id) ? await this.keys.findById(id) : null;
    if (!key) throw notFound('API key not found');
    return key;
  }

  async create(input: unknown, actor: CallerActor): Promise<{ doc: ApiKeyDoc; key: string }> {
    const creator = actor.principal;
    const { rest, shown } = setShownFieldsAside(input, ['_id'], SHOWN_KEPT);
    assertNoIdOnCreate(shown);
    const valid = validateCreate(rest);
    // A caller cannot mint a key stronger than itself.
    assertHolds(creator, valid.permissions, 'grant');
    assertWithinOwnLife(creator, valid.expiresAt ?? null);
    const expiresAt = parseExpiry(valid.expiresAt);
    const keyId = randomBytes(6).toString('hex');
    const key = `dyn_${keyId}_${randomBytes(32).toString('base64url')}`;
    const now = new Date();
    const doc = await this.keys.insertOne({
      keyId,
      keyHash: await bcrypt.hash(key, this.rounds),
      name: valid.name.trim(),
      permissions: valid.permissions,
      expiresAt,
      lastUsedAt: null,
      createdBy: creator.kind === 'user' ? creator.userId : null,
      version: 1,
      createdAt: now,
      updatedAt: now,
    });
    this.events.emit('apikey.created', { id: doc._id, name: doc.name });
    await this.audit.change(actor, { action: 'api_key_created', message: `API key "${doc.name}" created`, source: 'api-keys', statusCode: 201 });
    return { doc, key };
  }

  async update(id: string, input: unknown, actor: CallerActor): Promise<ApiKeyDoc> {
    const { rest, shown } = setShownFieldsAside(input, ['_id'], SHOWN_KEPT);
    const valid = validateUpdate(rest);
    const current = await this.get(id);
    assertShownUnchanged(shown, current);
    // Sent back as they are (a client saving the key it read), permissions grant nothing new and
    // an expiry already past is no new expiry: neither is checked again.
    const samePermissions = valid.permissions !== undefined && [...valid.permissions].sort().join() === [...current.permissions].sort().join();
    const sameExpiry = valid.expiresAt !== undefined && (valid.expiresAt === null ? current.expiresAt === null : current.expiresAt !== null && Date.parse(valid.expiresAt) === new Date(current.expiresAt).getTime());
    if (valid.permissions && !samePermissions) assertHolds(actor.principal, valid.permissions, 'grant');
    // Nor lengthen the life of a key stronger than itself (a later expiry, none, or reviving an
    // expired one). Renaming it, shortening its life or revoking it takes no power from anyone's reach.
    if (valid.expiresAt !== undefined && !sameExpiry && expiresLater(valid.expiresAt, current.expiresAt)) {
      assertHolds(actor.principal, current.permissions, 'extend a key holding');
    }
    if (valid.expiresAt !== undefined && !sameExpiry) assertWithinOwnLife(actor.principal, valid.expiresAt);
    const sameName = valid.name === undefined || valid.name.trim() === current.name;
    // A save that changes nothing (a client sending back what it read) writes nothing: no new
    // updatedAt, no audit entry.
    if (sameName && (valid.permissions === undefined || samePermissions) && (valid.expiresAt === undefined || sameExpiry)) return current;
    const set: Record<string, unknown> = { updatedAt: new Date() };
    if (!sameName) set.name = (valid.name as string).trim();
    if (valid.permissions !== undefined && !samePermissions) set.permissions = valid.permissions;
    if (valid.expiresAt !== undefined && !sameExpiry) set.expiresAt = parseExpiry(valid.expiresAt);
    const updated = await this.keys.updateOne({ _id: current._id }, { $set: set, $inc: { version: 1 } });
    if (!updated) throw notFound('API key not found');
    this.forget(current.keyId);
    const changed = Object.keys(set).filter((field) => field !== 'updatedAt');
    await this.audit.change(actor, { action: 'api_key_updated', message: `API key "${updated.name}" updated (${changed.join(', ')})`, source: 'api-keys' });
    return updated;
  }

  async revoke(id: string, actor: CallerActor): Promise<ApiKeyDoc> {
    const current = await this.get(id);
    await this.keys.deleteOne({ _id: current._id });
    this.forget(current.keyId);
    this.events.emit('apikey.revoked', { id: current._id, name: current.name });
    await this.audit.change(actor, { action: 'api_key_revoked', message: `API key "${current.name}" revoked`, source: 'api-keys' });
    return current;
  }

  /** The principal for a presented key, or null when the key is unknown, wrong, or expired. */
  async verify(presented: string): Promise<VerifiedKey | null> {
    const match = KEY_PATTERN.exec(presented);
    if (!match) return null;
    const doc = await this.keys.findOne({ keyId: match[1] as string });
    if (!doc) return null;
    const now = Date.now();
    if (doc.expiresAt && Date.parse(String(doc.expiresAt)) <= now) return null;

    const cacheKey = sha256(presented);
    const cached = this.verified.get(cacheKey);
    const fresh = cached && cached.keyId === doc.keyId && cached.version === doc.version && now - cached.cachedAt < CACHE_TTL_MS;
    if (!fresh) {
      if (!(await bcrypt.compare(presented, doc.keyHash))) return null;
      this.verified.set(cacheKey, { keyId: doc.keyId, version: doc.version, cachedAt: now });
    }

    let auditUse = false;
    const lastUsed = doc.lastUsedAt ? Date.parse(String(doc.lastUsedAt)) : 0;
    if (now - lastUsed >= USE_AUDIT_INTERVAL_MS) {
      // Conditional write: of several instances racing, only one records this minute's use.
      const cutoff = new Date(now - USE_AUDIT_INTERVAL_MS);
      const claimed = await this.keys.updateOne(
        { _id: doc._id, $or: [{ lastUsedAt: null }, { lastUsedAt: { $lte: cutoff } }] },
        { $set: { lastUsedAt: new Date(now) } },
      );
      auditUse = claimed !== null;
    }
    return {
      principal: { kind: 'apiKey', keyId: doc._id, name: doc.name, permissions: new Set(doc.permissions as Permission[]), expiresAt: doc.expiresAt ? new Date(doc.expiresAt).toISOString() : null },
      auditUse,
    };
  }

  private forget(keyId: string): void {
    for (const [hash, entry] of this.verified) if (entry.keyId === keyId) this.verified.delete(hash);
  }
}

/** Whether `next` (null: never) lets a key live longer than `current` does. */
/**
 * A key that expires cannot make a key, itself included, live past its own expiry: else a key
 * handed out for a week could mint or become one that never expires. 403 naming the bound.
 */
function assertWithinOwnLife(caller: Principal, expiresAt: string | null): void {
  if (caller.kind !== 'apiKey' || !caller.expiresAt) return;
  if (expiresAt !== null && Date.parse(expiresAt) <= Date.parse(caller.expiresAt)) return;
  throw forbidden(`An API key that expires cannot give a key a later expiry than its own: set expiresAt no later than ${caller.expiresAt}`);
}

function expiresLater(next: string | null, current: Date | string | null): boolean {
  if (current === null) return false;
  return next === null || Date.parse(next) > new Date(current).getTime();
}

function parseExpiry(expiresAt: string | null | undefined): Date | null {
  if (expiresAt === undefined || expiresAt === null) return null;
  const date = new Date(expiresAt);
  if (date.getTime() <= Date.now()) throw badRequest('Invalid request body: expiresAt must be in the future', [{ field: 'expiresAt', message: 'must be in the future' }]);
  return date;
}

