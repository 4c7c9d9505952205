import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import { newId } from '../../lib/ids.ts';
import { collectionSpec } from '../collections.ts';
import type { Doc } from '../types.ts';
import { layoutOf, type Layout } from './layout.ts';

/**
 * Runs in a worker thread with its own connection to the embedded database and appends batches
 * of documents (the audit log) there, so building their rows, their inserts, index updates and
 * commits never block the request thread. This connection uses synchronous=NORMAL: in WAL mode
 * a batch survives a crash of the process; only a power loss may drop the last batches — the
 * same promise as the buffering in front of it. Other connections keep their own (FULL) setting.
 */
interface AppendRequest {
  id: number;
  collection: string;
  /** Documents as given to appendMany (dates still Date objects); those without an _id get one here. */
  docs: Array<Omit<Doc, '_id'> & { _id?: string }>;
}

const { file, busyTimeoutMs } = workerData as { file: string; busyTimeoutMs: number };
const db = new DatabaseSync(file);
db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
db.exec('PRAGMA synchronous = NORMAL');
const tables = new Map<string, { layout: Layout; insert: StatementSync }>();

function tableOf(collection: string): { layout: Layout; insert: StatementSync } {
  let table = tables.get(collection);
  if (!table) {
    const layout = layoutOf(collectionSpec(collection));
    table = { layout, insert: db.prepare(layout.insertSql) };
    tables.set(collection, table);
  }
  return table;
}

/**
 * The document as the request thread's inserts store it: what a JSON round trip makes of it
 * (dates as ISO text, undefined members dropped, non-finite numbers null). A flat document — an
 * audit entry, the common case, once per request — is converted member by member, which costs a
 * fraction of the round trip; anything nested takes the round trip.
 */
function asStored(doc: Record<string, unknown>): Doc {
  const out: Record<string, unknown> = {};
  for (const key in doc) {
    if (!Object.hasOwn(doc, key)) continue;
    if (key === '__proto__') return JSON.parse(JSON.stringify(doc)) as Doc; // an own data member, as JSON.parse makes it
    const value = doc[key];
    if (value === undefined) continue;
    if (value === null || typeof value === 'string' || typeof value === 'boolean') out[key] = value;
    else if (typeof value === 'number') out[key] = Number.isFinite(value) ? value : null;
    else if (value instanceof Date && !Number.isNaN(value.getTime())) out[key] = value.toISOString();
    else return JSON.parse(JSON.stringify(doc)) as Doc;
  }
  return out as Doc;
}

parentPort?.on('message', (request: AppendRequest) => {
  try {
    const { layout, insert } = tableOf(request.collection);
    const docs = request.docs.map((doc) => asStored({ ...doc, _id: doc._id ?? newId() }));
    db.exec('BEGIN IMMEDIATE');
    try {
      for (const doc of docs) insert.run(...layout.toRow(doc));
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
    parentPort?.postMessage({ id: request.id, ok: true });
  } catch (error) {
    parentPort?.postMessage({ id: request.id, ok: false, message: (error as Error).message });
  }
});
