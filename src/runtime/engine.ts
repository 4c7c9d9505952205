import { AppError, badRequest, notFound } from '../lib/errors.ts';
import { isId } from '../lib/ids.ts';
import type { Logger } from '../lib/logger.ts';
import { fillPattern } from '../lib/paths.ts';
import type { EventBus } from '../events/bus.ts';
import { NETWORK_DENIED } from '../model/network-access.ts';
import type { Principal } from '../model/principal.ts';
import type { ReferenceField } from '../model/record-schema.ts';
import { HandlerError, HandlerMemoryError, HandlerResultError, HandlerTimeoutError } from '../sandbox/handler-errors.ts';
import type { AuditLog } from '../services/audit-log.ts';
import { flattenRecord, type RecordsService } from '../services/records.ts';
import type { SettingsService, ActiveSettings } from '../services/settings.ts';
import { DuplicateKeyError, InvalidFilterError, StoreError } from '../store/types.ts';
import { accessDenial } from './access.ts';
import type { CallCounter } from './call-counter.ts';
import type { HandlerCache } from './handler-cache.ts';
import { JsonText } from './json-text.ts';
import { isFilterParam, listFilter } from './list-filter.ts';
import { handlerDb } from './handler-db.ts';
import type { RouteCache } from './route-cache.ts';
import type { CompiledEndpoint, RouteMatch, RouteTable } from './route-table.ts';

/**
 * The one dispatch for every caller (live HTTP, the /test route, later MCP and cron): plain
 * objects in, plain objects out. Order: find the definition → network rules → access type →
 * validate writes → store/read or run the handler → respond, count the call, audit it.
 */
export interface EngineRequest {
  method: string;
  path: string;
  /** Lower-case header names. */
  headers: Record<string, string | undefined>;
  query: Record<string, string | string[] | undefined>;
  body: unknown;
  ip: string;
  principal?: Principal | undefined;
  authError?: string | undefined;
  /** The /test route skips network rules unless asked to apply them. */
  skipNetworkRules?: boolean;
  /** Settings already loaded for this request (HTTP loads them once per request). */
  settings?: ActiveSettings | undefined;
  /** The caller sends a JsonText body as is (HTTP); without this, bodies are plain objects. */
  acceptsJsonText?: boolean;
}

export interface EngineResponse {
  status: number;
  /** A plain object, or JsonText when the request accepts it. */
  body: unknown;
  endpointId: string;
  /** Response headers beyond the body's (`Allow` on a 405). */
  headers?: Record<string, string>;
}

interface Deps {
  routes: RouteCache;
  records: RecordsService;
  handlers: HandlerCache;
  settings: SettingsService;
  audit: AuditLog;
  events: EventBus;
  counter: CallCounter;
  logger: Logger;
}

const LIST_PARAMS = ['page', 'limit', 'populate', 'sort', 'search'];
const ITEM_PARAMS = ['populate'];

export class Engine {
  private readonly deps: Deps;

  constructor(deps: Deps) {
    this.deps = deps;
  }

  /** Null when no enabled definition matches (the caller answers 404). */
  async dispatch(request: EngineRequest): Promise<EngineResponse | null> {
    const table = this.deps.routes.peek() ?? (await this.deps.routes.current());
    // HEAD is served as GET; the HTTP layer sends the headers without the body.
    const match = table.lookup(request.method === 'HEAD' ? 'GET' : request.method, request.path);
    if (!match) return null;
    return this.dispatchMatch(table, match, request);
  }

  /** The methods a path is served with, for `Allow` (empty when no enabled definition serves it). */
  async allowedMethods(path: string): Promise<string[]> {
    const table = this.deps.routes.peek() ?? (await this.deps.routes.current());
    return table.methodsOf(path);
  }

  async dispatchMatch(table: RouteTable, match: RouteMatch, request: EngineRequest): Promise<EngineResponse> {
    let response: EngineResponse;
    try {
      response = { ...(await this.serve(table, match, request)), endpointId: match.endpoint.doc._id };
    } catch (error) {
      response = { ...this.renderError(error, match.endpoint, request), endpointId: match.endpoint.doc._id };
      if (response.status === 405) response.headers = { Allow: table.methodsOf(request.path).join(', ') };
    }
    this.record(match.endpoint, request, response.status, response.body);
    return response;
  }

  /** Route table of this instance (for the management API's /test route). */
  table(): Promise<RouteTable> {
    return this.deps.routes.current();
  }

  private async serve(table: RouteTable, match: RouteMatch, request: EngineRequest): Promise<{ status: number; body: unknown }> {
    const { endpoint } = match;
    const doc = endpoint.doc;
    if (!request.skipNetworkRules && !endpoint.network.allows({ ip: request.ip, origin: request.headers.origin, referer: request.headers.referer, host: request.headers.host })) {
      throw new AppError(403, NETWORK_DENIED);
    }
    const denial = accessDenial(doc, request.principal, request.authError);
    if (denial) throw denial;
    const settings = request.settings ?? this.deps.settings.peek() ?? (await this.deps.settings.get());
    const resourcePath = fillPattern(endpoint.pattern, match.params);
    if (doc.handler.enabled) return this.runHandler(endpoint, match, request, resourcePath, settings);
    return this.crud(table, endpoint, match, request, resourcePath, settings);
  }

  private async crud(table: RouteTable, endpoint: CompiledEndpoint, match: RouteMatch, request: EngineRequest, resourcePath: string, settings: ActiveSettings): Promise<{ status: number; body: unknown }> {
    const { records } = this.deps;
    const method = endpoint.doc.method;
    const id = match.id;
    if (id === null && method !== 'GET' && method !== 'POST') throw new AppError(405, `${method} needs a record id: ${method} ${endpoint.pattern.path}/:id`);
    if (id !== null && method === 'POST') throw new AppError(405, `POST creates records on ${endpoint.pattern.path}, without an id`);
    if (id !== null && !isId(id)) throw notFound('Record not found');

    if (method === 'GET' && id === null) {
      const fields = endpoint.schema.schema;
      const query = readQuery(request.query, LIST_PARAMS, (name) => isFilterParam(fields, name));
      const filter = listFilter(fields, Object.fromEntries(Object.entries(query).filter(([name]) => !LIST_PARAMS.includes(name))));
      const page = positiveInt('page', query.page, 1);
      const limit = Math.min(positiveInt('limit', query.limit, settings.defaultPageSize), settings.maxPageSize);
      const populate = populateFields(endpoint, query.populate);
      const sort = sortOf(endpoint, query.sort);
      const search = searchOf(endpoint, query.search);
      const options = { page, limit, ...(sort ? { sort } : {}), ...(search ? { search } : {}), exactTotal: table.expiresRecords(endpoint.pattern.path) };
      if (request.acceptsJsonText && populate.length === 0) {
        const result = await records.listJson(resourcePath, options, filter);
        return { status: 200, body: new JsonText(`{"success":true,"data":[${result.items.join(',')}],"meta":${JSON.stringify({ page, limit, total: result.total })}}`) };
      }
      const result = await records.list(resourcePath, options, filter);
      const items = await this.populate(table, request, result.items.map(flattenRecord), populate);
      return { status: 200, body: { success: true, data: items, meta: { page, limit, total: result.total } } };
    }
    if (method === 'GET') {
      const populate = populateFields(endpoint, readQuery(request.query, ITEM_PARAMS).populate);
      if (request.acceptsJsonText && populate.length === 0) {
        const json = await records.getJson(resourcePath, id as string);
        if (json === null) throw notFound('Record not found');
        return { status: 200, body: new JsonText(`{"success":true,"data":${json}}`) };
      }
      const record = await records.get(resourcePath, id as string);
      if (!record) throw notFound('Record not found');
      const [item] = await this.populate(table, request, [flattenRecord(record)], populate);
      return { status: 200, body: { success: true, data: item } };
    }
    readQuery(request.query, []);
    if (method === 'POST') {
      const data = endpoint.schema.validate(endpoint.schema.applyDefaults(request.body));
      await this.checkReferences(endpoint.schema.referenceFields, data);
      const record = await records.create({ endpointId: endpoint.doc._id, resourcePath, data, retentionDays: endpoint.doc.retentionDays });
      return { status: 201, body: { success: true, data: flattenRecord(record) } };
    }
    if (method === 'DELETE') {
      const deleted = await records.delete(resourcePath, id as string);
      if (!deleted) throw notFound('Record not found');
      return { status: 200, body: { success: true, data: flattenRecord(deleted) } };
    }
    const existing = await records.get(resourcePath, id as string);
    if (!existing) throw notFound('Record not found');
    let data: Record<string, unknown>;
    if (method === 'PUT') {
      data = endpoint.schema.validate(endpoint.schema.applyDefaults(request.body));
      await this.checkReferences(endpoint.schema.referenceFields, data);
    } else {
      if (typeof request.body !== 'object' || request.body === null || Array.isArray(request.body)) throw badRequest('Invalid record: the body must be a JSON object');
      const patch = request.body as Record<string, unknown>;
      data = endpoint.schema.validate({ ...existing.data, ...patch });
      await this.checkReferences(endpoint.schema.referenceFields.filter((f) => f.field in patch), data);
    }
    const updated = await records.replace(resourcePath, id as string, data);
    if (!updated) throw notFound('Record not found');
    return { status: 200, body: { success: true, data: flattenRecord(updated) } };
  }

  /** A reference must name an existing record of the target path: one query per field. */
  private async checkReferences(fields: readonly ReferenceField[], data: Record<string, unknown>): Promise<void> {
    for (const field of fields) {
      const value = data[field.field];
      if (value === undefined || value === null) continue;
      const ids = (Array.isArray(value) ? value : [value]) as string[];
      const found = new Set((await this.deps.records.findByIds(field.ref, ids)).map((r) => r._id));
      const missing = ids.filter((id) => !found.has(id));
      if (missing.length > 0) {
        throw badRequest(`Invalid record: ${field.field} references a record that does not exist in ${field.ref}`, [
          { field: field.field, message: `unknown record ${missing.slice(0, 5).join(', ')} in ${field.ref}` },
        ]);
      }
    }
  }

  /**
   * Expands reference fields: one query per field for the whole page. A caller who could not
   * read the target through its own GET endpoint (access type and network rules) keeps bare ids;
   * so does a reference to a deleted record.
   */
  private async populate(table: RouteTable, request: EngineRequest, items: Record<string, unknown>[], fields: readonly ReferenceField[]): Promise<Record<string, unknown>[]> {
    for (const field of fields) {
      const reader = table.readerOf(field.ref);
      if (!reader || accessDenial(reader.doc, request.principal) !== null) continue;
      if (!request.skipNetworkRules && !reader.network.allows({ ip: request.ip, origin: request.headers.origin, referer: request.headers.referer, host: request.headers.host })) continue;
      const ids = items.flatMap((item) => {
        const value = item[field.field];
        return (Array.isArray(value) ? value : [value]).filter((v): v is string => isId(v));
      });
      const linked = new Map((await this.deps.records.findByIds(field.ref, ids)).map((r) => [r._id, { id: r._id, ...r.data }]));
      const expand = (value: unknown): unknown => (typeof value === 'string' ? (linked.get(value) ?? value) : value);
      for (const item of items) {
        const value = item[field.field];
        if (value !== undefined && value !== null) item[field.field] = Array.isArray(value) ? value.map(expand) : expand(value);
      }
    }
    return items;
  }

  private async runHandler(endpoint: CompiledEndpoint, match: RouteMatch, request: EngineRequest, resourcePath: string, settings: ActiveSettings): Promise<{ status: number; body: unknown }> {
    const doc = endpoint.doc;
    let body = request.body;
    // A schema with fields describes the request body: it is validated before the handler runs.
    if (['POST', 'PUT'].includes(doc.method) && endpoint.schema.fieldNames.length > 0) body = endpoint.schema.validate(endpoint.schema.applyDefaults(body));
    const handler = this.deps.handlers.get(doc, { memoryMb: settings.handlerMemoryMb, timeoutMs: settings.handlerTimeoutMs });
    const principal = request.principal;
    const result = await handler.run(
      {
        method: request.method.toUpperCase(),
        path: request.path,
        params: { ...match.params, ...(match.id !== null ? { id: match.id } : {}) },
        query: Object.fromEntries(Object.entries(request.query).filter((e): e is [string, string | string[]] => e[1] !== undefined)),
        body: body ?? null,
        user: principal?.kind === 'user' ? { id: principal.userId, login: principal.login, groupIds: principal.groupIds } : null,
        headers: publicHeaders(request.headers),
      },
      handlerDb(this.deps.records, { endpointId: doc._id, resourcePath, retentionDays: doc.retentionDays, schema: endpoint.schema }),
    );
    if (result.status < 400) return { status: result.status, body: { success: true, data: result.data } };
    const data = result.data as { error?: unknown } | string | null;
    const error = typeof data === 'string' ? data : typeof data?.error === 'string' ? data.error : `Request failed with status ${result.status}`;
    return { status: result.status, body: { success: false, error, ...(data && typeof data === 'object' ? { data } : {}) } };
  }

  private renderError(error: unknown, endpoint: CompiledEndpoint, request: EngineRequest): { status: number; body: unknown } {
    const fail = (status: number, message: string, details?: unknown) => ({ status, body: { success: false, error: message, ...(details ? { details } : {}) } });
    if (error instanceof AppError) return fail(error.status, error.message, error.details);
    if (error instanceof InvalidFilterError) return fail(400, error.message);
    if (error instanceof DuplicateKeyError) return fail(409, 'A record with these values already exists');
    if (error instanceof StoreError) return fail(503, error.code === 'busy' ? 'The database is busy; try again' : 'The database is unavailable');
    const where = `${endpoint.doc.method} ${endpoint.doc.path}`;
    if (error instanceof HandlerError) {
      this.deps.logger.warn(`handler of ${where} threw`, { message: error.message });
      return fail(500, error.message);
    }
    if (error instanceof HandlerTimeoutError || error instanceof HandlerMemoryError || error instanceof HandlerResultError) {
      this.deps.logger.warn(`handler of ${where} was stopped`, { message: error.message });
      return fail(500, error.message);
    }
    this.deps.logger.error(`${request.method} ${request.path} failed`, { error });
    return fail(500, 'Internal server error');
  }

  /** Counts the call, writes the audit entry (buffered) and emits the events webhooks listen to. */
  private record(endpoint: CompiledEndpoint, request: EngineRequest, status: number, body: unknown): void {
    const { counter, audit, events } = this.deps;
    const doc = endpoint.doc;
    counter.count(doc._id);
    const principal = request.principal;
    // Failures are always audited; successful calls unless auditApiCalls is off (settings not yet
    // reloaded count as on).
    const settings = request.settings ?? this.deps.settings.peek();
    if (status >= 400 || settings?.auditApiCalls !== false) audit.enqueue({
      action: status >= 400 ? 'error' : 'api_call',
      message: `${request.method} ${request.path} → ${status}${status >= 400 ? `: ${String((body as { error?: unknown }).error ?? '')}` : ''}`,
      source: 'endpoint',
      ip: request.ip,
      userId: principal?.kind === 'user' ? principal.userId : null,
      method: request.method,
      path: request.path,
      statusCode: status,
    });
    if (events.has('endpoint.called')) events.emit('endpoint.called', { endpointId: doc._id, path: request.path, method: request.method, statusCode: status });
    if (status >= 400 && events.has('api.error')) {
      events.emit('api.error', { endpointId: doc._id, path: request.path, method: request.method, statusCode: status, error: String((body as { error?: unknown }).error ?? '') });
    }
  }
}

function readQuery(query: EngineRequest['query'], allowed: readonly string[], accepts: (name: string) => boolean = () => false): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (!allowed.includes(name) && !accepts(name)) throw badRequest(`Unknown query parameter "${name.slice(0, 64)}"`, [{ field: name.slice(0, 64), message: 'is not an allowed query parameter' }]);
    if (typeof value !== 'string') throw badRequest(`Query parameter "${name}" must be given once`);
    if (value.length > 1000) throw badRequest(`Query parameter "${name}" is too long`);
    out[name] = value;
  }
  return out;
}

function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1) throw badRequest(`Query parameter "${name}" must be a positive integer`);
  return Number(raw);
}

function populateFields(endpoint: CompiledEndpoint, raw: string | undefined): ReferenceField[] {
  if (raw === undefined || raw === '' || raw === 'false') return [];
  const references = endpoint.schema.referenceFields;
  if (raw === 'true') return [...references];
  return raw.split(',').map((name) => {
    const field = references.find((f) => f.field === name.trim());
    if (!field) throw badRequest(`populate: "${name.trim().slice(0, 64)}" is not a reference field of this endpoint`);
    return field;
  });
}

function sortOf(endpoint: CompiledEndpoint, raw: string | undefined): Record<string, 1 | -1> | undefined {
  if (raw === undefined || raw === '') return undefined;
  const sort: Record<string, 1 | -1> = {};
  for (const part of raw.split(',')) {
    const descending = part.startsWith('-');
    const field = descending ? part.slice(1) : part;
    if (!endpoint.schema.fieldNames.includes(field) && !['createdAt', 'updatedAt'].includes(field)) {
      throw badRequest(`sort: "${field.slice(0, 64)}" is not a field of this endpoint`);
    }
    sort[field] = descending ? -1 : 1;
  }
  return sort;
}

/** `search=term`: a case-insensitive substring of any top-level string field. */
function searchOf(endpoint: CompiledEndpoint, raw: string | undefined): { term: string; fields: string[] } | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (raw.length > 200) throw badRequest('Query parameter "search" must be at most 200 characters');
  const fields = Object.entries(endpoint.schema.schema).filter(([, def]) => def.type === 'string').map(([name]) => name);
  if (fields.length === 0) throw badRequest('search: this endpoint has no string fields to search');
  return { term: raw.trim(), fields };
}

/** Handlers see request headers except credentials. */
function publicHeaders(headers: EngineRequest['headers']): Record<string, string> {
  const hidden = new Set(['authorization', 'cookie', 'x-api-key', 'x-csrf-token']);
  return Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => typeof e[1] === 'string' && !hidden.has(e[0])));
}
