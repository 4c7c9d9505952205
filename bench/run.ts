/**
 * `npm run bench`: dyn against a bare Koa + node:sqlite service for the same resource, and for GET
 * by id also against the raw ceiling (plain node:http + node:sqlite, bench/raw-server.ts), each as
 * its own process on loopback, loaded by wrk from another. Prints a table (and the machine), and
 * saves the figures under bench/results/. A script that prints figures, not a test.
 *
 * Environment: BENCH_SECONDS (10) measured per scenario and server, split over BENCH_ROUNDS (10)
 * rounds that take the servers in turn (so a burst of load from elsewhere on the machine falls on
 * all of them alike rather than on whichever ran then), BENCH_WARMUP_SECONDS (2) once per server,
 * BENCH_CONNECTIONS (32), BENCH_THREADS (2), BENCH_RECORDS (10000), BENCH_SCENARIOS (a comma list
 * of getById, list, post and the scale scenarios indexes, projectStream, manyEndpoints; all by
 * default — the scale ones seed a million records or 10,000 definitions each and take minutes), BENCH_CPU_PROF=<dir> to profile dyn under
 * `node --cpu-prof` (dyn is restarted on its seeded data after seeding, so the profile covers the
 * load only; it is written to <dir> when the run ends), BENCH_KEEP=1 to keep the temp directory
 * (databases, Lua scripts, id files), BENCH_DYN_ENV='NAME=value …' to start dyn with extra settings
 * for what-if runs (e.g. REVISION_CHECK_MS=1000; such a run is not the benchmark's standard
 * configuration, and the output and saved figures say so).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { BENCH_PATH, DYN_SCHEMA, POST_BODY, bareSeedDocs, seedRecords, type BenchRecord } from './records.ts';
import { SERVER_NODE_FLAGS } from '../src/cli/server-flags.ts';
import { children, codeVersion, startReporting, stopChild } from './support.ts';
import { INSTALL_HINT, runWrk, running as runningWrk, wrkVersion, writeGetByIdScript, writePostScript, writeStaticScript, type WrkResult } from './wrk.ts';

const BENCH_DIR = import.meta.dirname;
const ROOT = resolve(BENCH_DIR, '..');
const ADMIN_PASSWORD = 'bench-admin-password-1';

/** The request scenarios run here, against the baselines. */
const HTTP_SCENARIOS = ['getById', 'list', 'post'];
/**
 * The scale scenarios: each its own script (runnable alone), run after the request scenarios as a
 * child process that seeds its own data, prints its own table and saves its own results file.
 */
const SCALE_SCENARIOS: Record<string, string> = {
  indexes: 'indexes.ts', // 1,000,000 records on one path: filters and sorts with and without an index
  projectStream: 'project-stream.ts', // export and re-import of 1,000,000 records: time and peak RSS
  manyEndpoints: 'many-endpoints.ts', // 10,000 definitions: start, RSS, routing under load
};

function intEnv(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    console.error(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
    process.exit(2);
  }
  return value;
}

const config = {
  seconds: intEnv('BENCH_SECONDS', 10, 1, 3600),
  warmupSeconds: intEnv('BENCH_WARMUP_SECONDS', 2, 0, 600),
  // Ten rounds of a second: this machine's speed drifts by ±15–25% over seconds, and ten turns
  // average more of that drift out of a ratio than three did (three-round runs of one build gave
  // 0.64–0.97× the raw ceiling for GET by id; ten-round runs, 0.65–0.79×, most within 0.67–0.75×).
  rounds: intEnv('BENCH_ROUNDS', 10, 1, 100),
  connections: intEnv('BENCH_CONNECTIONS', 32, 1, 10_000),
  threads: intEnv('BENCH_THREADS', 2, 1, 256),
  records: intEnv('BENCH_RECORDS', 10_000, 1, 1_000_000),
  seedConcurrency: 32,
  sqliteSynchronous: 'FULL' as const,
  scenarios: scenarioList(),
  dynExtraEnv: extraDynEnv(),
};

function extraDynEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (process.env.BENCH_DYN_ENV ?? '').split(/\s+/).filter(Boolean)) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(pair);
    if (!match) {
      console.error(`BENCH_DYN_ENV: "${pair}" is not NAME=value`);
      process.exit(2);
    }
    out[match[1]!] = match[2]!;
  }
  return out;
}

function scenarioList(): string[] {
  const all = [...HTTP_SCENARIOS, ...Object.keys(SCALE_SCENARIOS)];
  const raw = process.env.BENCH_SCENARIOS?.trim();
  if (!raw) return all;
  const picked = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = picked.filter((s) => !all.includes(s));
  if (unknown.length > 0 || picked.length === 0) {
    console.error(`BENCH_SCENARIOS: unknown scenario ${unknown.join(', ')} (use a comma list of ${all.join(', ')})`);
    process.exit(2);
  }
  return picked;
}

type ServerName = 'dyn' | 'bare' | 'raw';
interface Scenario {
  key: 'getById' | 'list' | 'post';
  label: string;
  /** dyn req/s over bare req/s must be at least this. */
  target: number;
  /** dyn req/s over raw req/s must be at least this, for a scenario measured against the raw ceiling too. */
  rawTarget?: number;
  path: string;
  script(server: ServerName): string;
}

// ---------------------------------------------------------------- child processes

let tempDir: string | undefined;
let shuttingDown = false;

async function shutdown(): Promise<void> {
  for (const wrk of runningWrk) wrk.kill('SIGTERM');
  await Promise.all([...children].map((child) => stopChild(child)));
  if (tempDir && !process.env.BENCH_KEEP) rmSync(tempDir, { recursive: true, force: true });
  else if (tempDir) console.log(`kept ${tempDir}`);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (shuttingDown) return;
    shuttingDown = true;
    console.error(`\n${signal}: stopping the servers and wrk`);
    void shutdown().finally(() => process.exit(130));
  });
}
// Last resort (an exception escaping everything): never leave a server behind.
process.on('exit', () => {
  for (const child of [...children, ...runningWrk]) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

// ---------------------------------------------------------------- HTTP helpers (setup only)

async function call(base: string, method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(base + path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await response.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: response.status, json };
}

function expectStatus(what: string, response: { status: number; json: any }, status: number): void {
  if (response.status !== status) throw new Error(`${what}: expected ${status}, got ${response.status} ${JSON.stringify(response.json).slice(0, 500)}`);
}

/** POSTs every record with `concurrency` requests in flight; returns the new ids in order. */
async function seedThroughApi(base: string, records: readonly BenchRecord[], concurrency: number): Promise<string[]> {
  const ids: string[] = new Array(records.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < records.length) {
      const index = next++;
      const response = await call(base, 'POST', BENCH_PATH, records[index]);
      expectStatus(`seeding record ${index}`, response, 201);
      ids[index] = response.json.data._id;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return ids;
}

/** The code measured: commit, and whether src/ had uncommitted changes. */

// ---------------------------------------------------------------- output

const fmtRps = (n: number): string => Math.round(n).toLocaleString('en-US');
const fmtMs = (n: number): string => `${n.toFixed(2)} ms`;
const pct = (n: number): string => `${Math.round(n * 100)}%`;

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  const line = (row: string[]): string => row.map((cell, col) => (col === 0 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join('  ');
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

/**
 * The rounds of one server as one result: requests over the time they took; p50 and mean the
 * median of the rounds', p90, p99 and max the highest (a round's percentiles cannot be merged).
 */
/**
 * CPU time a process has used (user + system, all its threads), in microseconds, from
 * /proc/<pid>/stat; null where there is no /proc (not Linux). Per request, it is a measure of cost
 * that other load on the machine disturbs far less than req/s.
 */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;
function cpuMicros(pid: number | undefined, thread = false): number | null {
  if (pid === undefined) return null;
  try {
    // The process's main thread (its request thread) has the process's id as its thread id.
    const stat = readFileSync(thread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

type Measured1 = WrkResult & { cpuMicros: number | null; threadMicros: number | null };

/**
 * Also the request thread alone: its CPU time per request, and `threadBusy`, the share of the
 * measured time it ran. A single-threaded server's throughput is its request thread's time per
 * request while that share is ~100%; below it, the thread waited for work or for a core.
 */
function combine(rounds: readonly Measured1[]): WrkResult & { rounds: number[]; cpuMicrosPerRequest: number | null; threadMicrosPerRequest: number | null; threadBusy: number | null } {
  const median = (values: number[]): number => {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  const sum = (pick: (r: Measured1) => number): number => rounds.reduce((total, r) => total + pick(r), 0);
  const max = (pick: (r: WrkResult) => number): number => Math.max(...rounds.map(pick));
  const requests = sum((r) => r.requests);
  const durationSeconds = sum((r) => r.durationSeconds);
  return {
    requests,
    durationSeconds,
    requestsPerSecond: durationSeconds > 0 ? requests / durationSeconds : 0,
    latency: { p50: median(rounds.map((r) => r.latency.p50)), p90: max((r) => r.latency.p90), p99: max((r) => r.latency.p99), max: max((r) => r.latency.max), mean: median(rounds.map((r) => r.latency.mean)) },
    errors: { connect: sum((r) => r.errors.connect), read: sum((r) => r.errors.read), write: sum((r) => r.errors.write), status: sum((r) => r.errors.status), timeout: sum((r) => r.errors.timeout) },
    rounds: rounds.map((r) => Math.round(r.requestsPerSecond)),
    cpuMicrosPerRequest: rounds.every((r) => r.cpuMicros !== null) && requests > 0 ? sum((r) => r.cpuMicros ?? 0) / requests : null,
    threadMicrosPerRequest: rounds.every((r) => r.threadMicros !== null) && requests > 0 ? sum((r) => r.threadMicros ?? 0) / requests : null,
    threadBusy: rounds.every((r) => r.threadMicros !== null) && durationSeconds > 0 ? sum((r) => r.threadMicros ?? 0) / (durationSeconds * 1e6) : null,
  };
}

function errorsOf(result: WrkResult): string | null {
  const e = result.errors;
  const parts = Object.entries(e).filter(([, n]) => n > 0).map(([kind, n]) => `${kind} ${n}`);
  return parts.length > 0 ? parts.join(', ') : null;
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const wrk = wrkVersion();
  if (!wrk) {
    console.error(INSTALL_HINT);
    process.exit(1);
  }

  const date = new Date();
  const cpus = os.cpus();
  const machine = {
    cpus: cpus.length,
    availableParallelism: os.availableParallelism(),
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    wrk,
  };
  const code = codeVersion();
  console.log(`dyn benchmark — ${date.toISOString()} — code ${code.commit ?? 'unknown'}${code.srcDirty ? ' + uncommitted changes in src/' : ''}`);
  console.log(`machine: ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGb} GB, Node ${machine.node}, ${machine.platform}`);
  console.log(`load: ${wrk}, ${config.connections} connections, ${config.threads} threads, ${config.warmupSeconds} s warm-up + ${config.seconds} s per scenario and server, in ${config.rounds} round${config.rounds === 1 ? '' : 's'} taking the servers in turn`);
  console.log(`data: ${config.records} records, SQLite WAL + synchronous=${config.sqliteSynchronous} on both`);
  const extra = Object.entries(config.dynExtraEnv).map(([name, value]) => `${name}=${value}`).join(' ');
  if (extra) console.log(`WHAT-IF RUN, not the standard configuration: dyn started with ${extra}`);
  console.log('');

  tempDir = mkdtempSync(join(os.tmpdir(), 'dyn-bench-'));
  const dynDir = join(tempDir, 'dyn');
  const bareDir = join(tempDir, 'bare');
  const rawDir = join(tempDir, 'raw');
  mkdirSync(dynDir);
  mkdirSync(bareDir);
  mkdirSync(rawDir);
  const records = seedRecords(config.records);

  // dyn, as `dynctl serve` would run it; report-port.ts only tells us the port it bound.
  const dynEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'NODE_ENV', 'REVISION_CHECK_MS', 'BODY_LIMIT', 'CORS_ORIGINS', 'JWT_SECRET', 'JWT_REFRESH_SECRET', 'BCRYPT_ROUNDS']) delete dynEnv[name];
  Object.assign(dynEnv, {
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dynDir,
    PROJECT_DIR: join(dynDir, 'project'),
    DEFAULT_ADMIN_PASSWORD: ADMIN_PASSWORD,
    LOG_LEVEL: 'warn',
    SQLITE_SYNCHRONOUS: config.sqliteSynchronous,
    ...config.dynExtraEnv,
  });
  const profileDir = process.env.BENCH_CPU_PROF ? resolve(process.env.BENCH_CPU_PROF) : undefined;
  const dynArgs = (profile: boolean): string[] => [
    ...SERVER_NODE_FLAGS, // what `dynctl serve` execs itself with, which it does not where there is an IPC channel
    '--import',
    pathToFileURL(join(BENCH_DIR, 'report-port.ts')).href,
    ...(profile && profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    join(ROOT, 'bin', 'dynctl.js'),
    'serve',
  ];
  let dyn = await startReporting('dyn', dynArgs(false), dynEnv);
  let dynUrl = `http://127.0.0.1:${dyn.port}`;

  const login = await call(dynUrl, 'POST', '/api/auth/login', { login: 'admin', password: ADMIN_PASSWORD });
  expectStatus('dyn login', login, 200);
  const token = login.json.data.accessToken as string;
  for (const method of ['GET', 'POST']) {
    const created = await call(dynUrl, 'POST', '/api/endpoints', { name: `Bench items ${method}`, path: BENCH_PATH, method, accessType: 'public', schema: DYN_SCHEMA }, token);
    expectStatus(`dyn: define ${method} ${BENCH_PATH}`, created, 201);
  }
  let started = performance.now();
  const dynIds = await seedThroughApi(dynUrl, records, config.seedConcurrency);
  const dynSeedSeconds = (performance.now() - started) / 1000;
  console.log(`seeded dyn through POST ${BENCH_PATH}: ${dynIds.length} records in ${dynSeedSeconds.toFixed(1)} s (${config.seedConcurrency} in flight)`);
  if (profileDir) {
    await stopChild(dyn.proc);
    dyn = await startReporting('dyn', dynArgs(true), dynEnv);
    dynUrl = `http://127.0.0.1:${dyn.port}`;
    console.log(`restarted dyn under --cpu-prof (profile to ${profileDir})`);
  }

  // The bare service, seeded with the same records in one transaction at startup.
  const seedFile = join(tempDir, 'bare-seed.json');
  const bareDocs = bareSeedDocs(records);
  writeFileSync(seedFile, JSON.stringify(bareDocs));
  started = performance.now();
  const bare = await startReporting('bare server', [join(BENCH_DIR, 'bare-server.ts')], { ...process.env, DATA_DIR: bareDir, SEED_FILE: seedFile, PORT: '0' });
  const bareSeedSeconds = (performance.now() - started) / 1000;
  const bareUrl = `http://127.0.0.1:${bare.port}`;
  const bareIds = bareDocs.map((doc) => doc._id);
  console.log(`started and seeded the bare server: ${bareIds.length} records in ${bareSeedSeconds.toFixed(1)} s`);
  // The raw ceiling (GET by id only), on the bare server's seed data and ids.
  const raw = await startReporting('raw server', [join(BENCH_DIR, 'raw-server.ts')], { ...process.env, DATA_DIR: rawDir, SEED_FILE: seedFile, PORT: '0' });
  const rawUrl = `http://127.0.0.1:${raw.port}`;
  console.log(`started and seeded the raw server (node:http + node:sqlite, GET by id only)`);

  // All answer the same requests the same way before any is loaded.
  const urls: Record<ServerName, string> = { dyn: dynUrl, bare: bareUrl, raw: rawUrl };
  const pids: Record<ServerName, number | undefined> = { dyn: dyn.proc.pid, bare: bare.proc.pid, raw: raw.proc.pid };
  const ids: Record<ServerName, string[]> = { dyn: dynIds, bare: bareIds, raw: bareIds };
  const rawOne = await call(rawUrl, 'GET', `${BENCH_PATH}/${bareIds[config.records - 1]}`);
  expectStatus('raw: get by id', rawOne, 200);
  if (rawOne.json.data?.title !== records[config.records - 1]!.title) throw new Error('raw: get by id returned another record');
  for (const server of ['dyn', 'bare'] as const) {
    const base = urls[server];
    const list = await call(base, 'GET', `${BENCH_PATH}?limit=20`);
    expectStatus(`${server}: list`, list, 200);
    if (list.json.meta?.total !== config.records || list.json.data?.length !== Math.min(20, config.records)) {
      throw new Error(`${server}: list total ${list.json.meta?.total} / ${list.json.data?.length} items, expected ${config.records} / 20`);
    }
    const one = await call(base, 'GET', `${BENCH_PATH}/${ids[server][config.records - 1]}`);
    expectStatus(`${server}: get by id`, one, 200);
    if (one.json.data?.title !== records[config.records - 1]!.title) throw new Error(`${server}: get by id returned another record`);
    expectStatus(`${server}: POST with a wrong type`, await call(base, 'POST', BENCH_PATH, { ...POST_BODY, price: 'cheap' }), 400);
    expectStatus(`${server}: POST with an unknown field`, await call(base, 'POST', BENCH_PATH, { ...POST_BODY, colour: 'red' }), 400);
    expectStatus(`${server}: POST without the required field`, await call(base, 'POST', BENCH_PATH, { price: 1 }), 400);
  }
  console.log(`checked: dyn and bare list ${config.records} records (dyn from its per-path counter), read by id, refuse invalid bodies; raw reads by id\n`);

  const scriptDir = join(tempDir, 'wrk');
  mkdirSync(scriptDir);
  const idFiles: Record<ServerName, string> = { dyn: join(scriptDir, 'dyn-ids.txt'), bare: join(scriptDir, 'bare-ids.txt'), raw: join(scriptDir, 'bare-ids.txt') };
  for (const server of ['dyn', 'bare'] as const) writeFileSync(idFiles[server], ids[server].join('\n') + '\n');

  // POST last, so both GET scenarios see exactly the seeded records.
  const allScenarios: Scenario[] = [
    { key: 'getById', label: 'GET by id', target: 0.75, rawTarget: 0.75, path: BENCH_PATH, script: (s) => writeGetByIdScript(scriptDir, `${s}-get-by-id`, `${BENCH_PATH}/`, idFiles[s]) },
    { key: 'list', label: 'GET list (limit 20, total)', target: 1.0, path: `${BENCH_PATH}?limit=20`, script: (s) => writeStaticScript(scriptDir, `${s}-list`) },
    { key: 'post', label: 'POST with validation', target: 0.7, path: BENCH_PATH, script: (s) => writePostScript(scriptDir, `${s}-post`, POST_BODY) },
  ];
  const scenarios = allScenarios.filter((s) => config.scenarios.includes(s.key));

  interface Measured {
    scenario: Scenario;
    dyn: ReturnType<typeof combine>;
    bare: ReturnType<typeof combine>;
    ratio: number;
    met: boolean;
    /** The raw ceiling, for a scenario with a rawTarget. */
    raw?: { result: ReturnType<typeof combine>; ratio: number; target: number; met: boolean };
  }
  const results: Measured[] = [];
  const segmentSeconds = Math.max(1, Math.round(config.seconds / config.rounds));
  for (const scenario of scenarios) {
    const servers: ServerName[] = scenario.rawTarget === undefined ? ['dyn', 'bare'] : ['dyn', 'bare', 'raw'];
    const options = (server: ServerName) => ({ url: urls[server] + scenario.path, script: scenario.script(server), connections: config.connections, threads: config.threads });
    console.log(`${scenario.label}: ${servers.join(', ')} …`);
    if (config.warmupSeconds > 0) for (const server of servers) await runWrk({ ...options(server), seconds: config.warmupSeconds });
    const rounds = Object.fromEntries(servers.map((server) => [server, [] as Measured1[]])) as Record<ServerName, Measured1[]>;
    for (let round = 0; round < config.rounds; round++) {
      // Each round starts with the next server, so none is always measured first.
      for (let i = 0; i < servers.length; i++) {
        const server = servers[(round + i) % servers.length]!;
        const cpuBefore = cpuMicros(pids[server]);
        const threadBefore = cpuMicros(pids[server], true);
        const result = await runWrk({ ...options(server), seconds: segmentSeconds });
        const cpuAfter = cpuMicros(pids[server]);
        const threadAfter = cpuMicros(pids[server], true);
        rounds[server].push({
          ...result,
          cpuMicros: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore,
          threadMicros: threadBefore === null || threadAfter === null ? null : threadAfter - threadBefore,
        });
        await sleep(500); // let buffered audit entries and call counts flush before the next run
      }
    }
    const measured = {} as Record<ServerName, ReturnType<typeof combine>>;
    for (const server of servers) {
      const result = combine(rounds[server]);
      measured[server] = result;
      const perRound = rounds[server].map((r) => fmtRps(r.requestsPerSecond)).join(' / ');
      console.log(`  ${server}: ${fmtRps(result.requestsPerSecond)} req/s (rounds ${perRound}), p50 ${fmtMs(result.latency.p50)}, p99 ${fmtMs(result.latency.p99)}${result.cpuMicrosPerRequest === null ? '' : `, ${result.cpuMicrosPerRequest.toFixed(1)} µs CPU per request`}${result.threadMicrosPerRequest === null || result.threadBusy === null ? '' : ` (request thread ${result.threadMicrosPerRequest.toFixed(1)} µs, busy ${pct(result.threadBusy)})`}${errorsOf(result) ? ` (errors: ${errorsOf(result)})` : ''}`);
    }
    const ratio = measured.dyn.requestsPerSecond / measured.bare.requestsPerSecond;
    const entry: Measured = { scenario, dyn: measured.dyn, bare: measured.bare, ratio, met: ratio >= scenario.target };
    if (scenario.rawTarget !== undefined) {
      const rawRatio = measured.dyn.requestsPerSecond / measured.raw.requestsPerSecond;
      entry.raw = { result: measured.raw, ratio: rawRatio, target: scenario.rawTarget, met: rawRatio >= scenario.rawTarget };
    }
    results.push(entry);
  }

  const rows = [
    ['Scenario', 'dyn req/s', 'p50', 'p99', 'bare req/s', 'p50', 'p99', 'dyn/bare', 'target', 'status', 'raw req/s', 'dyn/raw', 'target', 'status'],
    ...results.map((r) => [
      r.scenario.label,
      fmtRps(r.dyn.requestsPerSecond),
      fmtMs(r.dyn.latency.p50),
      fmtMs(r.dyn.latency.p99),
      fmtRps(r.bare.requestsPerSecond),
      fmtMs(r.bare.latency.p50),
      fmtMs(r.bare.latency.p99),
      pct(r.ratio),
      `≥ ${pct(r.scenario.target)}`,
      r.met ? 'met' : 'NOT MET',
      r.raw ? fmtRps(r.raw.result.requestsPerSecond) : '—',
      r.raw ? pct(r.raw.ratio) : '—',
      r.raw ? `≥ ${pct(r.raw.target)}` : '—',
      r.raw ? (r.raw.met ? 'met' : 'NOT MET') : '—',
    ]),
  ];
  console.log(`\n${table(rows)}\n`);
  // The same comparison by cost: CPU time the server process spent per request (all threads).
  const cpu = (result: ReturnType<typeof combine> | undefined): string => (result?.cpuMicrosPerRequest == null ? '—' : `${result.cpuMicrosPerRequest.toFixed(1)} µs`);
  const cpuRatio = (other: ReturnType<typeof combine> | undefined, dynResult: ReturnType<typeof combine>): string =>
    other?.cpuMicrosPerRequest == null || dynResult.cpuMicrosPerRequest == null ? '—' : pct(other.cpuMicrosPerRequest / dynResult.cpuMicrosPerRequest);
  if (results.some((r) => r.dyn.cpuMicrosPerRequest !== null)) {
    const cpuRows = [
      ['CPU per request', 'dyn', 'bare', 'raw', 'bare/dyn', 'raw/dyn'],
      ...results.map((r) => [r.scenario.label, cpu(r.dyn), cpu(r.bare), cpu(r.raw?.result), cpuRatio(r.bare, r.dyn), r.raw ? cpuRatio(r.raw.result, r.dyn) : '—']),
    ];
    console.log(`${table(cpuRows)}\n(user + system time of each server process, all threads, over the requests it answered; x/dyn is dyn's throughput relative to x when CPU is the limit)\n`);
  }
  for (const r of results) {
    for (const [server, result] of [['dyn', r.dyn], ['bare', r.bare], ['raw', r.raw?.result]] as const) {
      const errors = result ? errorsOf(result) : null;
      if (errors) console.log(`warning: ${r.scenario.label} on ${server} had errors (${errors}); its figures are suspect`);
    }
  }

  const resultsDir = join(BENCH_DIR, 'results');
  mkdirSync(resultsDir, { recursive: true });
  // ISO 8601 basic format: no colons, so the name is valid on every file system.
  const file = join(resultsDir, `${date.toISOString().replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '')}.json`);
  const saved = {
    date: date.toISOString(),
    code,
    machine,
    config,
    seeding: { dynSeconds: dynSeedSeconds, bareSeconds: bareSeedSeconds, dynThrough: `POST ${BENCH_PATH}`, bareThrough: 'one transaction at startup' },
    scenarios: results.map((r) => ({
      key: r.scenario.key,
      label: r.scenario.label,
      path: r.scenario.path,
      target: r.scenario.target,
      ratio: r.ratio,
      met: r.met,
      dyn: r.dyn,
      bare: r.bare,
      ...(r.raw ? { raw: r.raw.result, rawRatio: r.raw.ratio, rawTarget: r.raw.target, rawMet: r.raw.met } : {}),
    })),
  };
  writeFileSync(file, JSON.stringify(saved, null, 2) + '\n');
  console.log(`saved ${file.slice(ROOT.length + 1)}`);
  if (profileDir) console.log(`dyn's CPU profile goes to ${profileDir} when it stops`);
}

/** Runs the selected scale scripts one after another; a failed one is reported and the rest still run. */
function runScaleScenarios(): void {
  for (const key of config.scenarios.filter((name) => name in SCALE_SCENARIOS)) {
    console.log(`\n==== ${key} (node bench/${SCALE_SCENARIOS[key]})\n`);
    const run = spawnSync(process.execPath, [join(BENCH_DIR, SCALE_SCENARIOS[key]!)], { cwd: ROOT, stdio: 'inherit', env: process.env });
    if (run.status !== 0) {
      console.error(`${key} failed (${run.signal ?? `exit ${run.status}`})`);
      process.exitCode = 1;
    }
  }
}

try {
  if (config.scenarios.some((name) => HTTP_SCENARIOS.includes(name))) await main();
  if (!shuttingDown) runScaleScenarios();
} catch (error) {
  if (!shuttingDown) {
    console.error(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  }
} finally {
  if (!shuttingDown) {
    shuttingDown = true;
    await shutdown();
  }
}
