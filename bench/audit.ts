/**
 * `node bench/audit.ts`: what one `api_call` audit entry costs, end to end, on the embedded store —
 * the entry handed to AuditLog.enqueue as Engine.record builds it, buffered, flushed in batches,
 * and stored by the append worker. The figures are the CPU time of the whole process (request
 * thread and worker alike) and of the request thread alone per entry, measured with
 * process.cpuUsage and process.threadCpuUsage around `AUDIT_ENTRIES` entries (default 200000)
 * after a warm-up, plus the wall time and the entries read back.
 * A script that prints figures, not a test. Other work on the machine inflates the figures.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createLogger } from '../src/lib/logger.ts';
import { AuditLog } from '../src/services/audit-log.ts';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.ts';

function intEnv(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

/** Enqueues `count` entries shaped like a GET by id's, then flushes and waits for them to be stored. */
async function feed(audit: AuditLog, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const path = `/api/bench/items/${(i % 10_000).toString(16).padStart(24, '0')}`;
    const status = 200;
    audit.enqueue({
      action: 'api_call',
      message: `GET ${path} → ${status}`,
      source: 'endpoint',
      via: 'http',
      ip: '127.0.0.1',
      userId: null,
      method: 'GET',
      path,
      statusCode: status,
    });
    // Let the flushes run as they would between requests.
    if (i % 1000 === 999) await new Promise((resolve) => setImmediate(resolve));
  }
  await audit.flush();
}

export async function runAuditBench(): Promise<Record<string, unknown>> {
  const entries = intEnv('AUDIT_ENTRIES', 200_000);
  const dir = mkdtempSync(join(os.tmpdir(), 'dyn-audit-bench-'));
  const store = openSqliteStore({ dataDir: dir });
  const audit = new AuditLog(store, createLogger('silent'));
  try {
    await feed(audit, Math.min(entries, 20_000)); // warm-up: JIT, worker start, prepared statements
    const cpu = process.cpuUsage();
    const thread = process.threadCpuUsage();
    const started = process.hrtime.bigint();
    await feed(audit, entries);
    const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
    const used = process.cpuUsage(cpu);
    const own = process.threadCpuUsage(thread);
    const stored = await audit.count();
    return {
      entries,
      cpuMicrosPerEntry: Number(((used.user + used.system) / entries).toFixed(2)),
      userMicrosPerEntry: Number((used.user / entries).toFixed(2)),
      // What the request thread pays (buffering each entry's values and handing them over); the
      // rest is the worker's (making documents and rows of them, and inserting those).
      requestThreadMicrosPerEntry: Number(((own.user + own.system) / entries).toFixed(2)),
      wallMicrosPerEntry: Number(((wallMs * 1000) / entries).toFixed(2)),
      storedEntries: stored,
    };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] as string).href) {
  const figures = await runAuditBench();
  console.log('audit entry, end to end (enqueue → flush → worker → SQLite)');
  for (const [name, value] of Object.entries(figures)) console.log(`  ${name.padEnd(22)} ${String(value)}`);
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const resultsDir = join(import.meta.dirname, 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, `${stamp}-audit.json`), JSON.stringify({ node: process.version, cpus: os.cpus().length, ...figures }, null, 2) + '\n');
}
