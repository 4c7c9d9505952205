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

  /**
   * The definition whose schema a record of `resourcePath` is held to when its own was deleted:
   * one serving the path now (the records of a path are shared), a writer first (POST, PUT,
   * PATCH, then the others), then the one with more literal segments, as routing prefers. Reads
   * every definition: only a raw edit of such a record needs it.
   */
  const servingNow = async (resourcePath: string): Promise<EndpointDoc | null> => {
    let best: { endpoint: EndpointDoc; rank: number; literals: number } | null = null;
    for (const endpoint of await endpoints.all()) {
      if (endpoint.isSystem) continue;
      const pattern = parsePathPattern(endpoint.path);
      if (!paramsOf(pattern, resourcePath)) continue;
      const rank = WRITERS.indexOf(endpoint.method) === -1 ? WRITERS.length : WRITERS.indexOf(endpoint.method);
      const literals = pattern.segments.length - pattern.paramNames.length;
      if (!best || rank < best.rank || (rank === best.rank && literals > best.literals)) best = { endpoint, rank, literals };
    }
    return best?.endpoint ?? null;
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
      // The API creates records through POST definitions (a GET's schema need not hold what a
      // record must, nor its retention apply): so does this.
      if (endpoint.method !== 'POST' && !endpoint.handler.enabled) {
        throw badRequest(`Invalid document: endpointId must name a POST definition (or one with a handler): records of ${endpoint.path} are created through one, with its schema and retention`, [{ field: 'endpointId', message: `is a ${endpoint.method} definition` }]);
      }
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
      // A record whose endpoint was deleted is still served by the other definitions of its path:
      // it is held to the schema of one of them; with none left, nothing can check it.
      const endpoint = (await endpoints.get(record.endpointId).catch(() => null)) ?? (await servingNow(record.resourcePath));
      if (!endpoint) throw badRequest(`Invalid document: no definition serves ${record.resourcePath} any more, so nothing can check this record's data: delete the record instead`, [{ field: 'data', message: 'cannot be checked: no definition serves the path' }]);
      const data = await checkData(compileRecordSchema(endpoint.schema as never), changes.data);
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

/** Definitions that write records, in the order their schema is preferred for one whose own is gone. */
const WRITERS: readonly string[] = ['POST', 'PUT', 'PATCH'];

/** The parameters of a concrete path of the pattern, or null when it is not one. */
function paramsOf(pattern: PathPattern, path: unknown): Record<string, string> | null {
  if (typeof path !== 'string' || path.length > 1000) return null;
  try {
    return matchSegments(pattern, splitPath(path).map(decodeURIComponent));
  } catch {
    return null; // a malformed %-escape
  }
}
