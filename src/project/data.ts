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
 * every path must be served by an endpoint, whose id becomes the records' owner (a `POST`
 * endpoint if there is one, as records are created through it).
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
const CHUNK = 500;

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
 * Checks every record before anything is written and returns the rows to store. `servedBy` are
 * the path patterns of the endpoints that will exist after the import; records on a path none of
 * them serves are refused, except by a restore (`orphans: 'keep'`): the store may hold records
 * whose endpoint was deleted (deletes never cascade), and a restore must not lose them.
 */
export function checkData(data: BundleData, servedBy: readonly string[], options: { orphans?: 'refuse' | 'keep' } = {}): { rows: RecordRow[]; problems: ErrorDetail[] } {
  const problems: ErrorDetail[] = [];
  const rows: RecordRow[] = [];
  const seen = new Set<string>();
  const patterns = compilePatterns(servedBy);
  const now = new Date();
  for (const [rawPath, list] of Object.entries(data)) {
    const resourcePath = normalizePath(rawPath);
    const at = `data.${rawPath}`;
    if (options.orphans !== 'keep' && !patterns.some((p) => matchSegments(p, splitPath(resourcePath)))) {
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
        rows.push(row);
        seen.add(row._id);
      }
    }
  }
  return { rows, problems };
}

/**
 * Writes checked rows. `replace`: the store's records become exactly these (every other record
 * is deleted). `merge`: each row is inserted, or overwrites the record with its id.
 */
export async function writeData(services: Pick<ProjectServices, 'store' | 'endpoints' | 'records'>, rows: readonly RecordRow[], mode: 'merge' | 'replace'): Promise<number> {
  const owners = (await services.endpoints.all()).filter((e) => !e.isSystem);
  const patterns = owners.map((doc) => ({ doc, pattern: parsePathPattern(doc.path) }));
  const ownerOf = (path: string): string => {
    const serving = patterns.filter((p) => matchSegments(p.pattern, splitPath(path)));
    const owner = serving.find((p) => p.doc.method === 'POST') ?? serving[0];
    // Only a restore writes records no endpoint serves (they were in the store before): no owner.
    return owner?.doc._id ?? '';
  };
  const touched = new Set<string>();
  const docs = rows.map((row) => ({ ...row, endpointId: ownerOf(row.resourcePath) }));
  if (mode === 'replace') {
    await records(services).deleteMany({});
    for (let i = 0; i < docs.length; i += CHUNK) await records(services).insertMany(docs.slice(i, i + CHUNK));
  } else {
    for (const doc of docs) {
      const { _id, ...fields } = doc;
      const existing = await records(services).findById(_id);
      if (existing) {
        touched.add(existing.resourcePath);
        await records(services).updateOne({ _id }, { $set: fields });
      } else {
        await records(services).insertOne(doc);
      }
    }
  }
  for (const doc of docs) touched.add(doc.resourcePath);
  // Counters follow the records: every existing counter (replace emptied some paths), every touched path.
  if (mode === 'replace') await services.records.recountAll();
  for (const path of touched) await services.records.recount(path);
  const expiring = new Set(docs.filter((d) => d.expiresAt).map((d) => d.resourcePath));
  for (const resourcePath of expiring) {
    await services.store.collection('recordcounts').updateOne({ resourcePath }, { $set: { expiring: true } }, { upsert: true });
  }
  return docs.length;
}

function checkRecord(record: Record<string, unknown>, field: string, resourcePath: string, now: Date): RecordRow | ErrorDetail {
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

function compilePatterns(paths: readonly string[]): PathPattern[] {
  const out: PathPattern[] = [];
  for (const path of paths) {
    try {
      out.push(parsePathPattern(path));
    } catch {
      // An invalid path is reported where the endpoint is checked; it serves nothing.
    }
  }
  return out;
}

/** A date from an ISO 8601 string; null when absent or unreadable. */
function date(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) ? null : parsed;
}

/** Keys that every store can hold: not `$…`, no dots, no prototype keys; `id` is reserved at the top. */
function storableKeys(value: unknown, depth: number, top: boolean): { path: string; message: string } | null {
  if (typeof value !== 'object' || value === null) return null;
  if (depth > MAX_DEPTH) return { path: '', message: `is nested more than ${MAX_DEPTH} levels deep` };
  for (const [key, inner] of Object.entries(value)) {
    if (!Array.isArray(value)) {
      const reserved = key.startsWith('$') || key.includes('.') || (top ? RESERVED_KEYS.has(key) || RECORD_META.has(key) : ['__proto__', 'constructor', 'prototype'].includes(key));
      if (reserved) return { path: `.${key}`, message: 'is not a storable field name' };
    }
    const problem = storableKeys(inner, depth + 1, false);
    if (problem) return { path: `${Array.isArray(value) ? `[${key}]` : `.${key}`}${problem.path}`, message: problem.message };
  }
  return null;
}
