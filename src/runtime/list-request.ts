// What a read asks for in its query string, checked against the endpoint's schema: a list's
// paging, sort, populate, search and field filters (list-filter.ts); an item read's populate.
// Unknown or repeated parameters are a 400 (lib/query-params.ts).
import { badRequest } from '../lib/errors.ts';
import { positiveInt, readQuery, type RawQuery } from '../lib/query-params.ts';
import type { ReferenceField } from '../model/record-schema.ts';
import { TOTAL_MODES, type ListOptions, type TotalMode } from '../services/records.ts';
import type { ActiveSettings } from '../services/settings.ts';
import { isFilterParam, listFilter, searchFields } from './list-filter.ts';
import type { CompiledEndpoint } from './route-table.ts';

const LIST_PARAMS = ['page', 'limit', 'populate', 'sort', 'search', 'total'];
const ITEM_PARAMS = ['populate'];

export interface ListRequest {
  options: ListOptions;
  filter: Record<string, unknown>;
  populate: ReferenceField[];
}

/** A list request: `exactTotal` when the path's totals must be counted (expiring records). */
export function readListRequest(endpoint: CompiledEndpoint, raw: RawQuery, settings: ActiveSettings, exactTotal: boolean): ListRequest {
  const fields = endpoint.schema.schema;
  const query = readQuery(raw, LIST_PARAMS, { accepts: (name) => isFilterParam(fields, name) });
  const filter = listFilter(fields, Object.fromEntries(Object.entries(query).filter(([name]) => !LIST_PARAMS.includes(name))));
  const page = positiveInt('page', query.page, 1);
  const limit = Math.min(positiveInt('limit', query.limit, settings.defaultPageSize), settings.maxPageSize);
  const sort = sortOf(endpoint, query.sort);
  const search = searchOf(endpoint, query.search);
  const total = totalOf(query.total);
  return {
    options: { page, limit, ...(sort ? { sort } : {}), ...(search ? { search } : {}), exactTotal, total },
    filter,
    populate: populateFields(endpoint, query.populate),
  };
}

/** The reference fields an item read expands (`populate`). */
export function readItemPopulate(endpoint: CompiledEndpoint, raw: RawQuery): ReferenceField[] {
  return populateFields(endpoint, readQuery(raw, ITEM_PARAMS).populate);
}

function populateFields(endpoint: CompiledEndpoint, raw: string | undefined): ReferenceField[] {
  if (raw === undefined || raw === '' || raw === 'false') return [];
  const references = endpoint.schema.referenceFields;
  if (raw === 'true') return [...references];
  return raw.split(',').map((name) => {
    const field = references.find((f) => f.field === name.trim());
    if (!field) throw badRequest(`populate: "${name.trim().slice(0, 64)}" is not a reference field of this endpoint`, [{ field: 'populate', message: `"${name.trim().slice(0, 64)}" is not a reference field of this endpoint` }]);
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
      throw badRequest(`sort: "${field.slice(0, 64)}" is not a field of this endpoint`, [{ field: 'sort', message: `"${field.slice(0, 64)}" is not a field of this endpoint` }]);
    }
    // A key given twice (`title,-title`) would leave one direction silently unused.
    if (Object.hasOwn(sort, field)) throw badRequest(`sort: "${field}" is given twice`, [{ field: 'sort', message: `"${field}" is given twice` }]);
    sort[field] = descending ? -1 : 1;
  }
  return sort;
}

/** `total=exact|estimate|none`: how `meta.total` is counted (records.ts); exact by default, as the spec's clients expect. */
function totalOf(raw: string | undefined): TotalMode {
  if (raw === undefined || raw === '') return 'exact';
  const mode = TOTAL_MODES.find((known) => known === raw);
  if (!mode) throw badRequest(`Query parameter "total" must be one of ${TOTAL_MODES.join(', ')}`, [{ field: 'total', message: `must be one of ${TOTAL_MODES.join(', ')}` }]);
  return mode;
}

/** `search=term`: a case-insensitive substring of any searchable field (the field types say which). */
function searchOf(endpoint: CompiledEndpoint, raw: string | undefined): { term: string; fields: string[] } | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (raw.length > 200) throw badRequest('Query parameter "search" must be at most 200 characters', [{ field: 'search', message: 'must be at most 200 characters' }]);
  const fields = searchFields(endpoint.schema.schema);
  if (fields.length === 0) throw badRequest('search: this endpoint has no string fields to search', [{ field: 'search', message: 'this endpoint has no string fields to search' }]);
  return { term: raw.trim(), fields };
}
