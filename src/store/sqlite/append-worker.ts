import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

/**
 * Runs in a worker thread with its own connection to the embedded database and appends batches
 * of documents (the audit log) there, so their inserts, index updates and commits never block
 * the request thread. This connection uses synchronous=NORMAL: in WAL mode a batch survives a
 * crash of the process; only a power loss may drop the last batches — the same promise as the
 * buffering in front of it. Other connections keep their own (FULL) setting.
 */
interface AppendRequest {
  id: number;
  /** The INSERT statement, one `?` per value of a row. */
  sql: string;
  rows: Array<Array<string | number | null>>;
}

const { file, busyTimeoutMs } = workerData as { file: string; busyTimeoutMs: number };
const db = new DatabaseSync(file);
db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
db.exec('PRAGMA synchronous = NORMAL');
const statements = new Map<string, ReturnType<DatabaseSync['prepare']>>();

parentPort?.on('message', (request: AppendRequest) => {
  try {
    let insert = statements.get(request.sql);
    if (!insert) {
      insert = db.prepare(request.sql);
      statements.set(request.sql, insert);
    }
    db.exec('BEGIN IMMEDIATE');
    try {
      for (const row of request.rows) insert.run(...row);
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
