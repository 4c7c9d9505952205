import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import { newIds } from '../../lib/ids.ts';
import { collectionSpec } from '../collections.ts';
import { docsOfFlat } from '../flat-docs.ts';
import { encodeRows, type AppendBatch, type AppendRows } from './append-rows.ts';
import { layoutOf, type SqlValue } from './layout.ts';

/**
 * Runs in a worker thread with its own connection to the embedded database and appends batches
 * of rows (the audit log, encoded by append-rows.ts) there, so their inserts, index updates and
 * commits never block the request thread. This connection uses synchronous=NORMAL: in WAL mode
 * a batch survives a crash of the process; only a power loss may drop the last batches — the
 * same promise as the buffering in front of it. Other connections keep their own (FULL) setting.
 */
type AppendRequest = { id: number } & AppendBatch;

/**
 * Rows per INSERT statement, largest first: a batch is inserted with as few statements as these
 * sizes allow (a thousand rows take 13), since each statement run crosses from JavaScript to
 * SQLite and back, which costs more than SQLite's work for a row.
 */
const ROWS_PER_STATEMENT = [128, 32, 8, 1];

const { file, busyTimeoutMs } = workerData as { file: string; busyTimeoutMs: number };
const db = new DatabaseSync(file);
db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
db.exec('PRAGMA synchronous = NORMAL');
// A statement of many rows keeps a statement journal (the pages it changes, to undo it alone if a
// row fails). SQLite spills it to a temporary file past 64 KiB, which a 128-row insert with its
// indexes passes, and each spilled page costs two writes. In memory it is bounded by the pages of
// one statement of at most 128 rows.
db.exec('PRAGMA temp_store = MEMORY');
const statements = new Map<string, StatementSync>();

/** The INSERT of `count` rows into the collection's table. */
function insertOf(collection: string, count: number): StatementSync {
  const key = `${collection}:${count}`;
  let statement = statements.get(key);
  if (!statement) {
    const { insertSql } = layoutOf(collectionSpec(collection));
    const at = insertSql.lastIndexOf(' VALUES ') + ' VALUES '.length;
    const row = insertSql.slice(at);
    statement = db.prepare(insertSql.slice(0, at) + new Array<string>(count).fill(row).join(', '));
    statements.set(key, statement);
  }
  return statement;
}

function insertRows({ collection, width, values, ids }: AppendRows): void {
  const total = values.length / width;
  const fresh = newIds(total);
  let row = 0;
  for (const size of ROWS_PER_STATEMENT) {
    while (total - row >= size) {
      const args = new Array<SqlValue>(size * (width + 1));
      let at = 0;
      for (let end = row + size; row < end; row++) {
        args[at++] = ids?.[row] ?? (fresh[row] as string);
        for (let v = row * width, last = v + width; v < last; v++) args[at++] = values[v] as SqlValue;
      }
      insertOf(collection, size).run(...args);
    }
  }
}

parentPort?.on('message', (request: AppendRequest) => {
  try {
    // Flat documents become rows here, before the transaction: a value a column refuses fails the batch alone.
    const rows = 'rows' in request ? request.rows : encodeRows(request.flat.collection, docsOfFlat(request.flat));
    db.exec('BEGIN IMMEDIATE');
    try {
      insertRows(rows);
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
