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
import type { PathPattern } from '../lib/paths.ts';
import type { EndpointSchema, FieldDef, JsonSchema } from '../model/field-types/index.ts';
import { filterOperators } from '../runtime/list-filter.ts';
import type { CompiledEndpoint } from '../runtime/route-table.ts';
import { inputSchema, populatedSchema, RECORD_ID_SCHEMA, recordSchema } from './field-schemas.ts';

export interface DocumentSource {
  /** The endpoints to describe (all enabled ones, or those the caller may call). */
  endpoints: readonly CompiledEndpoint[];
  /** Endpoint id → its operation name (see operation-names.ts); the same for every audience. */
  names: ReadonlyMap<string, string>;
  /** The GET definition of a collection path among `endpoints`, for populated reference shapes. */
  reader(path: string): CompiledEndpoint | undefined;
  /** Endpoint group id → its tag. */
  groups: ReadonlyMap<string, { name: string; description: string; order: number }>;
}

const UNGROUPED = 'Ungrouped';
const LIST_PARAMS = ['page', 'limit', 'sort', 'populate', 'search', 'total'];
const ref = (kind: 'schemas' | 'responses', name: string) => ({ $ref: `#/components/${kind}/${name}` });
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
    },
    required: ['success', 'error'],
  },
};

const failure = (description: string) => ({ description, content: json(ref('schemas', 'Failure')) });
const COMPONENT_RESPONSES = {
  BadRequest: failure('Invalid input: the body fails the schema (details name each field), or a query parameter is wrong'),
  Unauthorized: failure('No valid credentials: send a Bearer token or an API key'),
  Forbidden: failure('Network access rules deny the caller (`Forbidden: network access denied`), or the caller is not in an allowed group'),
  NotFound: failure('No record with this id'),
  Failure: failure('Any other failure (conflict, server error, database unavailable)'),
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
  // A record schema names the populated shapes it links to: registered as it is planned, so they
  // come before it in the document, as when the document was one object.
  const populated = (path: string): JsonSchema | undefined => {
    const reader = source.reader(path);
    if (!reader) return undefined;
    const key = `${nameOf(reader)}_populated`;
    if (!schemas.has(key)) schemas.set(key, () => populatedSchema(reader.schema.schema));
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
    if (!described.has(endpoint)) {
      described.add(endpoint);
      if (!handler) {
        recordSchema(endpoint.schema.schema, populated);
        put(`${name}_record`, () => recordSchema(endpoint.schema.schema, linked));
      }
    }
    const group = endpoint.doc.groupId ? source.groups.get(endpoint.doc.groupId) : undefined;
    const tag = group?.name ?? UNGROUPED;
    tags.add(tag);
    const alias = pattern === endpoint.pattern ? null : (endpoint.doc.apiVersion as string);
    requestBodies(endpoint, name, put);
    const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
    // A suffixed id could meet another endpoint's own name (`get_api_a` + `_by_id` is the name of
    // `GET /api/a/by/id`): the name wins, the suffixed id takes `_2`.
    const wanted = [name, item ? 'by_id' : '', alias ?? ''].filter(Boolean).join('_');
    let operationId = wanted;
    for (let n = 2; operationIds.has(operationId) || (operationId !== name && ownNames.has(operationId)); n++) operationId = `${wanted}_${n}`;
    operationIds.add(operationId);
    let methods = paths.get(path);
    if (!methods) paths.set(path, (methods = new Map()));
    methods.set(method, { endpoint, pattern, item, name, operationId, tag, alias, names });
  }

  const groupTags = [...source.groups.values()].filter((g) => tags.has(g.name)).sort((a, b) => a.order - b.order || a.name.localeCompare(b.name));
  return {
    tags: [...groupTags.map((g) => ({ name: g.name, ...(g.description ? { description: g.description } : {}) })), ...(tags.has(UNGROUPED) && !groupTags.some((g) => g.name === UNGROUPED) ? [{ name: UNGROUPED }] : [])],
    paths,
    schemas,
  };
}

function operationOf(planned: PlannedOperation): Record<string, unknown> {
  const { endpoint, pattern, item, name, operationId, tag, alias, names } = planned;
  const handler = endpoint.doc.handler.enabled;
  const idName = endpoint.pattern.paramNames.includes('id') ? 'recordId' : 'id';
  const body = requestBodies(endpoint, name, () => {})[item ? 'item' : 'collection'];
  return {
    operationId,
    summary: endpoint.doc.name + (item && endpoint.doc.method === 'GET' ? ' (one record)' : ''),
    ...(endpoint.doc.description || alias ? { description: [endpoint.doc.description, alias ? `Versioned alias (${alias}) of ${openApiPath(endpoint.pattern, item ? idName : null)}.` : ''].filter(Boolean).join('\n\n') } : {}),
    tags: [tag],
    parameters: [...pathParameters(pattern, item ? idName : null, handler, names), ...queryParameters(endpoint, item)],
    ...(body ? { requestBody: body } : {}),
    responses: responses(endpoint, name, item),
    ...(SECURITY[endpoint.doc.accessType] ? { security: SECURITY[endpoint.doc.accessType] } : {}),
    'x-dyn-endpoint-id': endpoint.doc._id,
    'x-dyn-access': endpoint.doc.accessType,
  };
}

const INFO = {
  title: 'dyn dynamic endpoints',
  version: '1',
  description: 'Endpoints defined at runtime. Success responses are `{success: true, data, meta?}`; failures are `{success: false, error, details?}`.',
};

/**
 * Writes the document's JSON text in pieces, in order — the text JSON.stringify gives of the
 * whole document: paths sorted, each path's operations and the component schemas in the order
 * they were planned. 3.1 reads the same document: it uses no construct whose meaning changed.
 */
export async function writeOpenApi(plan: OpenApiPlan, version: '3.0' | '3.1', write: (text: string) => void | Promise<void>, pause: Pause = noPause): Promise<void> {
  await write(`{"openapi":${JSON.stringify(version === '3.1' ? '3.1.0' : '3.0.3')},"info":${JSON.stringify(INFO)},"tags":${JSON.stringify(plan.tags)},"paths":{`);
  let first = true;
  let done = 0;
  for (const path of [...plan.paths.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const operations = [...(plan.paths.get(path) as Map<string, PlannedOperation>)].map(([method, planned]) => `${JSON.stringify(method)}:${JSON.stringify(operationOf(planned))}`);
    await write(`${first ? '' : ','}${JSON.stringify(path)}:{${operations.join(',')}}`);
    first = false;
    if (++done % OPERATIONS_PER_PAUSE === 0) await pause();
  }
  await write('},"components":{"schemas":{');
  first = true;
  for (const [key, make] of plan.schemas) {
    await write(`${first ? '' : ','}${JSON.stringify(key)}:${JSON.stringify(make())}`);
    first = false;
    if (++done % OPERATIONS_PER_PAUSE === 0) await pause();
  }
  await write(`},"responses":${JSON.stringify(COMPONENT_RESPONSES)},"securitySchemes":${JSON.stringify(SECURITY_SCHEMES)}}}`);
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
    params.push({ name, in: 'path', required: true, ...(handler ? { schema: { type: 'string' }, description: 'passed to the handler as params.id' } : { schema: RECORD_ID_SCHEMA, description: 'record id' }) });
  }
  return params;
}

function queryParameters(endpoint: CompiledEndpoint, item: boolean): unknown[] {
  if (endpoint.doc.handler.enabled || endpoint.doc.method !== 'GET') return [];
  const fields = endpoint.schema.schema;
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
    ...filterParameters(fields),
  ];
}

/**
 * One deepObject parameter per field: `price[gte]=5&price[lt]=20` (`field=value` is `field[eq]`).
 * Fields named like a list parameter can only be filtered with an operator and are left out.
 */
function filterParameters(fields: EndpointSchema): unknown[] {
  return Object.entries(fields)
    .filter(([name]) => !LIST_PARAMS.includes(name))
    .map(([name, def]) => {
      const operators = filterOperators(def);
      const properties = Object.fromEntries(operators.map((op) => [op, operandSchema(def, op)]));
      return {
        name,
        in: 'query',
        style: 'deepObject',
        explode: true,
        schema: { type: 'object', properties, additionalProperties: false },
        description: `filter on ${name}: ${name}=value, or ${name}[op]=value with op one of ${operators.join(', ')}; in and nin take comma-separated values${def.unique === true || def.indexed === true ? ' (indexed: eq, in and ranges read the index)' : ''}`,
      };
    });
}

function operandSchema(def: FieldDef, operator: string): JsonSchema {
  if (operator === 'exists') return { type: 'boolean' };
  if (operator === 'in' || operator === 'nin') return { type: 'string' };
  const of: FieldDef = operator === 'has' ? ((def.items as FieldDef | undefined) ?? { type: 'string' }) : def;
  if (of.type === 'number') return { type: 'number' };
  if (of.type === 'boolean') return { type: 'boolean' };
  return { type: 'string' };
}

function requestBodies(endpoint: CompiledEndpoint, name: string, put: PutSchema): { collection?: unknown; item?: unknown } {
  const method = endpoint.doc.method;
  const fields = endpoint.schema.schema;
  const body = (schema: JsonSchema, required: boolean) => ({ required, content: json(schema) });
  if (endpoint.doc.handler.enabled) {
    if (method === 'GET' || method === 'DELETE') return {};
    // A handler reads any body; a schema with fields is checked first on POST and PUT.
    const typed = (method === 'POST' || method === 'PUT') && Object.keys(fields).length > 0;
    if (typed) put(`${name}_input`, () => inputSchema(fields, method === 'PUT' ? 'replace' : 'create'));
    const schema = typed ? ref('schemas', `${name}_input`) : {};
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

function responses(endpoint: CompiledEndpoint, name: string, item: boolean): Record<string, unknown> {
  const doc = endpoint.doc;
  const errors: Record<string, unknown> = {
    '400': ref('responses', 'BadRequest'),
    ...(doc.accessType !== 'public' ? { '401': ref('responses', 'Unauthorized') } : {}),
    '403': ref('responses', 'Forbidden'),
    ...(item ? { '404': ref('responses', 'NotFound') } : {}),
    default: ref('responses', 'Failure'),
  };
  const envelope = (data: JsonSchema, list: boolean) => ({
    type: 'object',
    properties: { success: { type: 'boolean', enum: [true] }, data, ...(list ? { meta: ref('schemas', 'Meta') } : {}) },
    required: ['success', 'data', ...(list ? ['meta'] : [])],
  });
  if (doc.handler.enabled) {
    return { '200': { description: 'What the endpoint\'s JavaScript handler returns (its status and data)', content: json(envelope({}, false)) }, ...errors };
  }
  const record = ref('schemas', `${name}_record`);
  if (['POST', 'PUT', 'PATCH'].includes(doc.method)) {
    const unique = Object.entries(endpoint.schema.schema).filter(([, def]) => def.unique === true).map(([field]) => field);
    if (unique.length > 0) errors['409'] = { description: `a unique field (${unique.join(', ')}) repeats the value of another record of this path`, content: json(ref('schemas', 'Failure')) };
  }
  if (doc.method === 'GET' && !item) return { '200': { description: 'A page of records', content: json(envelope({ type: 'array', items: record }, true)) }, ...errors };
  const status = doc.method === 'POST' ? '201' : '200';
  const description = { GET: 'The record', POST: 'The created record', PUT: 'The replaced record', PATCH: 'The updated record', DELETE: 'The deleted record' }[doc.method];
  return { [status]: { description, content: json(envelope(record, false)) }, ...errors };
}
