/**
 * `node bench/indexes.ts`: list queries over a million records on one path, with and without a
 * field index. Seeds the records straight into the embedded store (big transactions, not HTTP),
 * starts dyn as its own process on that data directory, defines the path with `price` indexed
 * and `price2` (the same values) not, and drives wrk at:
 *
 *   ?price[gte]=…&limit=20    a filter on the indexed field (about 1% of the records match)
 *   ?price2[gte]=…&limit=20   the same filter on the unindexed twin (reads every record of the path)
 *   ?sort=-createdAt          newest first (the path's own index, read backwards)
 *   ?sort=-price              the indexed field, descending
 *   ?price[gte]=500&limit=20  a broad filter (half the records): the exact count is what costs
 *   … &total=none             the same without a count
 *
 * and reports the time the definition save took to build the index over the records, with the
 * latency of reads served meanwhile. Prints a table and saves the figures under bench/results/.
 * A script that prints figures, not a test. Noisy when other work shares the CPUs.
 *
 * Environment: BENCH_INDEX_RECORDS (1000000; e.g. 20000 for a smoke run), BENCH_INDEX_SECONDS (10
 * per scenario), BENCH_INDEX_CONNECTIONS (8), BENCH_INDEX_THREADS (2), BENCH_KEEP=1 to keep the
 * temp directory.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { INSTALL_HINT, runWrk, wrkVersion, writeStaticScript, type WrkResult } from './wrk.ts';
import { dynServeArgs, intEnv, prng, startReporting, stopChild } from './support.ts';

const BENCH_DIR = import.meta.dirname;
const ADMIN_PASSWORD = 'bench-admin-password-1';
const PATH = '/api/bench/indexed';
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];

/** The 6 fields of bench/records.ts, plus price2: the same values as price, never indexed. */
const SCHEMA = {
  title: { type: 'string', required: true, maxLength: 200 },
  price: { type: 'number', minimum: 0 },
  price2: { type: 'number', minimum: 0 },
  active: { type: 'boolean' },
  tags: { type: 'array', items: { type: 'string' }, maxItems: 100 },
  publishedAt: { type: 'datetime' },
  meta: { type: 'object' },
};

/** Seeds `count` records on PATH in transactions of 50,000, and the path's counter. */
async function seed(dataDir: string, count: number): Promise<number> {
  const started = performance.now();
  const store = openSqliteStore({ dataDir, synchronous: 'NORMAL' });
  try {
    const random = prng(20261125);
    const pick = (): string => WORDS[Math.floor(random() * WORDS.length)] as string;
    const base = Date.UTC(2026, 0, 1);
    for (let from = 0; from < count; from += 50_000) {
      const docs = [];
      for (let i = from; i < Math.min(count, from + 50_000); i++) {
        const price = Math.round(random() * 100_000) / 100;
        const at = new Date(base + i * 10);
        docs.push({
          endpointId: '000000000000000000000000',
          resourcePath: PATH,
          data: {
            title: `Item ${i} ${pick()} ${pick()}`,
            price,
            price2: price,
            active: random() < 0.5,
            tags: Array.from({ length: 1 + Math.floor(random() * 4) }, pick),
            publishedAt: new Date(Date.UTC(2025, 0, 1) + Math.floor(random() * 365 * 86_400_000)).toISOString(),
            meta: { sku: `SKU-${String(i).padStart(7, '0')}`, weight: Math.round(random() * 1000) / 100, color: pick() },
          },
          expiresAt: null,
          createdAt: at,
          updatedAt: at,
        });
      }
      await store.collection('endpointdatas').insertMany(docs);
    }
    await store.collection('recordcounts').updateOne({ resourcePath: PATH }, { $set: { count } }, { upsert: true });
  } finally {
    await store.close();
  }
  return (performance.now() - started) / 1000;
}

async function startDyn(dataDir: string): Promise<{ proc: ChildProcess; url: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'NODE_ENV', 'REVISION_CHECK_MS', 'JWT_SECRET', 'JWT_REFRESH_SECRET']) delete env[name];
  Object.assign(env, { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, PROJECT_DIR: join(dataDir, 'project'), DEFAULT_ADMIN_PASSWORD: ADMIN_PASSWORD, LOG_LEVEL: 'warn' });
  const { proc, port } = await startReporting('dyn', dynServeArgs(), env, 120_000);
  return { proc, url: `http://127.0.0.1:${port}` };
}

async function call(url: string, method: string, body?: unknown, token?: string): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(url, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined };
}

const q = (query: string): string => query.replace(/\[/g, '%5B').replace(/\]/g, '%5D');

export async function runIndexes(): Promise<Record<string, unknown>> {
  const wrk = wrkVersion();
  if (!wrk) throw new Error(INSTALL_HINT);
  const config = {
    records: intEnv('BENCH_INDEX_RECORDS', 1_000_000, 1000, 10_000_000),
    seconds: intEnv('BENCH_INDEX_SECONDS', 10, 1, 600),
    connections: intEnv('BENCH_INDEX_CONNECTIONS', 8, 1, 1000),
    threads: intEnv('BENCH_INDEX_THREADS', 2, 1, 64),
  };
  const temp = mkdtempSync(join(os.tmpdir(), 'dyn-bench-indexes-'));
  let dyn: { proc: ChildProcess; url: string } | undefined;
  try {
    console.log(`dyn index benchmark — ${config.records} records on ${PATH}; wrk ${config.connections} connections, ${config.threads} threads, ${config.seconds} s per scenario`);
    console.log(`machine: ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim() ?? 'unknown'}), Node ${process.version}; shared CPUs make figures noisy`);
    const dataDir = join(temp, 'data');
    mkdirSync(dataDir);
    const seedSeconds = await seed(dataDir, config.records);
    console.log(`seeded ${config.records} records straight into the store in ${seedSeconds.toFixed(1)} s`);

    dyn = await startDyn(dataDir);
    const login = await call(`${dyn.url}/api/auth/login`, 'POST', { login: 'admin', password: ADMIN_PASSWORD });
    const token = login.json.data.accessToken as string;
    const get = await call(`${dyn.url}/api/endpoints`, 'POST', { name: 'Indexed GET', path: PATH, method: 'GET', accessType: 'public', schema: SCHEMA }, token);
    if (get.status !== 201) throw new Error(`defining GET ${PATH}: ${get.status} ${JSON.stringify(get.json)}`);

    // The index is built when a definition asks for it; reads go on meanwhile (measured alongside).
    const script = writeStaticScript(temp, 'static');
    const during = runWrk({ url: `${dyn.url}${PATH}?${q('sort=-createdAt&limit=20')}`, script, seconds: Math.max(3, config.seconds), connections: 2, threads: 1 });
    const started = performance.now();
    const post = await call(`${dyn.url}/api/endpoints`, 'POST', { name: 'Indexed POST', path: PATH, method: 'POST', accessType: 'public', schema: { ...SCHEMA, price: { ...SCHEMA.price, indexed: true } } }, token);
    const buildSeconds = (performance.now() - started) / 1000;
    if (post.status !== 201) throw new Error(`defining POST ${PATH}: ${post.status} ${JSON.stringify(post.json)}`);
    const readsDuringBuild = await during;
    console.log(`built the price index over ${config.records} records: the definition save took ${buildSeconds.toFixed(2)} s; reads meanwhile: p50 ${readsDuringBuild.latency.p50} ms, p99 ${readsDuringBuild.latency.p99} ms, max ${readsDuringBuild.latency.max} ms`);

    const scenarios = [
      { key: 'indexedFilter', label: 'price[gte]=990 (indexed, ~1% match)', query: 'price[gte]=990&limit=20', indexed: true },
      { key: 'unindexedFilter', label: 'price2[gte]=990 (not indexed)', query: 'price2[gte]=990&limit=20', indexed: false },
      { key: 'newestFirst', label: 'sort=-createdAt', query: 'sort=-createdAt&limit=20', indexed: true },
      { key: 'indexedSort', label: 'sort=-price (indexed)', query: 'sort=-price&limit=20', indexed: true },
      { key: 'broadFilter', label: 'price[gte]=500 (indexed, ~50% match)', query: 'price[gte]=500&limit=20', indexed: true },
      { key: 'broadFilterNoTotal', label: 'price[gte]=500&total=none', query: 'price[gte]=500&limit=20&total=none', indexed: true },
    ];
    const results: Array<{ key: string; label: string; query: string; total: unknown; result: WrkResult }> = [];
    for (const scenario of scenarios) {
      const url = `${dyn.url}${PATH}?${q(scenario.query)}`;
      const check = await call(url, 'GET');
      if (check.status !== 200) throw new Error(`${scenario.query}: ${check.status} ${JSON.stringify(check.json).slice(0, 300)}`);
      // The unindexed filter reads every record per request: give it fewer connections, or wrk's timeouts are all it measures.
      const result = await runWrk({ url, script, seconds: config.seconds, connections: scenario.indexed ? config.connections : Math.min(2, config.connections), threads: config.threads });
      results.push({ key: scenario.key, label: scenario.label, query: scenario.query, total: check.json.meta.total, result });
    }

    const rows = [
      ['scenario', 'total', 'req/s', 'p50 ms', 'p99 ms', 'errors'],
      ...results.map((r) => [r.label, String(r.total), r.result.requestsPerSecond.toFixed(0), r.result.latency.p50.toFixed(2), r.result.latency.p99.toFixed(2), String(Object.values(r.result.errors).reduce((a, b) => a + b, 0))]),
    ];
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
    console.log('');
    for (const row of rows) console.log(row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '));
    const target = results.filter((r) => ['indexedFilter', 'newestFirst', 'indexedSort'].includes(r.key)).every((r) => r.result.latency.p99 < 50);
    console.log(`\ntarget (p99 under 50 ms for the indexed filter and both sorts): ${target ? 'met' : 'NOT met'}`);

    const figures = {
      date: new Date().toISOString(),
      machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown', node: process.version, wrk },
      config,
      seedSeconds,
      indexBuild: { seconds: buildSeconds, readsDuringBuild: readsDuringBuild.latency, readsPerSecondDuringBuild: readsDuringBuild.requestsPerSecond },
      scenarios: results.map((r) => ({ key: r.key, label: r.label, query: r.query, total: r.total, requestsPerSecond: r.result.requestsPerSecond, latency: r.result.latency, errors: r.result.errors })),
      targetMet: target,
    };
    const dir = join(BENCH_DIR, 'results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${figures.date.replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '')}-indexes.json`);
    writeFileSync(file, JSON.stringify(figures, null, 2) + '\n');
    console.log(`saved ${file}`);
    return figures;
  } finally {
    if (dyn) await stopChild(dyn.proc);
    if (process.env.BENCH_KEEP) console.log(`kept ${temp}`);
    else rmSync(temp, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runIndexes().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
