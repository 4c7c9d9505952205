// The raw collection browser (`/api/database/...`): documents of seven collections as they are
// stored, with secrets read as `[REDACTED]`. Raw, not reckless: every write is checked against
// the collection's field table (adapter.ts) and then made by the collection's own service, so
// its invariants hold; a body is only ever data — never a filter or an update operator — and
// every create, replace, delete and clear is audited (names and ids, never values).
import { isDeepStrictEqual } from 'node:util';
import { AppError, badRequest, forbidden, notFound, type ErrorDetail } from '../../lib/errors.ts';
import { isId } from '../../lib/ids.ts';
import { hasAnyPermission, principalUserId, type Principal } from '../../model/principal.ts';
import type { Doc, Page, Store } from '../../store/types.ts';
import type { AuditLog } from '../audit-log.ts';
import type { RawActor, RawAdapter } from './adapter.ts';

export const REDACTED = '[REDACTED]';
/** Fields no table names are still read as secrets when their name says so. */
const SECRET_NAME = /(hash|secret|password|tokens?)$/i;
const MAX_DETAILS = 20;

export interface RawCollectionInfo {
  name: string;
  count: number;
}

export class RawCollectionsService {
  private readonly store: Store;
  private readonly audit: AuditLog;
  private readonly registry: ReadonlyMap<string, RawAdapter>;

  constructor(deps: { store: Store; audit: AuditLog; registry: ReadonlyMap<string, RawAdapter> }) {
    this.store = deps.store;
    this.audit = deps.audit;
    this.registry = deps.registry;
  }

  async collections(): Promise<RawCollectionInfo[]> {
    return Promise.all([...this.registry.keys()].map(async (name) => ({ name, count: await this.store.collection(name).count({}) })));
  }

  /** A page in the collection's order; `search` is an `_id` when it is 24 hex, else a substring of the adapter's text fields. */
  async list(name: string, query: { page: number; limit: number; search?: string }, reader: Principal): Promise<Page<Doc>> {
    const adapter = this.adapter(name, reader, 'read');
    const term = query.search;
    const byId = term !== undefined && isId(asRecordId(term));
    const page = await this.store.collection(name).findPage(byId ? { _id: asRecordId(term) } : {}, {
      page: query.page,
      limit: query.limit,
      sort: adapter.sort,
      ...(term !== undefined && !byId ? { search: { term, fields: adapter.searchFields } } : {}),
    });
    return { items: page.items.map((doc) => redact(adapter, doc)), total: page.total };
  }

  async get(name: string, id: string, reader: Principal): Promise<Doc> {
    const adapter = this.adapter(name, reader, 'read');
    return redact(adapter, await this.current(adapter, id));
  }

  async create(name: string, body: unknown, actor: RawActor): Promise<Doc> {
    const adapter = this.adapter(name, actor.principal, 'write');
    if (!adapter.create) throw notAllowed(adapter, 'POST', collectionMethods(adapter));
    const created = await adapter.create(this.checked(adapter, body, null), actor);
    await this.record(actor, 'database_document_created', `${name} ${created._id} (${adapter.label(created)}) created in the database browser`, 201);
    return this.reread(adapter, created);
  }

  /** PUT: the document as a whole, without `_id`; fields left out take their defaults (see adapter.ts). */
  async replace(name: string, id: string, body: unknown, actor: RawActor): Promise<Doc> {
    const adapter = this.adapter(name, actor.principal, 'write');
    if (!adapter.replace) throw notAllowed(adapter, 'PUT', documentMethods(adapter));
    const current = await this.current(adapter, id);
    const updated = await adapter.replace(current, this.checked(adapter, body, current), actor);
    await this.record(actor, 'database_document_updated', `${name} ${current._id} (${adapter.label(updated)}) updated in the database browser`, 200);
    return this.reread(adapter, updated);
  }

  async delete(name: string, id: string, actor: RawActor): Promise<Doc> {
    const adapter = this.adapter(name, actor.principal, 'write');
    if (!adapter.delete) throw notAllowed(adapter, 'DELETE', documentMethods(adapter));
    const current = await this.current(adapter, id);
    const deleted = await adapter.delete(current, actor);
    await this.record(actor, 'database_document_deleted', `${name} ${current._id} (${adapter.label(current)}) deleted in the database browser`, 200);
    // A caller who may delete but not read (logs: `manage_users` without `view_logs`) gets the id
    // only: deleting must not be a way to read what the guessable ids hold.
    const readNeeds = adapter.alsoNeeds?.read;
    if (readNeeds && !hasAnyPermission(actor.principal, readNeeds)) return { _id: deleted._id };
    return redact(adapter, deleted);
  }

  /** What a collection's path and its documents' paths take (for `Allow`); null for an unknown collection. */
  methods(name: string): { collection: string[]; document: string[] } | null {
    const adapter = this.registry.get(name);
    return adapter ? { collection: collectionMethods(adapter), document: documentMethods(adapter) } : null;
  }

  async clear(name: string, actor: RawActor): Promise<number> {
    const adapter = this.adapter(name, actor.principal, 'write');
    if (!adapter.clear) throw notAllowed(adapter, 'DELETE', collectionMethods(adapter), `${name} cannot be cleared (only endpointdatas and logs can)`);
    const removed = await adapter.clear(actor);
    await this.record(actor, 'database_collection_cleared', `${name} cleared in the database browser (${removed} document${removed === 1 ? '' : 's'})`, 200);
    return removed;
  }

  private adapter(name: string, principal: Principal, access: 'read' | 'write'): RawAdapter {
    const adapter = this.registry.get(name);
    if (!adapter) throw notFound(`Unknown collection "${name.slice(0, 64)}"`);
    const needed = adapter.alsoNeeds?.[access];
    if (needed && !hasAnyPermission(principal, needed)) throw forbidden(`Forbidden: ${access === 'read' ? 'reading' : 'changing'} ${name} requires ${needed.join(' or ')}`);
    return adapter;
  }

  private async current(adapter: RawAdapter, id: string): Promise<Doc> {
    const recordId = asRecordId(id);
    const doc = isId(recordId) ? await this.store.collection(adapter.name).findById(recordId) : null;
    if (!doc) throw notFound('Document not found');
    return doc;
  }

  /** The stored form of what a write returned (dates as ISO strings), redacted. */
  private async reread(adapter: RawAdapter, doc: Doc): Promise<Doc> {
    return redact(adapter, (await this.store.collection(adapter.name).findById(doc._id)) ?? doc);
  }

  /**
   * Checks a write body against the adapter's field table and returns what the service gets:
   * on create the fields given; on replace only the editable fields whose value changes, with
   * left-out ones at their defaults. Every problem is listed (400) before anything is written.
   */
  private checked(adapter: RawAdapter, body: unknown, current: Doc | null): Record<string, unknown> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('Invalid document: the body must be a JSON object', [{ field: '', message: 'must be a JSON object' }]);
    const details: ErrorDetail[] = [];
    const problem = (field: string, message: string) => details.push({ field: field.slice(0, 64), message });
    const given: Record<string, unknown> = {};
    for (const [field, sent] of Object.entries(body)) {
      if (sent === REDACTED) continue;
      const value = field === '_id' && typeof sent === 'string' ? asRecordId(sent) : asRecordIds(field, sent);
      if (field === '_id') {
        if (current === null || value !== current._id) problem(field, current === null ? 'is assigned by the service' : 'cannot be changed');
        continue;
      }
      const rule = Object.hasOwn(adapter.fields, field) ? adapter.fields[field] : undefined;
      if (!rule) {
        problem(field, `is not a field of ${adapter.name}`);
        continue;
      }
      const idProblem = idShape(field, value);
      if (idProblem) problem(field, idProblem);
      const unchanged = current !== null && isDeepStrictEqual(value, current[field]);
      if (rule.rule === 'secret') problem(field, 'cannot be set');
      else if (rule.rule === 'managed' && !unchanged) problem(field, current === null ? 'is set by the service' : 'is set by the service and cannot be changed');
      else if (rule.rule === 'live' && current === null) problem(field, 'is set by the service');
      else if (rule.rule === 'createOnly' && current !== null && !unchanged) problem(field, 'can only be given on create');
      else if (rule.rule === 'editable' || (rule.rule === 'createOnly' && current === null)) given[field] = value;
    }
    if (current !== null) {
      const changes: Record<string, unknown> = {};
      for (const [field, rule] of Object.entries(adapter.fields)) {
        if (rule.rule !== 'editable') continue;
        let value = given[field];
        if (value === undefined) {
          if (!Object.hasOwn(current, field) || current[field] === undefined) continue;
          if (!rule.absent) {
            problem(field, 'is required');
            continue;
          }
          value = rule.absent(given);
        }
        if (!isDeepStrictEqual(value, current[field])) changes[field] = value;
      }
      if (details.length === 0) return changes;
    }
    const first = details[0];
    if (first) throw badRequest(`Invalid document: ${first.field} ${first.message}`, details.slice(0, MAX_DETAILS));
    return given;
  }

  private record(actor: RawActor, action: string, message: string, statusCode: number): Promise<void> {
    return this.audit.record({ action, message, source: 'database', userId: principalUserId(actor.principal), statusCode, ...actor.request });
  }
}

const HEX_ID = /^[0-9a-fA-F]{24}$/;

/** An id as the store keeps it: 24 hex digits in lower case (`6B09…` is `6b09…`); anything else as given. */
function asRecordId(id: string): string {
  return HEX_ID.test(id) ? id.toLowerCase() : id;
}

/**
 * A `…Id` field's value, or each of a `…Ids` field's, converted to the record id it names: ids
 * are written in lower case, so `6B09…` becomes `6b09…` (anything else is left for idShape).
 */
function asRecordIds(field: string, value: unknown): unknown {
  const convert = (v: unknown): unknown => (typeof v === 'string' ? asRecordId(v) : v);
  if (field.endsWith('Ids')) return Array.isArray(value) ? value.map(convert) : value;
  if (field.endsWith('Id')) return convert(value);
  return value;
}

/** Fields named `…Id` hold a record id (or null), fields named `…Ids` a list of them. */
function idShape(field: string, value: unknown): string | null {
  if (field.endsWith('Ids')) return Array.isArray(value) && value.every((v) => isId(v)) ? null : 'must be a list of record ids (24 hex characters)';
  if (field.endsWith('Id')) return value === null || isId(value) ? null : 'must be a record id (24 hex characters) or null';
  return null;
}

function redact(adapter: RawAdapter, doc: Doc): Doc {
  const out: Doc = { _id: doc._id };
  for (const [field, value] of Object.entries(doc)) {
    if (field === '_id') continue;
    const rule = Object.hasOwn(adapter.fields, field) ? adapter.fields[field] : undefined;
    const secret = rule ? rule.rule === 'secret' : SECRET_NAME.test(field);
    out[field] = secret ? REDACTED : value instanceof Date ? value.toISOString() : value;
  }
  return out;
}

const collectionMethods = (adapter: RawAdapter): string[] => ['GET', 'HEAD', ...(adapter.create ? ['POST'] : []), ...(adapter.clear ? ['DELETE'] : []), 'OPTIONS'];
const documentMethods = (adapter: RawAdapter): string[] => ['GET', 'HEAD', ...(adapter.replace ? ['PUT'] : []), ...(adapter.delete ? ['DELETE'] : []), 'OPTIONS'];

function notAllowed(adapter: RawAdapter, method: string, allowed: string[], message = `${method} is not allowed on ${adapter.name}`): AppError {
  return new AppError(405, message, { headers: { Allow: allowed.join(', ') } });
}
