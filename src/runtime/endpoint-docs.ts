import { versionedPath } from '../lib/paths.ts';
import type { EndpointDoc } from '../model/endpoint.ts';
import { compileRecordSchema, exampleRecord, type EndpointSchema, type FieldDef } from '../model/record-schema.ts';
import { withPathIndexes, type IndexedField } from '../model/indexed-fields.ts';
import { filterOperators } from './list-filter.ts';

/** Sample requests and structured docs generated from a definition (nothing is stored). */
const SAMPLE_ID = '6650f0c2a1b2c3d4e5f60718';
const SAMPLE_DATE = '2026-01-01T00:00:00.000Z';

function samplePath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_m, name: string) => `{${name}}`);
}

function authHeaders(doc: EndpointDoc): Record<string, string> {
  return doc.accessType === 'public' ? {} : { Authorization: 'Bearer <access token>' };
}

/** The paths the sample record's references point into (for `endpointExamples`' `recordIds`). */
export function exampleReferencePaths(doc: EndpointDoc): string[] {
  const schema = doc.schema as EndpointSchema;
  return [...new Set(compileRecordSchema(schema).referencesIn(exampleRecord(schema)).map((reference) => reference.ref))];
}

/**
 * `recordIds`: an existing record's id per referenced path. The sample body then names it, so it
 * can be sent as it is (try-it forms start from it); a path without one keeps a placeholder id.
 */
export function endpointExamples(doc: EndpointDoc, recordIds: ReadonlyMap<string, string> = new Map()): Record<string, unknown> {
  const schema = doc.schema as EndpointSchema;
  const record = exampleRecord(schema);
  for (const reference of compileRecordSchema(schema).referencesIn(record)) {
    const id = recordIds.get(reference.ref);
    if (id !== undefined) setAt(record, reference.field, id);
  }
  const stored = { _id: SAMPLE_ID, ...record, createdAt: SAMPLE_DATE, updatedAt: SAMPLE_DATE };
  const path = samplePath(doc.path);
  const itemPath = `${path}/${SAMPLE_ID}`;
  const headers = { ...authHeaders(doc), ...(['POST', 'PUT', 'PATCH'].includes(doc.method) ? { 'Content-Type': 'application/json' } : {}) };
  const examples: Record<string, unknown>[] = [];
  switch (doc.method) {
    case 'GET':
      examples.push(
        { name: 'List', request: { method: 'GET', url: `${path}?page=1&limit=20`, headers }, response: { status: 200, body: { success: true, data: [stored], meta: { page: 1, limit: 20, total: 1 } } } },
        { name: 'Get one', request: { method: 'GET', url: itemPath, headers }, response: { status: 200, body: { success: true, data: stored } } },
      );
      break;
    case 'POST':
      examples.push({ name: 'Create', request: { method: 'POST', url: path, headers, body: record }, response: { status: 201, body: { success: true, data: stored } } });
      break;
    case 'PUT':
      examples.push({ name: 'Replace', request: { method: 'PUT', url: itemPath, headers, body: record }, response: { status: 200, body: { success: true, data: stored } } });
      break;
    case 'PATCH':
      examples.push({ name: 'Update', request: { method: 'PATCH', url: itemPath, headers, body: record }, response: { status: 200, body: { success: true, data: stored } } });
      break;
    case 'DELETE':
      examples.push({ name: 'Delete', request: { method: 'DELETE', url: itemPath, headers }, response: { status: 200, body: { success: true, data: stored } } });
      break;
  }
  if (doc.handler.enabled) {
    for (const example of examples) example.note = 'A JavaScript handler produces this response; its shape is up to the handler.';
  }
  return { endpointId: doc._id, method: doc.method, path: doc.path, examples };
}

/** Sets the value at a dotted path of the sample (`lines.0.product`), which exists there. */
function setAt(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node: unknown = target;
  for (const key of keys.slice(0, -1)) node = (node as Record<string, unknown>)[key];
  (node as Record<string, unknown>)[keys.at(-1) as string] = value;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'body';
  type: string;
  required: boolean;
  description: string;
}

function describeField(def: FieldDef): string {
  const parts = [def.description ?? ''];
  if (def.type === 'reference') parts.push(`id of a record of ${String(def.ref)}`);
  if (def.defaultValue !== undefined) parts.push(`default ${JSON.stringify(def.defaultValue)}`);
  if (def.unique === true) parts.push('unique (another record of this path with the same value is a 409)');
  else if (def.indexed === true) parts.push('indexed');
  return parts.filter(Boolean).join('; ');
}

/**
 * `pathIndexes`: the fields its path indexes (the union over the path's definitions): a field
 * that another definition of the path marks indexed or unique is so here too.
 */
export function endpointDocs(doc: EndpointDoc, pathIndexes: readonly IndexedField[] = []): Record<string, unknown> {
  const schema = withPathIndexes(doc.schema as EndpointSchema, pathIndexes);
  const parameters: Parameter[] = [];
  for (const name of doc.path.match(/:([A-Za-z_][A-Za-z0-9_]*)/g) ?? []) {
    parameters.push({ name: name.slice(1), in: 'path', type: 'string', required: true, description: 'path parameter' });
  }
  const item = ['PUT', 'PATCH', 'DELETE'].includes(doc.method);
  if (item || doc.method === 'GET') parameters.push({ name: 'id', in: 'path', type: 'string', required: item, description: item ? 'record id' : 'record id (GET one record); omit to list' });
  if (doc.method === 'GET' && !doc.handler.enabled) {
    parameters.push(
      { name: 'page', in: 'query', type: 'integer', required: false, description: 'page number, from 1' },
      { name: 'limit', in: 'query', type: 'integer', required: false, description: 'records per page (capped by the maxPageSize setting)' },
      { name: 'sort', in: 'query', type: 'string', required: false, description: 'field, -field for descending; comma-separated' },
      { name: 'populate', in: 'query', type: 'string', required: false, description: 'true, or a comma-separated list of reference fields to expand' },
      { name: 'search', in: 'query', type: 'string', required: false, description: 'a case-insensitive substring of any string field' },
      { name: 'total', in: 'query', type: 'string', required: false, description: 'exact (default), estimate or none: how meta.total is counted' },
    );
    for (const [name, def] of Object.entries(schema)) {
      const operators = filterOperators(def);
      const others = operators.filter((op) => op !== 'eq');
      const indexed = def.unique === true || def.indexed === true ? ' (indexed)' : '';
      // `name=value` is `name[eq]=value`: offered only where the field's type takes eq.
      const forms = [...(operators.includes('eq') ? [`${name}=value`] : []), ...(others.length > 0 ? [`${name}[${others.join('|')}]=value`] : [])];
      parameters.push({ name, in: 'query', type: def.type, required: false, description: `filter: ${forms.join(', or ')}${indexed}` });
    }
  }
  if (['POST', 'PUT', 'PATCH'].includes(doc.method)) {
    for (const [name, def] of Object.entries(schema)) {
      parameters.push({ name, in: 'body', type: def.type, required: doc.method !== 'PATCH' && def.required === true && (doc.method === 'PUT' || def.defaultValue === undefined), description: describeField(def) });
    }
  }
  return {
    endpointId: doc._id,
    name: doc.name,
    description: doc.description,
    method: doc.method,
    path: doc.path,
    ...(doc.apiVersion ? { versionedPath: versionedPath(doc.path, doc.apiVersion) } : {}),
    accessType: doc.accessType,
    enabled: doc.enabled,
    handler: doc.handler.enabled,
    retentionDays: doc.retentionDays,
    parameters,
    fields: Object.entries(schema).map(([name, def]) => ({ name, type: def.type, required: def.required === true, indexed: def.indexed === true || def.unique === true, unique: def.unique === true, description: describeField(def) })),
  };
}
