// Raw `endpointdatas`: records are written through RecordsService (the per-path counters behind
// list totals, columns, expiry from the endpoint's retention) after the same checks a dynamic
// POST or PUT makes: the data must fit the schema of the record's endpoint and its references
// must exist. `resourcePath` must be a path the endpoint serves.
import { badRequest } from '../../../lib/errors.ts';
import { isId } from '../../../lib/ids.ts';
import { fillPattern, matchSegments, parsePathPattern, splitPath, type PathPattern } from '../../../lib/paths.ts';
import type { EndpointDoc, RecordDoc } from '../../../model/endpoint.ts';
import { compileRecordSchema, type CompiledRecordSchema } from '../../../model/record-schema.ts';
import type { EndpointsService } from '../../endpoints.ts';
import type { RecordsService } from '../../records.ts';
import { CREATE_ONLY, editable, MANAGED, STAMPS, type RawAdapter } from '../adapter.ts';

export function recordsAdapter(records: RecordsService, endpoints: EndpointsService): RawAdapter {
  const endpointOf = async (id: unknown): Promise<EndpointDoc> => {
    const endpoint = isId(id) ? await endpoints.get(id).catch(() => null) : null;
    if (!endpoint) throw badRequest('Invalid document: endpointId must name an existing endpoint', [{ field: 'endpointId', message: 'is not an endpoint' }]);
    if (endpoint.isSystem) throw badRequest('Invalid document: system endpoints keep no records', [{ field: 'endpointId', message: 'is a system endpoint' }]);
    return endpoint;
  };

  const checkData = async (schema: CompiledRecordSchema, data: unknown): Promise<Record<string, unknown>> => {
    const valid = schema.validate(schema.applyDefaults(data));
    await records.assertReferencesExist(schema, valid, { prefix: 'data.' });
    return valid;
  };

  return {
    name: 'endpointdatas',
    searchFields: ['resourcePath', 'data.name', 'data.login', 'data.email', 'data.path', 'data.message', 'data.key', 'data.slug'],
    sort: { createdAt: 1 },
    fields: { endpointId: CREATE_ONLY, resourcePath: CREATE_ONLY, data: editable(), expiresAt: MANAGED, ...STAMPS },
    label: (doc) => String(doc.resourcePath),
    async create(input) {
      const endpoint = await endpointOf(input.endpointId);
      const pattern = parsePathPattern(endpoint.path);
      const params = input.resourcePath === undefined ? (pattern.paramNames.length === 0 ? {} : null) : paramsOf(pattern, input.resourcePath);
      if (!params) throw badRequest(`Invalid document: resourcePath must be a path of ${endpoint.path}`, [{ field: 'resourcePath', message: `must match ${endpoint.path}` }]);
      const resourcePath = fillPattern(pattern, params);
      const data = await checkData(compileRecordSchema(endpoint.schema as never), input.data);
      return records.create({ endpointId: endpoint._id, resourcePath, data, retentionDays: endpoint.retentionDays });
    },
    async replace(current, changes) {
      if (changes.data === undefined) return current;
      const record = current as RecordDoc;
      // A record whose endpoint was deleted is served by nothing: its data is kept as given.
      const endpoint = await endpoints.get(record.endpointId).catch(() => null);
      const data = endpoint ? await checkData(compileRecordSchema(endpoint.schema as never), changes.data) : plainObject(changes.data);
      const updated = await records.replace(record.resourcePath, record._id, data);
      if (!updated) throw badRequest('The record is gone');
      return updated;
    },
    async delete(current) {
      const deleted = await records.delete(String(current.resourcePath), current._id);
      return deleted ?? current;
    },
    clear: () => records.clearAll(),
  };
}

/** The parameters of a concrete path of the pattern, or null when it is not one. */
function paramsOf(pattern: PathPattern, path: unknown): Record<string, string> | null {
  if (typeof path !== 'string' || path.length > 1000) return null;
  try {
    return matchSegments(pattern, splitPath(path).map(decodeURIComponent));
  } catch {
    return null; // a malformed %-escape
  }
}

function plainObject(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('Invalid record: data must be a JSON object', [{ field: 'data', message: 'must be a JSON object' }]);
  return value as Record<string, unknown>;
}
