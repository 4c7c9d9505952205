// The OpenAPI 3.0.3 document of the dynamic endpoints, built from the compiled route table (pure:
// the same input gives the same document). Which operations a definition serves:
//
// | definition          | operations                        |
// |---------------------|-----------------------------------|
// | GET P               | list `P`, read `P/{id}`           |
// | POST P              | create `P`                        |
// | PUT/PATCH/DELETE P  | `P/{id}`                          |
// | handler, method M   | M `P` and M `P/{id}`              |
//
// each also at `/api/<apiVersion>/...` when the definition has a version. Paths that differ only
// in parameter names are one path to OpenAPI: they share the names of the first in route order,
// and of two operations with the same method there, the one the engine serves is described.
// A field is described as indexed or unique when any definition of its path says so (the
// path's indexes are the union over its definitions), whichever definition is described.
// Responses: a CRUD operation has its one success status (201 for POST, else 200); a handler
// chooses its own, so its operations have the ranges `2XX` and `3XX` (`{success: true, data}`),
// the bodyless 204, 205 and 304 apart, and the handler's failures as `default`.
import type { PathPattern } from '../lib/paths.ts';
import type { EndpointSchema, JsonSchema } from '../model/field-types/index.ts';
import { withPathIndexes, type IndexedField } from '../model/indexed-fields.ts';
import type { CompiledEndpoint } from '../runtime/route-table.ts';
import { filterParameters, inputSchema, populatedSchema, RECORD_ID_SCHEMA, recordFieldParameters, recordSchema, type ShareFilterSchema } from './field-schemas.ts';
import { bounded } from './operation-names.ts';

export interface DocumentSource {
  /** The endpoints to describe (all enabled ones, or those the caller may call). */
  endpoints: readonly CompiledEndpoint[];
  /** Endpoint id → its operation name (see operation-names.ts); the same for every audience. */
  names: ReadonlyMap<string, string>;
  /** The GET definition of a collection path among `endpoints`, for populated reference shapes. */
  reader(path: string): CompiledEndpoint | undefined;
  /** Endpoint group id → its tag. */
  groups: ReadonlyMap<string, { name: string; description: string; order: number }>;
  /**
   * Path → its indexed fields, over every definition of the path (EndpointsService.indexesByPath,
   * not only `endpoints`: a caller's POST gets its 409 from a GET it cannot see, or a disabled one).
   */
  indexes: ReadonlyMap<string, readonly IndexedField[]>;
}

const UNGROUPED = 'Ungrouped';
/** The list parameters (runtime/list-request.ts): a field named like one is filtered as `name[op]=`. */
const LIST_PARAMS = ['page', 'limit', 'sort', 'populate', 'search', 'total'];
/** Filters on `_id`, `createdAt`, `updatedAt`: the same on every list, so written once. */
const RECORD_FIELD_PARAMETERS = recordFieldParameters();
const ref = (kind: 'schemas' | 'responses' | 'parameters', name: string) => ({ $ref: `#/components/${kind}/${name}` });
const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

const COMPONENT_SCHEMAS: Record<string, JsonSchema> = {
  Meta: {
    type: 'object',
    properties: {
      page: { type: 'integer', minimum: 1 },
      limit: { type: 'integer', minimum: 1 },
      total: { type: 'integer', minimum: 0, nullable: true, description: 'the number of matching records; null with `total=none`' },
      totalExact: { type: 'boolean', description: 'with `total=estimate`: whether total is exact (else a lower bound)' },
      hasMore: { type: 'boolean', description: 'with `total=none`: whether a next page has records' },
    },
    required: ['page', 'limit', 'total'],
  },
  ErrorDetail: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } }, required: ['field', 'message'] },
  Failure: {
    type: 'object',
    properties: {
      success: { type: 'boolean', enum: [false] },
      error: { type: 'string' },
      details: { type: 'array', items: ref('schemas', 'ErrorDetail'), description: 'one entry per failing field (validation failures)' },
      data: { description: 'a JavaScript handler\'s answer of 400 or more: the object (or array) it returned as data' },
    },
    required: ['success', 'error'],
  },
};

/** The success envelope around `data`; `meta` on lists. */
const envelope = (data: JsonSchema, list: boolean): JsonSchema => ({
  type: 'object',
  properties: { success: { type: 'boolean', enum: [true] }, data, ...(list ? { meta: ref('schemas', 'Meta') } : {}) },
  required: ['success', 'data', ...(list ? ['meta'] : [])],
});
const failure = (description: string) => ({ description, content: json(ref('schemas', 'Failure')) });
const COMPONENT_RESPONSES = {
  BadRequest: failure('Invalid input: the body fails the schema (details name each field), or a query parameter is wrong'),
  Unauthorized: failure('No valid credentials: send a Bearer token or an API key'),
  Forbidden: failure('Network access rules deny the caller (`Forbidden: network access denied`), or the caller is not in an allowed group'),
  NotFound: failure('No record with this id'),
  Failure: failure('Any other failure (conflict, server error, database unavailable)'),
  // A handler answers {status, data} with any status from 200 to 599 (runtime/engine.ts runHandler):
  // below 400 the engine sends `{success: true, data}` (data null when the handler gave none),
  // except for the statuses sent without a body; from 400 on `{success: false, error, data?}`.
  HandlerSuccess: {
    description: 'The JavaScript handler\'s answer with a status below 400, the status it chose (`201`, `202`, …): `{success: true, data}`, data being the JSON the handler returned (null when none)',
    content: json(envelope({ description: 'whatever JSON the handler returned as data' }, false)),
  },
  HandlerNoContent: { description: 'The handler answered 204, 205 or 304: sent without a body (its data is dropped)' },
  HandlerFailure: failure('The handler answered 400 or more (`error` from its `data.error` or a string `data`; an object `data` is passed along as `data`), a `db` write it let through clashed on a unique field (409), or it threw, ran out of time or memory, or returned an invalid result (500)'),
};
/** A handler's success responses: ranges, and the statuses in them that have no body (explicit codes win over a range). */
const HANDLER_SUCCESS = {
  '2XX': ref('responses', 'HandlerSuccess'),
  '204': ref('responses', 'HandlerNoContent'),
  '205': ref('responses', 'HandlerNoContent'),
  '3XX': ref('responses', 'HandlerSuccess'),
  '304': ref('responses', 'HandlerNoContent'),
};

const SECURITY_SCHEMES = {
  bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Access token from POST /api/auth/login' },
  apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key; `Authorization: ApiKey <key>` is accepted as well' },
};

/** Who may call, by access type (API keys are not members of any group). */
const SECURITY: Record<string, unknown[] | undefined> = {
  public: undefined,
  authenticated: [{ bearerAuth: [] }, { apiKey: [] }],
  group: [{ bearerAuth: [] }],
};

/**
 * The document, planned first and written afterwards. At 10,000 endpoints it is tens of megabytes:
 * as one object tree (then one string) it took several times that in heap. The plan keeps, per
 * operation, only what was decided (path, operationId, parameter names, tag) and per component
 * schema how to make it; writing makes each operation and schema, turns it into JSON text and
 * hands the text on, one at a time. `pause` is awaited every few hundred operations, so neither
 * step holds the event loop for long.
 */
export interface OpenApiPlan {
  tags: unknown[];
  /** Path → method → the operation to write; paths are sorted when written. */
  paths: Map<string, Map<string, PlannedOperation>>;
  /** Component schema name → how to make it, in the order they were first described. */
  schemas: Map<string, () => JsonSchema>;
}

interface PlannedOperation {
  endpoint: CompiledEndpoint;
  pattern: PathPattern;
  item: boolean;
  name: string;
  operationId: string;
  tag: string;
  alias: string | null;
  /** The parameter names of the document's path (positional). */
  names: string[];
  /** The endpoint's fields, its path's indexes marked (withPathIndexes). */
  fields: EndpointSchema;
}

const OPERATIONS_PER_PAUSE = 200;
type Pause = () => Promise<void>;
const noPause: Pause = async () => {};

export async function planOpenApi(source: DocumentSource, pause: Pause = noPause): Promise<OpenApiPlan> {
  const schemas = new Map<string, () => JsonSchema>(Object.entries(COMPONENT_SCHEMAS).map(([key, schema]) => [key, () => schema]));
  const paths = new Map<string, Map<string, PlannedOperation>>();
  const shapes = new Map<string, string>();
  const tags = new Set<string>();
  const nameOf = (endpoint: CompiledEndpoint) => source.names.get(endpoint.doc._id) ?? endpoint.doc._id;
  const fieldsOf = (endpoint: CompiledEndpoint) => withPathIndexes(endpoint.schema.schema, source.indexes.get(endpoint.doc.path));
  // A record schema names the populated shapes it links to: registered as it is planned, so they
  // come before it in the document, as when the document was one object.
  const populated = (path: string): JsonSchema | undefined => {
    const reader = source.reader(path);
    if (!reader) return undefined;
    const key = `${nameOf(reader)}_populated`;
    if (!schemas.has(key)) schemas.set(key, () => populatedSchema(fieldsOf(reader)));
    return ref('schemas', key);
  };
  const linked = (path: string): JsonSchema | undefined => (source.reader(path) ? ref('schemas', `${nameOf(source.reader(path) as CompiledEndpoint)}_populated`) : undefined);
  const put: PutSchema = (key, make) => schemas.set(key, make);

  // Every operation, in the route table's order of precedence for a concrete path: collection
  // routes before item routes, then more literal segments, then creation order.
  const operations = source.endpoints.flatMap((endpoint, index) =>
    [endpoint.pattern, ...endpoint.aliases].flatMap((pattern) => operationsOf(endpoint).map(({ item }) => ({ endpoint, index, pattern, item }))),
  );
  operations.sort((a, b) => Number(a.item) - Number(b.item) || literalCount(b.pattern) - literalCount(a.pattern) || a.index - b.index);
  const described = new Set<CompiledEndpoint>();
  const operationIds = new Set<string>();
  const ownNames = new Set(source.names.values()); // every endpoint's, so ids do not vary by audience

  let done = 0;
  for (const { endpoint, pattern, item } of operations) {
    if (++done % OPERATIONS_PER_PAUSE === 0) await pause();
    const name = nameOf(endpoint);
    const handler = endpoint.doc.handler.enabled;
    const idName = endpoint.pattern.paramNames.includes('id') ? 'recordId' : 'id';
    const own = openApiPath(pattern, item ? idName : null);
    // Paths that differ only in parameter names are one path to OpenAPI: use the first one's names.
    const shape = own.replace(/\{[^}]+\}/g, '{}');
    const path = shapes.get(shape) ?? own;
    const method = endpoint.doc.method.toLowerCase();
    if (paths.get(path)?.has(method)) continue; // the engine serves this path with the earlier operation
    shapes.set(shape, path);
    const fields = fieldsOf(endpoint);
    if (!described.has(endpoint)) {
      described.add(endpoint);
      if (!handler) {
        recordSchema(fields, populated);
        put(`${name}_record`, () => recordSchema(fields, linked));
      }
    }
    const group = endpoint.doc.groupId ? source.groups.get(endpoint.doc.groupId) : undefined;
    const tag = group?.name ?? UNGROUPED;
    tags.add(tag);
    const alias = pattern === endpoint.pattern ? null : (endpoint.doc.apiVersion as string);
    requestBodies(endpoint, fields, name, put);
    const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
    // A suffixed id could meet another endpoint's own name (`get_api_a` + `_by_id` is the name of
    // `GET /api/a/by/id`): the name wins, the suffixed id takes `_2`.
    // Bounded again with its suffixes: a name near the limit plus `_by_id` would pass it.
    const wanted = [name, item ? 'by_id' : '', alias ?? ''].filter(Boolean).join('_');
    let operationId = bounded(wanted);
    for (let n = 2; operationIds.has(operationId) || (operationId !== name && ownNames.has(operationId)); n++) operationId = bounded(`${wanted}_${n}`);
    operationIds.add(operationId);
    let methods = paths.get(path);
    if (!methods) paths.set(path, (methods = new Map()));
    methods.set(method, { endpoint, pattern, item, name, operationId, tag, alias, names, fields });
  }

  const groupTags = [...source.groups.values()].filter((g) => tags.has(g.name)).sort((a, b) => a.order - b.order || a.name.localeCompare(b.name));
  return {
    tags: [...groupTags.map((g) => ({ name: g.name, ...(g.description ? { description: g.description } : {}) })), ...(tags.has(UNGROUPED) && !groupTags.some((g) => g.name === UNGROUPED) ? [{ name: UNGROUPED }] : [])],
    paths,
    schemas,
  };
}

function operationOf(planned: PlannedOperation, share: ShareFilterSchema): Record<string, unknown> {
  const { endpoint, pattern, item, name, operationId, tag, alias, names, fields } = planned;
  const handler = endpoint.doc.handler.enabled;
  const idName = endpoint.pattern.paramNames.includes('id') ? 'recordId' : 'id';
  const body = requestBodies(endpoint, fields, name, () => {})[item ? 'item' : 'collection'];
  return {
    operationId,
    summary: endpoint.doc.name + (item && endpoint.doc.method === 'GET' ? ' (one record)' : ''),
    ...(endpoint.doc.description || alias ? { description: [endpoint.doc.description, alias ? `Versioned alias (${alias}) of ${openApiPath(endpoint.pattern, item ? idName : null)}.` : ''].filter(Boolean).join('\n\n') } : {}),
    tags: [tag],
    parameters: [...pathParameters(pattern, item ? idName : null, handler, names), ...queryParameters(endpoint, fields, item, share)],
    ...(body ? { requestBody: body } : {}),
    responses: responses(endpoint, fields, name, item),
    ...(SECURITY[endpoint.doc.accessType] ? { security: SECURITY[endpoint.doc.accessType] } : {}),
    'x-dyn-endpoint-id': endpoint.doc._id,
    'x-dyn-access': endpoint.doc.accessType,
  };
}

const INFO = {
  title: 'dyn dynamic endpoints',
  version: '1',
  description: 'Endpoints defined at runtime. Success responses are `{success: true, data, meta?}`; failures are `{success: false, error, details?}`. An endpoint served by a JavaScript handler answers the status the handler chose (any `2XX` or `3XX`, with `{success: true, data}`; 204, 205 and 304 without a body) and fails with `{success: false, error, data?}`.',
};

/**
 * Writes the document's JSON text in pieces, in order — the text JSON.stringify gives of the
 * whole document: paths sorted, each path's operations and the component schemas in the order
 * they were planned. The 3.1 document is the 3.0 one with its schemas in 3.1's JSON Schema
 * (schema31: `nullable: true` becomes a `null` type); nothing else it uses changed meaning.
 */
export async function writeOpenApi(plan: OpenApiPlan, version: '3.0' | '3.1', write: (text: string) => void | Promise<void>, pause: Pause = noPause): Promise<void> {
  const v31 = version === '3.1';
  const schemaText = (schema: JsonSchema) => JSON.stringify(v31 ? schema31(schema) : schema);
  const withSchemasText = (value: unknown) => JSON.stringify(v31 ? schemasTo31(value) : value);
  // Filter schemas, one per distinct schema (`Filter_string`, …), written after the planned ones.
  const filters = new Map<string, { name: string; schema: JsonSchema }>();
  const filterNames = new Set<string>();
  const share: ShareFilterSchema = (kind, schema) => {
    const key = JSON.stringify(schema);
    let known = filters.get(key);
    if (!known) {
      let name = `Filter_${kind}`;
      for (let n = 2; filterNames.has(name); n++) name = `Filter_${kind}_${n}`;
      filterNames.add(name);
      filters.set(key, (known = { name, schema }));
    }
    return ref('schemas', known.name);
  };
  await write(`{"openapi":${JSON.stringify(v31 ? '3.1.0' : '3.0.3')},"info":${JSON.stringify(INFO)},"tags":${JSON.stringify(plan.tags)},"paths":{`);
  let first = true;
  let done = 0;
  for (const path of [...plan.paths.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const operations = [...(plan.paths.get(path) as Map<string, PlannedOperation>)].map(([method, planned]) => `${JSON.stringify(method)}:${withSchemasText(operationOf(planned, share))}`);
    await write(`${first ? '' : ','}${JSON.stringify(path)}:{${operations.join(',')}}`);
    first = false;
    if (++done % OPERATIONS_PER_PAUSE === 0) await pause();
  }
  await write('},"components":{"schemas":{');
  first = true;
  for (const [key, make] of plan.schemas) {
    await write(`${first ? '' : ','}${JSON.stringify(key)}:${schemaText(make())}`);
    first = false;
    if (++done % OPERATIONS_PER_PAUSE === 0) await pause();
  }
  for (const { name, schema } of filters.values()) await write(`${first ? '' : ','}${JSON.stringify(name)}:${schemaText(schema)}`);
  await write(`},"responses":${withSchemasText(COMPONENT_RESPONSES)},"parameters":${withSchemasText(RECORD_FIELD_PARAMETERS)},"securitySchemes":${JSON.stringify(SECURITY_SCHEMES)}}}`);
}

/**
 * A schema as OpenAPI 3.1 (JSON Schema 2020-12) reads it: `nullable` is gone there, so
 * `{type: T, nullable: true}` becomes `{type: [T, "null"]}` (a schema without a type: `anyOf` it
 * and `null`). Walks subschemas only, never values (`default`, `example`, `enum`), and copies
 * only what changes.
 */
function schema31(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  let out: JsonSchema | undefined;
  const set = (key: string, value: unknown) => {
    if (value !== schema[key]) (out ??= { ...schema })[key] = value;
  };
  if (isObject(schema.properties)) set('properties', mapChanged(schema.properties, schema31));
  for (const key of ['items', 'additionalProperties', 'not']) if (isObject(schema[key])) set(key, schema31(schema[key]));
  for (const key of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(schema[key])) set(key, mapChanged(schema[key] as unknown[], schema31));
  if (!('nullable' in schema)) return out ?? schema;
  const { nullable, ...rest } = out ?? schema;
  if (nullable !== true) return rest;
  return typeof rest.type === 'string' ? { ...rest, type: [rest.type, 'null'] } : { anyOf: [rest, { type: 'null' }] };
}

/** Every `schema` below this part of the document (parameters, bodies, responses) as 3.1 reads it. */
function schemasTo31(value: unknown): unknown {
  if (Array.isArray(value)) return mapChanged(value, schemasTo31);
  if (!isObject(value)) return value;
  return mapChanged(value, (child, key) => (key === 'schema' ? schema31(child) : schemasTo31(child)));
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `fn` over an array's items or an object's values; the same array or object when none changes. */
function mapChanged<T extends unknown[] | Record<string, unknown>>(value: T, fn: (child: unknown, key: string) => unknown): T {
  let out: T | undefined;
  for (const [key, child] of Object.entries(value)) {
    const mapped = fn(child, key);
    if (mapped !== child) ((out ??= (Array.isArray(value) ? [...value] : { ...value }) as T) as Record<string, unknown>)[key] = mapped;
  }
  return out ?? value;
}

/** The whole document as an object, for callers that want one (the server writes it as text: OpenApiDocs). */
export async function buildOpenApi(source: DocumentSource, version: '3.0' | '3.1' = '3.0'): Promise<Record<string, unknown>> {
  const pieces: string[] = [];
  await writeOpenApi(await planOpenApi(source), version, (text) => void pieces.push(text));
  return JSON.parse(pieces.join('')) as Record<string, unknown>;
}

type PutSchema = (key: string, make: () => JsonSchema) => void;

function literalCount(pattern: PathPattern): number {
  return pattern.segments.filter((s) => 'literal' in s).length;
}

function operationsOf(endpoint: CompiledEndpoint): Array<{ item: boolean }> {
  const method = endpoint.doc.method;
  if (endpoint.doc.handler.enabled || method === 'GET') return [{ item: false }, { item: true }];
  return [{ item: method !== 'POST' }];
}

/** `/api/shop/:shopId/items` → `/api/shop/{shopId}/items`, plus `/{id}` for item routes. */
function openApiPath(pattern: PathPattern, idName: string | null): string {
  const base = pattern.segments.map((s) => ('literal' in s ? s.literal : `{${s.param}}`)).join('/');
  return `/${base}${idName ? `${base ? '/' : ''}{${idName}}` : ''}`;
}

/**
 * Path parameters, named as in the document's path (`names`, positional). The last segment of an
 * item route is a record id, or for a handler whatever the handler reads there.
 */
function pathParameters(pattern: PathPattern, idName: string | null, handler: boolean, names: readonly string[]): unknown[] {
  const params: unknown[] = pattern.paramNames.map((name, i) => ({ name: names[i] ?? name, in: 'path', required: true, schema: { type: 'string' }, description: 'path parameter' }));
  if (idName) {
    const name = names[pattern.paramNames.length] ?? idName;
    params.push({ name, in: 'path', required: true, ...(handler ? { schema: { type: 'string' }, description: idName === 'id' ? 'passed to the handler as recordId and params.id' : 'passed to the handler as recordId' } : { schema: RECORD_ID_SCHEMA, description: 'record id' }) });
  }
  return params;
}

function queryParameters(endpoint: CompiledEndpoint, fields: EndpointSchema, item: boolean, share: ShareFilterSchema): unknown[] {
  if (endpoint.doc.handler.enabled || endpoint.doc.method !== 'GET') return [];
  const references = endpoint.schema.referenceFields.map((r) => r.field);
  const populate = references.length > 0
    ? [{ name: 'populate', in: 'query', schema: { type: 'string' }, description: `\`true\` expands every reference field into the linked record; or a comma-separated list of: ${references.join(', ')}` }]
    : [];
  if (item) return populate;
  const strings = Object.entries(fields).filter(([, def]) => def.type === 'string').map(([name]) => name);
  return [
    { name: 'page', in: 'query', schema: { type: 'integer', minimum: 1, default: 1 }, description: 'page number, from 1' },
    { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1 }, description: 'records per page (default: the defaultPageSize setting; capped by maxPageSize)' },
    { name: 'sort', in: 'query', schema: { type: 'string' }, description: 'comma-separated fields (createdAt, updatedAt or schema fields); `-field` for descending' },
    ...populate,
    ...(strings.length > 0 ? [{ name: 'search', in: 'query', schema: { type: 'string', maxLength: 200 }, description: `a case-insensitive substring of any of: ${strings.join(', ')}` }] : []),
    { name: 'total', in: 'query', schema: { type: 'string', enum: ['exact', 'estimate', 'none'], default: 'exact' }, description: 'how meta.total is counted: exact; estimate (counts at most 10,000 matches past the page, meta.totalExact says whether it is exact); none (total is null, meta.hasMore says whether a next page has records)' },
    ...filterParameters(fields, LIST_PARAMS, share),
    ...Object.keys(RECORD_FIELD_PARAMETERS).map((key) => ref('parameters', key)),
  ];
}

/** What a handler without fields reads: any JSON object or array (a scalar body is a 400, as for every route). */
const ANY_BODY: JsonSchema = { oneOf: [{ type: 'object' }, { type: 'array', items: {} }], description: 'any JSON object or array' };

function requestBodies(endpoint: CompiledEndpoint, fields: EndpointSchema, name: string, put: PutSchema): { collection?: unknown; item?: unknown } {
  const method = endpoint.doc.method;
  const body = (schema: JsonSchema, required: boolean) => ({ required, content: json(schema) });
  if (endpoint.doc.handler.enabled) {
    if (method === 'GET' || method === 'DELETE') return {};
    // A handler reads any body; a schema with fields is checked first on POST and PUT.
    const typed = (method === 'POST' || method === 'PUT') && Object.keys(fields).length > 0;
    if (typed) put(`${name}_input`, () => inputSchema(fields, method === 'PUT' ? 'replace' : 'create'));
    const schema = typed ? ref('schemas', `${name}_input`) : ANY_BODY;
    return { collection: body(schema, typed), item: body(schema, typed) };
  }
  if (method === 'POST' || method === 'PUT') {
    put(`${name}_input`, () => inputSchema(fields, method === 'PUT' ? 'replace' : 'create'));
    return method === 'POST' ? { collection: body(ref('schemas', `${name}_input`), true) } : { item: body(ref('schemas', `${name}_input`), true) };
  }
  if (method === 'PATCH') {
    put(`${name}_patch`, () => inputSchema(fields, 'patch'));
    return { item: body(ref('schemas', `${name}_patch`), true) };
  }
  return {};
}

function responses(endpoint: CompiledEndpoint, fields: EndpointSchema, name: string, item: boolean): Record<string, unknown> {
  const doc = endpoint.doc;
  const access = {
    '400': ref('responses', 'BadRequest'),
    ...(doc.accessType !== 'public' ? { '401': ref('responses', 'Unauthorized') } : {}),
    '403': ref('responses', 'Forbidden'),
  };
  // The handler picks the status: no fixed 200 or 201, and no 404 of the engine's own (it looks
  // up no record for a handler); whatever else the handler answers is its failure (`default`).
  if (doc.handler.enabled) return { ...HANDLER_SUCCESS, ...access, default: ref('responses', 'HandlerFailure') };
  const errors: Record<string, unknown> = {
    ...access,
    ...(item ? { '404': ref('responses', 'NotFound') } : {}),
    default: ref('responses', 'Failure'),
  };
  const record = ref('schemas', `${name}_record`);
  if (['POST', 'PUT', 'PATCH'].includes(doc.method)) {
    const unique = Object.entries(fields).filter(([, def]) => def.unique === true).map(([field]) => field);
    if (unique.length > 0) errors['409'] = { description: `a unique field (${unique.join(', ')}) repeats the value of another record of this path`, content: json(ref('schemas', 'Failure')) };
  }
  if (doc.method === 'GET' && !item) return { '200': { description: 'A page of records', content: json(envelope({ type: 'array', items: record }, true)) }, ...errors };
  const status = doc.method === 'POST' ? '201' : '200';
  const description = { GET: 'The record', POST: 'The created record', PUT: 'The replaced record', PATCH: 'The updated record', DELETE: 'The deleted record' }[doc.method];
  return { [status]: { description, content: json(envelope(record, false)) }, ...errors };
}
