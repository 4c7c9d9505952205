// MCP tools: one per enabled dynamic endpoint, named like its OpenAPI operation
// (`get_api_shop_products`), described from its definition. The input schema is what an
// endpoint call needs, in one object:
//
// | key    | when                                           | holds                             |
// |--------|------------------------------------------------|-----------------------------------|
// | params | the path has `:params`                         | their values                      |
// | id     | GET (omit to list), PUT/PATCH/DELETE, handlers | the record id                     |
// | query  | GET                                            | page, limit, sort, populate, search, field filters |
// | body   | POST, PUT, PATCH                               | the record (from the field schema) |
//
// Tools are built once per route table; a caller sees those whose access type lets it in.
import type { JsonSchema } from '../model/field-types/index.ts';
import type { Principal } from '../model/principal.ts';
import { inputSchema, RECORD_ID_SCHEMA } from '../docs/field-schemas.ts';
import { visibleTo } from '../docs/openapi-docs.ts';
import { creationOrder, endpointNames } from '../docs/operation-names.ts';
import type { CompiledEndpoint, RouteTable } from '../runtime/route-table.ts';

export interface McpTool {
  name: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  endpoint: CompiledEndpoint;
}

const byTable = new WeakMap<RouteTable, McpTool[]>();

/** Every tool of a route table (whoever may call them). */
export function allTools(table: RouteTable): McpTool[] {
  let tools = byTable.get(table);
  if (!tools) {
    const names = endpointNames(table);
    tools = creationOrder(table.endpoints).map((endpoint) => toolOf(endpoint, names.get(endpoint.doc._id) as string));
    byTable.set(table, tools);
  }
  return tools;
}

/** The tools this caller may call (access type and group membership). */
export function toolsFor(table: RouteTable, principal: Principal): McpTool[] {
  const visible = new Set(visibleTo(table.endpoints, principal));
  return allTools(table).filter((tool) => visible.has(tool.endpoint));
}

/** The number of MCP tools the service offers (one per enabled dynamic endpoint), for dashboards. */
export function mcpToolCount(table: RouteTable): number {
  return allTools(table).length;
}

/** A handler's body without fields: what an HTTP call may send, a JSON object or array (a scalar there is a 400). */
const ANY_BODY: JsonSchema = { type: ['object', 'array'], description: 'any JSON object or array' };

const ACCESS = { public: 'public', authenticated: 'needs a signed-in user or an API key', group: 'for members of specific groups' };

function toolOf(endpoint: CompiledEndpoint, name: string): McpTool {
  const doc = endpoint.doc;
  const handler = doc.handler.enabled;
  const method = doc.method;
  const what = handler
    ? 'runs the endpoint\'s handler (id optional)'
    : { GET: 'lists records, or reads one when id is given', POST: 'creates a record', PUT: 'replaces a record', PATCH: 'updates fields of a record', DELETE: 'deletes a record' }[method];
  const description = [doc.description || doc.name, `${method} ${doc.path}: ${what}; ${ACCESS[doc.accessType]}.`].join('\n\n');

  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const paramNames = endpoint.pattern.paramNames;
  if (paramNames.length > 0) {
    properties.params = {
      type: 'object',
      description: `values of the path parameters of ${doc.path}`,
      properties: Object.fromEntries(paramNames.map((p) => [p, { type: 'string', minLength: 1 }])),
      required: paramNames,
      additionalProperties: false,
    };
    required.push('params');
  }
  const itemOnly = !handler && ['PUT', 'PATCH', 'DELETE'].includes(method);
  if (method !== 'POST' || handler) {
    properties.id = handler
      ? { type: 'string', minLength: 1, description: 'the last path segment, passed to the handler as params.id; omit it to call the collection path' }
      : { ...RECORD_ID_SCHEMA, description: itemOnly ? 'the record id' : 'a record id; omit it to list' };
    if (itemOnly) required.push('id');
  }
  if (method === 'GET') {
    properties.query = {
      type: 'object',
      description: handler
        ? 'query parameters for the handler'
        : 'page, limit, sort (field or -field), populate (true or reference field names), search (substring of string fields), and filters: `field` or `field[op]` (eq, ne, gt, gte, lt, lte, in, nin, has, exists) → value',
      properties: handler ? {} : { page: { type: 'integer', minimum: 1 }, limit: { type: 'integer', minimum: 1 }, sort: { type: 'string' }, populate: { type: 'string' }, search: { type: 'string' } },
      additionalProperties: { type: ['string', 'number', 'boolean'] },
    };
  }
  const fields = endpoint.schema.schema;
  if (handler && method !== 'GET' && method !== 'DELETE') properties.body = (method === 'POST' || method === 'PUT') && Object.keys(fields).length > 0 ? inputSchema(fields, method === 'PUT' ? 'replace' : 'create') : ANY_BODY;
  else if (method === 'POST' || method === 'PUT') {
    properties.body = inputSchema(fields, method === 'PUT' ? 'replace' : 'create');
    required.push('body');
  } else if (method === 'PATCH') {
    properties.body = inputSchema(fields, 'patch');
    required.push('body');
  }
  return {
    name,
    description,
    inputSchema: { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false },
    endpoint,
  };
}
