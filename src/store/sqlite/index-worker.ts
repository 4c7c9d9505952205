import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

/**
 * Builds and drops field indexes on a connection of its own, in a worker thread: node:sqlite is
 * synchronous, and a CREATE INDEX over a million records would hold the request thread for
 * seconds. Reads on other connections go on meanwhile (WAL); writes wait for the build's write
 * lock (the store holds its own writes back until the build is done, see index-builder.ts).
 * Each index is built in its own transaction: a unique index refused over duplicated values
 * leaves the others built, and the reply names the refused one with one duplicated value.
 */
export interface IndexJob {
  drop: string[];
  create: Array<{ name: string; sql: string; duplicateSql: string }>;
}

export type IndexJobReply = { ok: true; buildMs: Record<string, number> } | { ok: false; message: string; duplicate?: { name: string; value: unknown } };

const SQLITE_CONSTRAINT_UNIQUE = 2067;
const { file, busyTimeoutMs } = workerData as { file: string; busyTimeoutMs: number };

function run(job: IndexJob): IndexJobReply {
  const db = new DatabaseSync(file);
  try {
    db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    for (const name of job.drop) db.exec(`DROP INDEX IF EXISTS "${name}"`);
    const buildMs: Record<string, number> = {};
    for (const index of job.create) {
      const started = performance.now();
      db.exec('BEGIN IMMEDIATE');
      try {
        db.exec(index.sql);
        db.exec('COMMIT');
      } catch (error) {
        db.exec('ROLLBACK');
        if ((error as Error & { errcode?: number }).errcode !== SQLITE_CONSTRAINT_UNIQUE) throw error;
        const row = db.prepare(index.duplicateSql).get();
        return { ok: false, message: (error as Error).message, duplicate: { name: index.name, value: row?.value ?? null } };
      }
      buildMs[index.name] = Math.round(performance.now() - started);
    }
    return { ok: true, buildMs };
  } finally {
    db.close();
  }
}

parentPort?.once('message', (job: IndexJob) => {
  let reply: IndexJobReply;
  try {
    reply = run(job);
  } catch (error) {
    reply = { ok: false, message: (error as Error).message };
  }
  parentPort?.postMessage(reply);
});
