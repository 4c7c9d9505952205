import type { ErrorDetail } from '../lib/errors.ts';
import { isId, newId } from '../lib/ids.ts';
import { matchSegments, normalizePath, parsePathPattern, splitPath, type PathPattern } from '../lib/paths.ts';
import type { RecordDoc } from '../model/endpoint.ts';
import { flattenRecord } from '../services/records.ts';
import type { Bundle } from './bundle.ts';
import { compareText } from './normalize.ts';
import type { ProjectServices } from './services.ts';

/**
 * Records in a bundle: `data` maps a collection path (a record's resourcePath, parameters
 * filled in: `/api/shops/s1/items`) to its records as clients see them,
 * `{_id, ...fields, createdAt, updatedAt, expiresAt?}`.
 *
 * Records keep their `_id` on import, so reference fields (which hold record ids) still point
 * at the right records afterwards; timestamps are kept too, so list order and expiry survive.
 * A record without `_id` gets a new one. Import is a restore, not a series of API calls: the
 * values are not validated against the endpoint's schema and references are not checked (the
 * records came from a store where they were), but keys must be storable (no `$`, no `.`) and
 * every path must be served by an endpoint, whose id becomes the records' owner (recordOwners).
 */
export type BundleData = NonNullable<Bundle['data']>;

export interface RecordRow {
  _id: string;
  resourcePath: string;
  data: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date | null;
}

const RECORD_META = new Set(['_id', 'createdAt', 'updatedAt', 'expiresAt']);
const RESERVED_KEYS = new Set(['id', '__proto__', 'constructor', 'prototype']);
const MAX_DEPTH = 32;
/**
 * How deep a bundle may be nested: a record sits three levels down in one (`data` → its path →
 * the list), and may itself be nested as deep as a record's body may (32 levels), so that every
 * record the store holds exports and imports again.
 */
export const BUNDLE_MAX_DEPTH = MAX_DEPTH + 3;

const records = (services: Pick<ProjectServices, 'store'>) => services.store.collection<RecordDoc>('endpointdatas');

export async function exportData(services: Pick<ProjectServices, 'store'>): Promise<BundleData> {
  const all = await records(services).find({}, { sort: { resourcePath: 1, createdAt: 1, _id: 1 } });
  const byPath = new Map<string, Array<Record<string, unknown>>>();
  for (const record of all) {
    const list = byPath.get(record.resourcePath) ?? [];
    list.push(flattenRecord(record));
    byPath.set(record.resourcePath, list);
  }
  return Object.fromEntries([...byPath].sort(([a], [b]) => compareText(a, b)));
}

/**
 * Which endpoint owns the records of a collection path: of the endpoints serving it, a `POST`
 * one if there is one (records are created through it), else the first; null when none serves
 * it (such records are refused). Owners are named by key (`POST /api/x`): an import knows the
 * ids only once its definitions are applied, when the store translates keys to ids
 * (Store.moveStaged's remap). Answers are kept per path (bounded) — an import asks once per record.
 */
export type OwnerOf = (resourcePath: string) => string | null;

const OWNER_CACHE = 10_000;

export function recordOwners(endpoints: ReadonlyArray<{ method: string; path: string }>): OwnerOf {
  const patterns: Array<{ key: string; post: boolean; pattern: PathPattern }> = [];
  for (const endpoint of endpoints) {
    try {
      patterns.push({ key: `${endpoint.method} ${normalizePath(endpoint.path)}`, post: endpoint.method === 'POST', pattern: parsePathPattern(endpoint.path) });
    } catch {
      // An invalid path is reported where the endpoint is checked; it serves nothing.
    }
  }
  const cache = new Map<string, string | null>();
  return (resourcePath) => {
    let owner = cache.get(resourcePath);
    if (owner !== undefined) return owner;
    const segments = splitPath(resourcePath);
    const serving = patterns.filter((p) => matchSegments(p.pattern, segments));
    owner = (serving.find((p) => p.post) ?? serving[0])?.key ?? null;
    if (cache.size >= OWNER_CACHE) cache.clear();
    cache.set(resourcePath, owner);
    return owner;
  };
}

/**
 * The path as requests reach it: each segment percent-encoded as the engine fills a parameter
 * (`/api/shops/:shopId/items` names the shop whose id is ":shopId", stored as
 * `/api/shops/%3AshopId/items`), so records imported on a path are the ones a GET of that path
 * lists. Paths written by an export are already in this form. Null for a malformed %-escape.
 */
export function canonicalPath(raw: string): string | null {
  try {
    return normalizePath(raw).split('/').map((segment) => encodeURIComponent(decodeURIComponent(segment))).join('/');
  } catch {
    return null;
  }
}

/** A record checked and ready to stage, its owner named by key (see recordOwners). */
export interface StagedRow extends RecordRow {
  ownerKey: string;
}

/**
 * Checks every record of a bundle's `data` before anything is written, collecting every problem
 * (`data./api/x[3]._id`); records on a path no endpoint serves are refused.
 */
export function checkData(data: BundleData, ownerOf: OwnerOf): { rows: StagedRow[]; problems: ErrorDetail[] } {
  const problems: ErrorDetail[] = [];
  const rows: StagedRow[] = [];
  const seen = new Set<string>();
  const now = new Date();
  for (const [rawPath, list] of Object.entries(data)) {
    const at = `data.${rawPath}`;
    const resourcePath = canonicalPath(rawPath);
    if (resourcePath === null) {
      problems.push({ field: at, message: 'is not a valid path (a malformed %-escape)' });
      continue;
    }
    const ownerKey = ownerOf(resourcePath);
    if (ownerKey === null) {
      problems.push({ field: at, message: `no endpoint in the bundle or the store serves ${resourcePath}` });
      continue;
    }
    for (const [index, record] of list.entries()) {
      const row = checkRecord(record, `${at}[${index}]`, resourcePath, now);
      if ('message' in row) {
        problems.push(row);
      } else if (seen.has(row._id)) {
        problems.push({ field: `${at}[${index}]._id`, message: `repeats the id ${row._id}` });
      } else {
        rows.push({ ...row, ownerKey });
        seen.add(row._id);
      }
    }
  }
  return { rows, problems };
}

/** One record's problem (its `field` starts with `field`), or the row to store. */
export function checkRecord(record: Record<string, unknown>, field: string, resourcePath: string, now: Date): RecordRow | ErrorDetail {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return { field, message: 'must be an object' };
  const { _id, createdAt, updatedAt, expiresAt, ...fields } = record;
  const id = _id === undefined ? newId() : _id;
  if (!isId(id)) return { field: `${field}._id`, message: 'must be a 24-character hex id' };
  const badDate = Object.entries({ createdAt, updatedAt, expiresAt }).find(([, raw]) => raw !== undefined && raw !== null && date(raw) === null);
  if (badDate) return { field: `${field}.${badDate[0]}`, message: 'must be an ISO 8601 date' };
  const keyProblem = storableKeys(fields, 0, true);
  if (keyProblem) return { field: `${field}${keyProblem.path}`, message: keyProblem.message };
  const created = date(createdAt) ?? now;
  return { _id: id, resourcePath, data: fields, createdAt: created, updatedAt: date(updatedAt) ?? created, expiresAt: date(expiresAt) };
}

/** A date from an ISO 8601 string; null when absent or unreadable. */
function date(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) ? null : parsed;
}

/**
 * A record's field names: not `$…`, no dots, not reserved (`id`, the record's own members). Below
 * the top any key is data (a `json` field's value keeps `$` and dotted keys and `__proto__`, as
 * the engine stores them, on both stores), so an export of such a record imports again.
 */
function storableKeys(value: unknown, depth: number, top: boolean): { path: string; message: string } | null {
  if (typeof value !== 'object' || value === null) return null;
  if (depth > MAX_DEPTH) return { path: '', message: `is nested more than ${MAX_DEPTH} levels deep` };
  for (const [key, inner] of Object.entries(value)) {
    if (top) {
      const reserved = key.startsWith('$') || key.includes('.') || RESERVED_KEYS.has(key) || RECORD_META.has(key);
      if (reserved) return { path: `.${key}`, message: 'is not a storable field name' };
    }
    const problem = storableKeys(inner, depth + 1, false);
    if (problem) return { path: `${Array.isArray(value) ? `[${key}]` : `.${key}`}${problem.path}`, message: problem.message };
  }
  return null;
}
