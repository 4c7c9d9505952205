/**
 * `node bench/project-stream.ts`: a streamed project export and import at scale. Seeds
 * BENCH_STREAM_RECORDS (1,000,000) records of the bench resource (6 fields, as bench/records.ts)
 * straight into an embedded store (big transactions, not HTTP), starts dyn on it as its own
 * process, times `GET /api/project/export?data=true&format=jsonl` to a file, then imports that file
 * (`POST /api/project/import?mode=replace`, JSON Lines, streamed) into a fresh dyn process. For
 * both servers it reads the peak resident memory (VmHWM in /proc/<pid>/status); the goal is under
 * 300 MB whatever the record count. It also times the start of a server on the seeded store
 * (spawn to listening) and its peak memory by then. Prints a table and saves the figures under bench/results/.
 *
 * Environment: BENCH_STREAM_RECORDS (1000000; 20000 for a smoke run), BENCH_KEEP=1 keeps the
 * temp directory. Other processes on the machine make the times noisy; the memory figures are not.
 */
import type { ChildProcess } from 'node:child_process';
import { createReadStream, createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import { newId } from '../src/lib/ids.ts';
import { lastLineOf } from '../src/lib/json-lines.ts';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { BENCH_PATH, DYN_SCHEMA, type BenchRecord } from './records.ts';
import { children, dynServeArgs, startReporting, stopChild } from './support.ts';

const BENCH_DIR = import.meta.dirname;
const ADMIN_PASSWORD = 'bench-admin-password-1';
const SEED_BATCH = 20_000;
const GOAL_MB = 300;

interface Server {
  proc: ChildProcess;
  url: string;
}

process.on('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

function recordCount(): number {
  const raw = process.env.BENCH_STREAM_RECORDS;
  const value = raw ? Number(raw) : 1_000_000;
  if (!Number.isInteger(value) || value < 1 || value > 10_000_000) throw new Error(`BENCH_STREAM_RECORDS must be an integer from 1 to 10000000 (got "${raw}")`);
  return value;
}

function serverEnv(dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'NODE_ENV', 'BODY_LIMIT', 'JWT_SECRET', 'JWT_REFRESH_SECRET', 'BCRYPT_ROUNDS']) delete env[name];
  return { ...env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, PROJECT_DIR: join(dataDir, 'project'), DEFAULT_ADMIN_PASSWORD: ADMIN_PASSWORD, LOG_LEVEL: 'warn' };
}

/** dyn as `dynctl serve` runs it; report-port.ts tells the port it bound. */
async function startDyn(dataDir: string): Promise<Server> {
  const { proc, port } = await startReporting('dyn', dynServeArgs(), serverEnv(dataDir), 120_000);
  return { proc, url: `http://127.0.0.1:${port}` };
}

async function stopDyn(server: Server): Promise<void> {
  await stopChild(server.proc, 30_000);
}

/** A field of /proc/<pid>/status in MB (Linux), null when it cannot be read. */
function statusMb(pid: number | undefined, field: string): number | null {
  try {
    const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Math.round(Number(kb) / 1024) : null;
  } catch {
    return null;
  }
}

/** Peak resident set of a process so far (VmHWM), in MB. */
const peakRssMb = (pid: number | undefined): number | null => statusMb(pid, 'VmHWM');

/**
 * The largest anonymous (heap: V8, SQLite's page cache) and file-backed (the binary, SQLite's
 * memory-mapped reads of the database file, which the kernel may drop) parts of the resident set,
 * sampled every 100 ms while `work` runs: VmHWM counts both.
 */
async function sampled<T>(pid: number | undefined, work: () => Promise<T>): Promise<{ value: T; peakAnonMB: number; peakFileMB: number }> {
  let peakAnonMB = 0;
  let peakFileMB = 0;
  const sample = (): void => {
    peakAnonMB = Math.max(peakAnonMB, statusMb(pid, 'RssAnon') ?? 0);
    peakFileMB = Math.max(peakFileMB, statusMb(pid, 'RssFile') ?? 0);
  };
  const timer = setInterval(sample, 100);
  try {
    const value = await work();
    sample();
    return { value, peakAnonMB, peakFileMB };
  } finally {
    clearInterval(timer);
  }
}

async function call(server: Server, method: string, path: string, body?: unknown, token?: string): Promise<any> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(server.url + path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const json = (await response.json()) as any;
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}

async function login(server: Server): Promise<string> {
  return (await call(server, 'POST', '/api/auth/login', { login: 'admin', password: ADMIN_PASSWORD })).data.accessToken;
}

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];

/** The bench resource's six fields, made from the index (no array of a million records in memory). */
function benchRecord(i: number): BenchRecord {
  const word = (k: number): string => WORDS[(i * 7 + k) % WORDS.length] as string;
  return {
    title: `Item ${i} ${word(1)} ${word(2)}`,
    price: (i % 100_000) / 100,
    active: i % 2 === 0,
    tags: [word(3), word(4)].slice(0, 1 + (i % 2)),
    publishedAt: new Date(Date.UTC(2025, 0, 1) + (i % 365) * 86_400_000).toISOString(),
    meta: { sku: `SKU-${String(i).padStart(7, '0')}`, weight: (i % 1000) / 100, color: word(5) },
  };
}

/** Records straight into the store, SEED_BATCH per transaction; then the path's counter. */
async function seed(dataDir: string, endpointId: string, count: number): Promise<void> {
  const store = openSqliteStore({ dataDir, synchronous: 'NORMAL' });
  try {
    const records = store.collection('endpointdatas');
    const start = Date.UTC(2026, 0, 1);
    for (let at = 0; at < count; at += SEED_BATCH) {
      const docs = [];
      for (let i = at; i < Math.min(count, at + SEED_BATCH); i++) {
        const when = new Date(start + i * 1000);
        docs.push({ _id: newId(), endpointId, resourcePath: BENCH_PATH, data: benchRecord(i), createdAt: when, updatedAt: when, expiresAt: null });
      }
      await records.insertMany(docs);
    }
    await store.collection('recordcounts').updateOne({ resourcePath: BENCH_PATH }, { $set: { count } }, { upsert: true });
  } finally {
    await store.close();
  }
}

export async function runProjectStream(): Promise<Record<string, unknown>> {
  const count = recordCount();
  const temp = mkdtempSync(join(os.tmpdir(), 'dyn-bench-stream-'));
  const sourceDir = join(temp, 'source');
  const targetDir = join(temp, 'target');
  const file = join(temp, 'export.jsonl');
  mkdirSync(sourceDir);
  mkdirSync(targetDir);
  const running: Server[] = [];
  try {
    // 1. The resource, defined through the API (so the store is set up as dyn does it).
    let source = await startDyn(sourceDir);
    running.push(source);
    const token = await login(source);
    let endpointId = '';
    for (const method of ['GET', 'POST']) {
      const created = await call(source, 'POST', '/api/endpoints', { name: `Bench items ${method}`, path: BENCH_PATH, method, accessType: 'public', schema: DYN_SCHEMA }, token);
      if (method === 'POST') endpointId = created.data._id;
    }
    await stopDyn(source);

    // 2. The records, straight into the store.
    let started = performance.now();
    await seed(sourceDir, endpointId, count);
    const seedSeconds = (performance.now() - started) / 1000;

    // 3. Export from a freshly started server (its peak memory is the export's). Its start on a
    // store of `count` records is timed too: nothing at start should read every record.
    started = performance.now();
    source = await startDyn(sourceDir);
    const startSeconds = (performance.now() - started) / 1000;
    running.push(source);
    const sourceToken = await login(source);
    const sourceStartRss = peakRssMb(source.proc.pid);
    started = performance.now();
    const exportParts = await sampled(source.proc.pid, async () => {
      const exported = await fetch(`${source.url}/api/project/export?data=true&format=jsonl`, { headers: { authorization: `Bearer ${sourceToken}` } });
      if (!exported.ok || !exported.body) throw new Error(`export: HTTP ${exported.status}`);
      await pipeline(Readable.fromWeb(exported.body as never), createWriteStream(file));
    });
    const exportSeconds = (performance.now() - started) / 1000;
    const exportPeakRss = peakRssMb(source.proc.pid);
    await stopDyn(source);
    const bytes = statSync(file).size;
    const tail = lastLineOf(file);
    if (JSON.parse(tail).records !== count) throw new Error(`the export ended with ${tail}, not ${count} records`);

    // 4. Import into a fresh server, the file streamed as it is read.
    const target = await startDyn(targetDir);
    running.push(target);
    const targetToken = await login(target);
    const targetStartRss = peakRssMb(target.proc.pid);
    started = performance.now();
    const importParts = await sampled(target.proc.pid, async () => {
    const imported = await fetch(`${target.url}/api/project/import?mode=replace`, {
      method: 'POST',
      headers: { authorization: `Bearer ${targetToken}`, 'content-type': 'application/x-ndjson', accept: 'application/x-ndjson' },
      body: Readable.toWeb(createReadStream(file, { highWaterMark: 256 * 1024 })) as never,
      duplex: 'half',
    } as RequestInit);
    return (await imported.text()).trim().split('\n');
    });
    const answer = importParts.value;
    const importSeconds = (performance.now() - started) / 1000;
    const importPeakRss = peakRssMb(target.proc.pid);
    const result = JSON.parse(answer.at(-1) ?? '{}');
    if (result.success !== true || result.data.records !== count) throw new Error(`import: ${answer.at(-1)?.slice(0, 500)}`);
    const total = (await call(target, 'GET', `${BENCH_PATH}?limit=1`)).meta.total;
    if (total !== count) throw new Error(`after the import the list total is ${total}, not ${count}`);
    await stopDyn(target);

    const figures = {
      records: count,
      fileMB: Math.round((bytes / 1024 / 1024) * 10) / 10,
      seedSeconds: round(seedSeconds),
      start: { seconds: round(startSeconds), rssMB: sourceStartRss },
      export: { seconds: round(exportSeconds), recordsPerSecond: Math.round(count / exportSeconds), mbPerSecond: round(bytes / 1024 / 1024 / exportSeconds), serverPeakRssMB: exportPeakRss, serverRssAfterStartMB: sourceStartRss, peakAnonMB: exportParts.peakAnonMB, peakFileMB: exportParts.peakFileMB },
      import: { seconds: round(importSeconds), recordsPerSecond: Math.round(count / importSeconds), progressLines: answer.length - 1, serverPeakRssMB: importPeakRss, serverRssAfterStartMB: targetStartRss, peakAnonMB: importParts.peakAnonMB, peakFileMB: importParts.peakFileMB },
      goalPeakRssMB: GOAL_MB,
      machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? null, memoryGB: Math.round(os.totalmem() / 1024 ** 3), node: process.version },
      note: 'other processes share the machine: times are noisy, peak memory is not',
    };
    return figures;
  } finally {
    await Promise.all(running.map((server) => stopDyn(server)));
    if (process.env.BENCH_KEEP) console.log(`kept ${temp}`);
    else rmSync(temp, { recursive: true, force: true });
  }
}

const round = (n: number): number => Math.round(n * 100) / 100;

function printTable(f: Awaited<ReturnType<typeof runProjectStream>> & Record<string, any>): void {
  const rows = [
    ['step', 'seconds', 'records/s', 'server peak RSS (VmHWM)', 'after start', 'peak anon', 'peak file-backed'],
    ['seed (store, no HTTP)', String(f.seedSeconds), '', '', '', '', ''],
    [`start on ${f.records.toLocaleString('en-US')} records`, String(f.start.seconds), '', `${f.start.rssMB} MB`, '', '', ''],
    ['export (jsonl)', String(f.export.seconds), f.export.recordsPerSecond.toLocaleString('en-US'), `${f.export.serverPeakRssMB} MB`, `${f.export.serverRssAfterStartMB} MB`, `${f.export.peakAnonMB} MB`, `${f.export.peakFileMB} MB`],
    ['import (jsonl, replace)', String(f.import.seconds), f.import.recordsPerSecond.toLocaleString('en-US'), `${f.import.serverPeakRssMB} MB`, `${f.import.serverRssAfterStartMB} MB`, `${f.import.peakAnonMB} MB`, `${f.import.peakFileMB} MB`],
  ];
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  console.log(`\nproject stream: ${f.records.toLocaleString('en-US')} records, ${f.fileMB} MB of JSON Lines; goal: peak RSS under ${f.goalPeakRssMB} MB`);
  for (const row of rows) console.log(row.map((cell, col) => (col === 0 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join('  '));
  console.log(`(${f.note})`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const figures = await runProjectStream();
  printTable(figures as never);
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  mkdirSync(join(BENCH_DIR, 'results'), { recursive: true });
  const out = join(BENCH_DIR, 'results', `${stamp}-project-stream.json`);
  writeFileSync(out, `${JSON.stringify(figures, null, 2)}\n`);
  console.log(`saved ${out}`);
}
