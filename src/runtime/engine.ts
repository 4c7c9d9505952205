// The one dispatch for every caller — live HTTP (`handle`), the /test route, MCP `tools/call` and
// cron's endpoint action (`invoke`): plain objects in, plain objects out. Order: find the
// definition → network rules → access type → validate writes → store/read or run the handler →
// respond, count the call, audit it, emit events. Failures are rendered by error-response.ts,
// the same renderer as the management routes'.
import { AppError, badRequest, notFound } from '../lib/errors.ts';
import { isId } from '../lib/ids.ts';
import type { Logger } from '../lib/logger.ts';
import { fillPattern } from '../lib/paths.ts';
import { readQuery } from '../lib/query-params.ts';
import type { EventBus } from '../events/bus.ts';
import { NETWORK_DENIED } from '../model/network-access.ts';
import type { Principal } from '../model/principal.ts';
import type { ReferenceField } from '../model/record-schema.ts';
import type { AuditLog } from '../services/audit-log.ts';
import type { DailyStats } from '../services/daily-stats.ts';
import { flattenRecord, pageMeta, type RecordsService } from '../services/records.ts';
import type { SettingsService, ActiveSettings } from '../services/settings.ts';
import { accessDenial } from './access.ts';
import type { CallCounter } from './call-counter.ts';
import { errorResponse, notServed } from './error-response.ts';
import type { HandlerCache } from './handler-cache.ts';
import { JsonText } from './json-text.ts';
import { handlerDb } from './handler-db.ts';
import { readItemPopulate, readListRequest } from './list-request.ts';
import type { RouteCache } from './route-cache.ts';
import { directMatch, type CompiledEndpoint, type RouteMatch, type RouteTable } from './route-table.ts';

/** How many reference ids of a body that failed validation are looked up, to list those that name no record. */
const MAX_REFERENCES_LOOKED_UP = 100;

/** Who is calling: audited with the call (`via`) and carried by its events. */
export type CallSource = 'http' | 'test' | 'mcp' | 'cron';

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
  /** Internal callers (cron, /test unless asked) skip network rules. */
  skipNetworkRules?: boolean | undefined;
  /** A body that could not be read (malformed, too large, not JSON): refused once the caller is admitted. */
  bodyError?: unknown;
  /** Settings already loaded for this request (HTTP loads them once per request). */
  settings?: ActiveSettings | undefined;
  /** The caller sends a JsonText body as is (HTTP); without this, bodies are plain objects. */
  acceptsJsonText?: boolean;
  /** Who is calling; 'http' when not given. */
  source?: CallSource | undefined;
}

export interface EngineResponse {
  status: number;
  /** A plain object (JsonText only for callers that accept it); null for a 204. */
  body: unknown;
  /** The definition that answered; absent when none did (404, 405). */
  endpointId?: string;
  /** Response headers beyond the body's (`Allow` on a 405, `Retry-After` on a 503). */
  headers?: Record<string, string>;
}

/** A call addressed to a definition by id, or to a method and path as a client would send it. */
export type InvokeTarget = string | { method: string; path: string };

export interface InvokeRequest {
  headers?: Record<string, string | undefined>;
  query?: Record<string, string | string[] | undefined>;
  body?: unknown;
  /** The caller's address for network rules and the audit log; default 127.0.0.1. */
  ip?: string;
  /** For an endpoint-id target: values for its `:param` segments. */
  params?: Record<string, string>;
  /** For an endpoint-id target: the record id of an item route (`P/:id`). */
  recordId?: string;
  /** For an endpoint-id target: run a disabled definition too (the /test route does). */
  includeDisabled?: boolean;
  skipNetworkRules?: boolean;
  source?: CallSource;
}

/** A resolved call: the table it was matched in, the match, and the method and path it stands for. */
export interface Call {
  table: RouteTable;
  match: RouteMatch;
  method: string;
  path: string;
}

interface Deps {
  routes: RouteCache;
  records: RecordsService;
  handlers: HandlerCache;
  settings: SettingsService;
  audit: AuditLog;
  events: EventBus;
  counter: CallCounter;
  daily: DailyStats;
  logger: Logger;
}

export class Engine {
  private readonly deps: Deps;

  constructor(deps: Deps) {
    this.deps = deps;
  }

  /** The current route table (what is served now): OpenAPI, MCP tool lists and counts read it. */
  table(): Promise<RouteTable> {
    return this.deps.routes.current();
  }

  /**
   * Live HTTP: always answers — a 404 when nothing serves the path, a 405 with `Allow` when
   * other methods do, a 204 with `Allow` for OPTIONS.
   */
  handle(request: EngineRequest): Promise<EngineResponse> {
    // Not async: when the table is known to be current (the common case) nothing is awaited here.
    const table = this.deps.routes.peek();
    if (table === null) return this.deps.routes.current().then((current) => this.dispatch(current, request));
    return this.dispatch(table, request);
  }

  private dispatch(table: RouteTable, request: EngineRequest): Promise<EngineResponse> {
    // HEAD is served as GET; the HTTP layer sends the headers without the body.
    const match = table.lookup(request.method === 'HEAD' ? 'GET' : request.method, request.path);
    if (!match) {
      const response = notServedResponse(table, request.method, request.path);
      // A method a served path does not take is a failed call on the dashboard; it names no
      // definition, so it is neither audited nor an api.error (as a path nothing serves).
      if (response.status === 405) this.deps.daily.countRequest(request.source ?? 'http', 405);
      return Promise.resolve(response);
    }
    return this.run(table, match, request);
  }

  /**
   * Where a call goes, or the AppError a caller would get instead: 404 for an unknown (or, without
   * includeDisabled, disabled) definition or a path nothing serves, 405 with `Allow`, 400 for a
   * missing `:param` value.
   */
  async resolve(target: InvokeTarget, options: Pick<InvokeRequest, 'params' | 'recordId' | 'includeDisabled'> = {}): Promise<Call> {
    if (typeof target === 'string') {
      const endpoint = await this.deps.routes.endpoint(target, { includeDisabled: options.includeDisabled === true });
      if (!endpoint) throw notFound('Endpoint not found');
      const table = this.deps.routes.peek() ?? (await this.deps.routes.current());
      const { match, path } = directMatch(endpoint, options.params ?? {}, options.recordId);
      return { table, match, method: endpoint.doc.method, path };
    }
    const method = target.method.toUpperCase();
    const table = this.deps.routes.peek() ?? (await this.deps.routes.current());
    const match = table.lookup(method === 'HEAD' ? 'GET' : method, target.path);
    if (match) return { table, match, method, path: target.path };
    const answer = notServed(method, target.path, table.methodsOf(target.path));
    throw new AppError(answer.status, answer.body?.error ?? '', { headers: answer.headers });
  }

  /**
   * A call from inside the service (the /test route, MCP, cron), through the same steps as a
   * live request. Never throws: an unknown target is a 404 response (405 with `Allow`). The body
   * is always a plain object.
   */
  async invoke(target: InvokeTarget | Call, request: InvokeRequest, principal: Principal | undefined): Promise<EngineResponse> {
    if (typeof target === 'object' && !('match' in target) && target.method.toUpperCase() === 'OPTIONS') {
      return notServedResponse(this.deps.routes.peek() ?? (await this.deps.routes.current()), 'OPTIONS', target.path);
    }
    let call: Call;
    try {
      call = typeof target === 'object' && 'match' in target ? target : await this.resolve(target, request);
    } catch (error) {
      const rendered = this.renderError(error, null, typeof target === 'string' ? `invoke ${target}` : `${target.method} ${target.path}`);
      return { status: rendered.status, body: rendered.body, ...(Object.keys(rendered.headers).length > 0 ? { headers: rendered.headers } : {}) };
    }
    const headers: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
    return this.run(call.table, call.match, {
      method: call.method,
      path: call.path,
      headers,
      query: request.query ?? {},
      body: request.body,
      ip: request.ip ?? '127.0.0.1',
      principal,
      skipNetworkRules: request.skipNetworkRules,
      source: request.source ?? 'http',
    });
  }

  private async run(table: RouteTable, match: RouteMatch, request: EngineRequest): Promise<EngineResponse> {
    let response: EngineResponse;
    try {
      const served = await this.serve(table, match, request);
      response = { status: served.status, body: served.body, endpointId: match.endpoint.doc._id };
    } catch (error) {
      response = this.failure(table, match, request, error);
    }
    this.record(match, request, response.status, response.body);
    return response;
  }

  /**
   * `handle`'s answer given at once, where it can be: a GET (or HEAD) of one record on a CRUD
   * endpoint, the route table current, no `populate`, and a store that reads without waiting.
   * Null otherwise, before anything was counted: the caller then uses `handle`. The same steps
   * in the same order as `run` → `serve` → `crud`, so the answer is the same either way.
   */
  handleNow(request: EngineRequest): EngineResponse | null {
    if (!request.acceptsJsonText || (request.method !== 'GET' && request.method !== 'HEAD') || !this.deps.records.readsNow) return null;
    const table = this.deps.routes.peek();
    if (table === null) return null;
    const match = table.lookup('GET', request.path);
    if (match === null || match.id === null || match.endpoint.doc.handler.enabled || 'populate' in request.query) return null;
    const { endpoint, id } = match;
    let response: EngineResponse;
    try {
      this.admit(endpoint, request);
      const resourcePath = resourcePathOf(match);
      if (!isId(id)) throw notFound('Record not found');
      readItemPopulate(endpoint, request.query);
      const json = this.deps.records.getJsonNow(resourcePath, id);
      if (json === undefined) return null;
      if (json === null) throw notFound('Record not found');
      response = { status: 200, body: recordText(json), endpointId: endpoint.doc._id };
    } catch (error) {
      response = this.failure(table, match, request, error);
    }
    this.record(match, request, response.status, response.body);
    return response;
  }

  /**
   * A call the HTTP layer refused before the engine saw it (a body it could not read, CSRF, a
   * failure loading settings or credentials): where a definition serves the method and path, the
   * call is counted, audited and fires `api.error` like any other failed call of that definition.
   * Nothing when none does (a path nothing serves is not a call of a definition, as in `handle`),
   * and for the rate limit's 429 only the dashboard's counts: it sheds a flood, and an audit row
   * and a webhook delivery per shed request would let the flood through to the store and to every
   * subscriber.
   * True when the call was recorded (and so audited).
   */
  async recordRefused(request: Pick<EngineRequest, 'method' | 'path' | 'ip' | 'principal' | 'settings'>, status: number, body: unknown): Promise<boolean> {
    if (status < 400 || request.method === 'OPTIONS') return false;
    const table = this.deps.routes.peek() ?? (await this.deps.routes.current());
    const match = table.lookup(request.method === 'HEAD' ? 'GET' : request.method, request.path);
    if (!match) return false;
    // A shed request still shows on the dashboard (requests and errors: a counter in memory).
    if (status === 429) {
      this.deps.daily.countRequest('http', 429);
      return false;
    }
    this.record(match, { ...request, headers: {}, query: {}, body: undefined, source: 'http' }, status, body);
    return true;
  }

  /** The response for a call that failed, rendered by the shared renderer (`Allow` on a 405). */
  private failure(table: RouteTable, match: RouteMatch, request: EngineRequest, error: unknown): EngineResponse {
    const rendered = this.renderError(error, match.endpoint, `${request.method} ${request.path}`);
    const response: EngineResponse = { status: rendered.status, body: rendered.body, endpointId: match.endpoint.doc._id };
    if (rendered.status === 405) response.headers = { ...rendered.headers, Allow: table.methodsOf(request.path).join(', ') };
    else if (rendered.headers !== undefined && Object.keys(rendered.headers).length > 0) response.headers = rendered.headers;
    return response;
  }

  /** Network rules, then the access type: throws the 403 or 401 a caller gets. */
  private admit(endpoint: CompiledEndpoint, request: EngineRequest): void {
    if (!request.skipNetworkRules && !endpoint.network.allows({ ip: request.ip, origin: request.headers.origin, referer: request.headers.referer, host: request.headers.host })) {
      throw new AppError(403, NETWORK_DENIED);
    }
    const denial = accessDenial(endpoint.doc, request.principal, request.authError);
    if (denial) throw denial;
  }

  private async serve(table: RouteTable, match: RouteMatch, request: EngineRequest): Promise<{ status: number; body: unknown }> {
    const { endpoint } = match;
    const doc = endpoint.doc;
    this.admit(endpoint, request);
    if (request.bodyError !== undefined) throw request.bodyError;
    const settings = request.settings ?? this.deps.settings.peek() ?? (await this.deps.settings.get());
    const resourcePath = resourcePathOf(match);
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
      const { options, filter, populate } = readListRequest(endpoint, request.query, settings, table.expiresRecords(endpoint.pattern.path));
      const { page, limit } = options;
      if (request.acceptsJsonText && populate.length === 0) {
        const result = await records.listJson(resourcePath, options, filter);
        return { status: 200, body: new JsonText(`{"success":true,"data":[${result.items.join(',')}],"meta":${JSON.stringify(pageMeta(page, limit, result))}}`) };
      }
      const result = await records.list(resourcePath, options, filter);
      const items = await this.populate(table, request, result.items.map(flattenRecord), populate);
      return { status: 200, body: { success: true, data: items, meta: pageMeta(page, limit, result) } };
    }
    if (method === 'GET') {
      const populate = readItemPopulate(endpoint, request.query);
      if (request.acceptsJsonText && populate.length === 0) {
        const json = await records.getJson(resourcePath, id as string);
        if (json === null) throw notFound('Record not found');
        return { status: 200, body: recordText(json) };
      }
      const record = await records.get(resourcePath, id as string);
      if (!record) throw notFound('Record not found');
      const [item] = await this.populate(table, request, [flattenRecord(record)], populate);
      return { status: 200, body: { success: true, data: item } };
    }
    readQuery(request.query, []);
    if (method === 'POST') {
      const data = await this.validRecord(endpoint, endpoint.schema.applyDefaults(request.body));
      const record = await records.create({ endpointId: endpoint.doc._id, resourcePath, data, retentionDays: endpoint.doc.retentionDays });
      return { status: 201, body: { success: true, data: flattenRecord(record) } };
    }
    if (method === 'DELETE') {
      const deleted = await records.delete(resourcePath, id as string, endpoint.doc._id);
      if (!deleted) throw notFound('Record not found');
      return { status: 200, body: { success: true, data: flattenRecord(deleted) } };
    }
    const existing = await records.get(resourcePath, id as string);
    if (!existing) throw notFound('Record not found');
    let data: Record<string, unknown>;
    if (method === 'PUT') {
      // Defaults fill omitted fields on create only (the spec's step 4): a replace keeps what it is sent.
      data = await this.validRecord(endpoint, request.body);
    } else {
      if (typeof request.body !== 'object' || request.body === null || Array.isArray(request.body)) throw badRequest('Invalid record: the body must be a JSON object');
      const patch = request.body as Record<string, unknown>;
      // Members of the stored record that the schema no longer has (a field removed since it was
      // written: schema changes never migrate data) are kept as they are, not validated: else no
      // PATCH could ever change such a record. Sent in the patch, they are refused as unknown.
      const { kept, checked } = splitByFields(existing.data, endpoint.schema.fieldNames, patch);
      data = { ...(await this.validRecord(endpoint, { ...checked, ...patch }, (field) => field in patch)), ...kept };
    }
    const updated = await records.replace(resourcePath, id as string, data, endpoint.doc._id);
    if (!updated) throw notFound('Record not found');
    return { status: 200, body: { success: true, data: flattenRecord(updated) } };
  }

  /**
   * The body as a valid record whose references (those under `under`) name records that exist;
   * else one 400 listing every problem: when the body fails validation, the references in it that
   * name no record are listed beside its other problems, not left for the next try.
   */
  private async validRecord(endpoint: CompiledEndpoint, body: unknown, under?: (field: string) => boolean): Promise<Record<string, unknown>> {
    let data: Record<string, unknown>;
    try {
      data = endpoint.schema.validate(body);
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 400 || typeof body !== 'object' || body === null || Array.isArray(body)) throw error;
      const known = error.details ?? [];
      const missing = await this.deps.records.missingReferences(endpoint.schema, body as Record<string, unknown>, { ...(under ? { under } : {}), maxValues: MAX_REFERENCES_LOOKED_UP });
      const more = missing.filter((problem) => !known.some((detail) => detail.field === problem.field)).map((problem) => problem.detail);
      if (more.length === 0) throw error;
      throw badRequest(error.message, [...known, ...more]);
    }
    await this.deps.records.assertReferencesExist(endpoint.schema, data, under ? { under } : {});
    return data;
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
    if (['POST', 'PUT'].includes(doc.method) && endpoint.schema.fieldNames.length > 0) body = endpoint.schema.validate(doc.method === 'POST' ? endpoint.schema.applyDefaults(body) : body);
    const handler = this.deps.handlers.get(doc, { memoryMb: settings.handlerMemoryMb, timeoutMs: settings.handlerTimeoutMs });
    const principal = request.principal;
    const result = await handler.run(
      {
        method: request.method.toUpperCase(),
        path: request.path,
        params: match.id === null || 'id' in match.params ? match.params : { ...match.params, id: match.id },
        recordId: match.id,
        query: Object.fromEntries(Object.entries(request.query).filter((e): e is [string, string | string[]] => e[1] !== undefined)),
        body: body ?? null,
        user: principal?.kind === 'user' ? { id: principal.userId, login: principal.login, groupIds: principal.groupIds } : null,
        headers: publicHeaders(request.headers),
      },
      handlerDb(this.deps.records, { endpointId: doc._id, resourcePath, retentionDays: doc.retentionDays, schema: endpoint.schema }, this.deps.logger),
    );
    if (result.status < 400) return { status: result.status, body: { success: true, data: result.data } };
    const data = result.data as { error?: unknown } | string | null;
    const error = typeof data === 'string' ? data : typeof data?.error === 'string' ? data.error : `Request failed with status ${result.status}`;
    return { status: result.status, body: { success: false, error, ...(data && typeof data === 'object' ? { data } : {}) } };
  }

  /** The shared renderer's answer; logs what it says to log, naming the definition or target. */
  private renderError(error: unknown, endpoint: CompiledEndpoint | null, what: string) {
    const rendered = errorResponse(error);
    if (rendered.log === 'warn') this.deps.logger.warn(`handler of ${endpoint ? `${endpoint.doc.method} ${endpoint.doc.path}` : what} failed`, { message: (error as Error).message });
    else if (rendered.log === 'error') this.deps.logger.error(`${what} failed`, { error });
    return rendered;
  }

  /**
   * Counts the call (per endpoint and per day), writes the audit entry (buffered) and emits the events webhooks listen to:
   * `endpoint.called` for a call that succeeded, `api.error` for a 4xx/5xx. They carry the
   * resourcePath besides the path asked for, so a webhook's path filter also follows calls made
   * through the versioned alias.
   */
  private record(match: RouteMatch, request: EngineRequest, status: number, body: unknown): void {
    const { counter, audit, events } = this.deps;
    const doc = match.endpoint.doc;
    const source = request.source ?? 'http';
    counter.count(doc._id);
    this.deps.daily.countRequest(source, status);
    const principal = request.principal;
    const failed = status >= 400;
    // Failures are always audited; successful calls unless auditApiCalls is off (settings not yet
    // reloaded count as on).
    const settings = request.settings ?? this.deps.settings.peek();
    if (failed || settings?.auditApiCalls !== false) audit.enqueue({
      action: failed ? 'error' : 'api_call',
      message: `${request.method} ${request.path} → ${status}${failed ? `: ${String((body as { error?: unknown }).error ?? '')}` : ''}`,
      source: 'endpoint',
      via: source,
      ip: request.ip,
      userId: principal?.kind === 'user' ? principal.userId : null,
      method: request.method,
      path: request.path,
      statusCode: status,
    });
    if (!failed) {
      if (events.has('endpoint.called')) events.emit('endpoint.called', { endpointId: doc._id, path: request.path, resourcePath: resourcePathOf(match), method: request.method, statusCode: status, source });
    } else if (events.has('api.error')) {
      events.emit('api.error', { endpointId: doc._id, path: request.path, resourcePath: resourcePathOf(match), method: request.method, statusCode: status, error: String((body as { error?: unknown }).error ?? ''), source });
    }
  }
}

/** The concrete path a match's records live under (its pattern with the `:param` values filled in). */
function resourcePathOf(match: RouteMatch): string {
  const pattern = match.endpoint.pattern;
  return pattern.paramNames.length === 0 ? pattern.path : fillPattern(pattern, match.params);
}

/** One record's stored JSON text in the response envelope, sent as it is. */
function recordText(json: string): JsonText {
  return new JsonText(`{"success":true,"data":${json}}`);
}

/** The answer for a method a path is not served with: 404, 405 with `Allow`, or 204 for OPTIONS. */
function notServedResponse(table: RouteTable, method: string, path: string): EngineResponse {
  const { status, body, headers } = notServed(method, path, table.methodsOf(path));
  return { status, body, headers };
}

/** Handlers see request headers except credentials. */
function publicHeaders(headers: EngineRequest['headers']): Record<string, string> {
  const hidden = new Set(['authorization', 'cookie', 'x-api-key', 'x-csrf-token']);
  return Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => typeof e[1] === 'string' && !hidden.has(e[0])));
}

/** A stored record's members split into those the schema has (or the patch sends) and the others. */
function splitByFields(data: Record<string, unknown>, fields: readonly string[], patch: Record<string, unknown>): { kept: Record<string, unknown>; checked: Record<string, unknown> } {
  const kept: Record<string, unknown> = {};
  const checked: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (fields.includes(key) || Object.hasOwn(patch, key)) checked[key] = value;
    else kept[key] = value;
  }
  return { kept, checked };
}
