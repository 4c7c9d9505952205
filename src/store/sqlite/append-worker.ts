import { setPriority } from 'node:os';
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import { docsOfFlat } from '../flat-docs.ts';
import { rowInserter } from './append-insert.ts';
import { encodeRows, type AppendBatch } from './append-rows.ts';

/**
 * Runs in a worker thread with its own connection to the embedded database and appends batches
 * of rows (the audit log, encoded by append-rows.ts) there, so their inserts, index updates and
 * commits never block the request thread. This connection uses synchronous=NORMAL: in WAL mode
 * a batch survives a crash of the process; only a power loss may drop the last batches — the
 * same promise as the buffering in front of it. Other connections keep their own (FULL) setting.
 */
type AppendRequest = { id: number } & AppendBatch;

/**
 * The nice value this thread runs at on Linux, the lowest CPU priority: where requests and the
 * audit log's writes want the same cores, requests get them first (side by side: 5–7% more reads
 * answered on two busy cores). The audit log bounds what may wait for this thread (see
 * AuditLog.flush), so a starved thread delays entries by at most that much, never without end.
 * Only on Linux, where a thread's priority is its own; elsewhere it would lower the whole process.
 */
const NICE = 19;

const { file, busyTimeoutMs } = workerData as { file: string; busyTimeoutMs: number };
if (process.platform === 'linux') {
  try {
    setPriority(0, NICE);
  } catch {
    // Not allowed here (a sandbox): the thread keeps the process's priority, as before.
  }
}
const db = new DatabaseSync(file);
db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
db.exec('PRAGMA synchronous = NORMAL');
// A statement of many rows keeps a statement journal (the pages it changes, to undo it alone if a
// row fails). SQLite spills it to a temporary file past 64 KiB, which a 128-row insert with its
// indexes passes, and each spilled page costs two writes. In memory it is bounded by the pages of
// one statement of at most 128 rows.
db.exec('PRAGMA temp_store = MEMORY');
const insertRows = rowInserter(db);

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
