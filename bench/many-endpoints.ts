/**
 * `node bench/many-endpoints.ts`: a large tenant — BENCH_ENDPOINTS (10,000) definitions — against
 * dyn's start time, routing and memory. Prints a table and saves the figures under
 * bench/results/<UTC time>-many-endpoints.json. A script that prints figures, not a test.
 *
 * 1. Seeds the definitions straight into a fresh embedded store (as a project apply would leave
 *    them, schemas checked by the same rules): paths of 2–5 segments, a third with `:param`
 *    segments, one GET and one POST per path (sharing their schema), 3–10 fields each, 20
 *    endpoint groups, some versioned (`apiVersion`) and some with retention.
 * 2. Starts dyn (`dynctl serve`) as its own process several ways and measures, from spawn, the
 *    time to listening and to the first served dynamic request, and its RSS after start:
 *    PROJECT_WATCH=off; first start on an empty project directory (writes every definition as a
 *    file); restart on that directory (files and store in step, the everyday case); the same
 *    without the sync cache (every file parsed, as after an upgrade); and after one file was
 *    edited while dyn was down. For each project start also: the CPU the process spends in the
 *    seconds after its first request (a write-back after start shows here) and how many project
 *    files the start rewrote.
 * 3. Drives wrk over all the definitions at random (GET lists and valid POSTs) and reports req/s,
 *    p99 and RSS after the load; times the management API at this size (endpoint list page,
 *    OpenAPI, MCP tools/list, dashboard).
 * 4. In this process: the route table's rebuild after one definition changes (RouteCache on the
 *    same store, as a server instance would do it), and lookups per second on the table.
 *
 * Environment: BENCH_ENDPOINTS (10000), BENCH_SECONDS (5) of load, BENCH_CONNECTIONS (32),
 * BENCH_THREADS (2), BENCH_KEEP=1 keeps the temp directory, BENCH_SKIP_PROJECT=1 leaves out the
 * project-sync starts, BENCH_PROJECT_ONLY=1 leaves out the load, the management API and the
 * route table (starts only). Figures on a shared 2-core machine
 * are noisy: compare runs of the same hour.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createLogger } from '../src/lib/logger.ts';
import { fillPattern, parsePathPattern, versionedPath } from '../src/lib/paths.ts';
import { DEFAULT_NETWORK_ACCESS, type EndpointDoc, type EndpointGroupDoc, type HttpMethod } from '../src/model/endpoint.ts';
import { exampleRecord, validateEndpointSchema, type EndpointSchema } from '../src/model/record-schema.ts';
import { RouteCache } from '../src/runtime/route-cache.ts';
import { Revisions } from '../src/services/revisions.ts';
import { openStore } from '../src/store/open-store.ts';
import { SYNC_CACHE_FILE } from '../src/project/sync-cache.ts';
import { runWrk, running as runningWrk, wrkVersion, INSTALL_HINT, type WrkResult } from './wrk.ts';
import { children, codeVersion, dynServeArgs, intEnv, prng, startReporting, stopChild } from './support.ts';

const BENCH_DIR = import.meta.dirname;
const ROOT = resolve(BENCH_DIR, '..');
const ADMIN_PASSWORD = 'bench-admin-password-1';

interface BenchConfig {
  endpoints: number;
  seconds: number;
  connections: number;
  threads: number;
}

function readConfig(): BenchConfig {
  return {
    endpoints: intEnv('BENCH_ENDPOINTS', 10_000, 2, 100_000),
    seconds: intEnv('BENCH_SECONDS', 5, 1, 600),
    connections: intEnv('BENCH_CONNECTIONS', 32, 1, 10_000),
    threads: intEnv('BENCH_THREADS', 2, 1, 256),
  };
}

// ---------------------------------------------------------------- seed data

const AREAS = ['sales', 'billing', 'crm', 'stock', 'hr', 'support', 'shipping', 'catalog', 'finance', 'legal', 'marketing', 'ops'];
const NOUNS = ['orders', 'invoices', 'customers', 'items', 'tickets', 'notes', 'events', 'parcels', 'contracts', 'leads', 'assets', 'tasks'];
const FIELD_WORDS = ['title', 'amount', 'status', 'owner', 'note', 'code', 'count', 'active', 'due', 'tags', 'address', 'score', 'label', 'kind'];

function randomSchema(random: () => number): EndpointSchema {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const fields: Record<string, unknown> = {};
  const count = 3 + Math.floor(random() * 8);
  for (let i = 0; i < count; i++) {
    const name = `${pick(FIELD_WORDS)}${i}`;
    const kind = Math.floor(random() * 7);
    const required = random() < 0.3;
    if (kind === 0) fields[name] = { type: 'string', maxLength: 50 + Math.floor(random() * 200), ...(required ? { required } : {}) };
    else if (kind === 1) fields[name] = { type: 'number', minimum: 0, maximum: 1000 + Math.floor(random() * 100_000) };
    else if (kind === 2) fields[name] = { type: 'boolean', defaultValue: false };
    else if (kind === 3) fields[name] = { type: 'datetime' };
    else if (kind === 4) fields[name] = { type: 'array', items: { type: 'string', maxLength: 40 }, maxItems: 20 };
    else if (kind === 5) fields[name] = { type: 'string', enum: ['new', 'open', 'done', `x${Math.floor(random() * 50)}`] };
    else fields[name] = { type: 'object', children: { street: { type: 'string' }, zip: { type: 'string', maxLength: 10 } } };
  }
  return validateEndpointSchema(fields);
}

/** The collection path of definition pair `i`: 2 to 5 segments, a third with a `:param`. */
function pathOf(i: number, random: () => number): string {
  const area = AREAS[i % AREAS.length] as string;
  const noun = `${NOUNS[Math.floor(i / AREAS.length) % NOUNS.length] as string}${i}`;
  switch (Math.floor(random() * 6)) {
    case 0: return `/api/${noun}`;
    case 1: return `/api/${area}/${noun}`;
    case 2: return `/api/${area}/:tenant/${noun}`;
    case 3: return `/api/${area}/${noun}/:parentId/lines`;
    case 4: return `/api/${area}/reports/${noun}`;
    default: return `/api/${area}/:region/${noun}/entries`;
  }
}

/** One wrk request: a method, a concrete path and a JSON body (POST) or "". */
interface BenchCall {
  method: HttpMethod;
  path: string;
  body: string;
}

interface Seeded {
  calls: BenchCall[];
  /** A GET path to time the first served request with. */
  probe: string;
  seconds: number;
}

/** Seeds `count` definitions (pairs of GET and POST per path) straight into the store. */
export async function seedDefinitions(dataDir: string, count: number): Promise<Seeded> {
  const started = performance.now();
  const store = await openStore({ databaseUrl: undefined, dataDir });
  try {
    const now = new Date();
    const groups = await store.collection<EndpointGroupDoc>('endpointgroups').insertMany(
      Array.from({ length: 20 }, (_, g) => ({
        name: `Group ${g}`, nameKey: `group ${g}`, description: '', icon: '', color: '#336699', order: g,
        networkAccess: { ...DEFAULT_NETWORK_ACCESS }, createdAt: now, updatedAt: now,
      })),
    );
    const random = prng(20261125);
    const docs: Array<Omit<EndpointDoc, '_id'>> = [];
    const calls: BenchCall[] = [];
    for (let pair = 0; docs.length < count; pair++) {
      const path = pathOf(pair, random);
      const schema = randomSchema(random);
      const apiVersion = random() < 0.05 ? 'v2' : null;
      const retentionDays = random() < 0.05 ? 30 : null;
      const groupId = random() < 0.8 ? (groups[pair % groups.length] as EndpointGroupDoc)._id : null;
      const pattern = parsePathPattern(path);
      const concrete = fillPattern(pattern, Object.fromEntries(pattern.paramNames.map((name) => [name, `${name}-${pair % 7}`])));
      for (const method of ['GET', 'POST'] as const) {
        if (docs.length >= count) break;
        docs.push({
          name: `${method} ${path}`, description: `Bench definition ${docs.length}`, slug: `bench-${docs.length}`,
          path, method, accessType: 'public', allowedGroupIds: [], groupId, schema,
          networkAccess: { ...DEFAULT_NETWORK_ACCESS }, inheritGroupNetworkAccess: true, enabled: true,
          apiVersion, isSystem: false, retentionDays, handler: { enabled: false, code: '' },
          callCount: 0, revision: 1, createdAt: new Date(now.getTime() + docs.length), updatedAt: now,
        });
        const served = apiVersion && random() < 0.5 ? versionedPath(concrete, apiVersion) : concrete;
        calls.push({ method, path: method === 'GET' ? `${served}?limit=5` : served, body: method === 'POST' ? JSON.stringify(exampleRecord(schema)) : '' });
      }
    }
    for (let i = 0; i < docs.length; i += 1000) await store.collection<EndpointDoc>('endpoints').insertMany(docs.slice(i, i + 1000) as EndpointDoc[]);
    // Every instance rebuilds its routes when this revision moves.
    await new Revisions(store, 0).bump('endpoints');
    const probe = calls.find((c) => c.method === 'GET')?.path ?? '/api/none';
    return { calls, probe, seconds: (performance.now() - started) / 1000 };
  } finally {
    await store.close();
  }
}

// ---------------------------------------------------------------- the server process

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

interface Started {
  proc: ChildProcess;
  url: string;
  listeningMs: number;
  firstRequestMs: number;
  rssMb: number;
}

/** Starts `dynctl serve`; times spawn → listening (port over IPC) → first served dynamic request. */
async function startDyn(env: NodeJS.ProcessEnv, probe: string): Promise<Started> {
  const t0 = performance.now();
  const { proc, port } = await startReporting('dyn', dynServeArgs(), env, 180_000);
  const listeningMs = performance.now() - t0;
  const url = `http://127.0.0.1:${port}`;
  const first = await fetch(url + probe);
  await first.arrayBuffer();
  if (first.status !== 200) throw new Error(`first request GET ${probe}: ${first.status}`);
  const firstRequestMs = performance.now() - t0;
  return { proc, url, listeningMs, firstRequestMs, rssMb: rssMb(proc.pid as number) };
}

/** Times one management call (ms) and returns its parsed body. */
async function timed(url: string, method: string, path: string, token: string, body?: unknown): Promise<{ ms: number; status: number; bytes: number; json: any }> {
  const t0 = performance.now();
  const response = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  const ms = performance.now() - t0;
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { ms, status: response.status, bytes: Buffer.byteLength(text), json };
}

// ---------------------------------------------------------------- wrk

export function writeCallsScript(dir: string, calls: readonly BenchCall[]): string {
  const file = join(dir, 'calls.tsv');
  writeFileSync(file, calls.map((c) => `${c.method}\t${c.path}\t${c.body}`).join('\n') + '\n');
  const script = join(dir, 'many-endpoints.lua');
  writeFileSync(
    script,
    `local calls = {}
for line in io.lines([==[${file}]==]) do
  local method, path, body = line:match("^(%u+)\\t([^\\t]+)\\t(.*)$")
  if method then calls[#calls + 1] = { method, path, body } end
end
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
function init(args)
  math.randomseed(os.time() * 1000 + (tid or 0))
end
local json = { ["Content-Type"] = "application/json" }
function request()
  local c = calls[math.random(#calls)]
  if c[1] == "POST" then return wrk.format("POST", c[2], json, c[3]) end
  return wrk.format("GET", c[2])
end
local statuses = {}
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\\n@@WRK {"requests":%d,"duration_us":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%f,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.max, latency.mean, e.connect, e.read, e.write, e.status, e.timeout))
end
`,
  );
  return script;
}

// ---------------------------------------------------------------- in-process: the route table

async function measureRebuild(dataDir: string, probe: string): Promise<{ fullBuildMs: number; rebuildMs: number; lookupsPerSecond: number; heapMb: number }> {
  const store = await openStore({ databaseUrl: undefined, dataDir });
  try {
    const revisions = new Revisions(store, 0);
    const routes = new RouteCache({ store, revisions, logger: createLogger('silent') });
    let t0 = performance.now();
    const table = await routes.current();
    const fullBuildMs = performance.now() - t0;
    const one = table.endpoints[Math.floor(table.endpoints.length / 2)] as (typeof table.endpoints)[number];
    await store.collection<EndpointDoc>('endpoints').updateOne({ _id: one.doc._id }, { $set: { description: 'changed', updatedAt: new Date() }, $inc: { revision: 1 } });
    await revisions.bump('endpoints');
    t0 = performance.now();
    const rebuilt = await routes.current();
    const rebuildMs = performance.now() - t0;
    if (rebuilt === table || rebuilt.endpoint(one.doc._id)?.doc.description !== 'changed') throw new Error('the rebuilt table does not hold the change');
    const paths = table.endpoints.map((e) => e.pattern.path);
    const path = probe.split('?')[0] as string;
    t0 = performance.now();
    let n = 0;
    while (performance.now() - t0 < 500) {
      for (let i = 0; i < 1000; i++) rebuilt.lookup('GET', i % 2 ? path : (paths[i % paths.length] as string));
      n += 1000;
    }
    const lookupsPerSecond = n / ((performance.now() - t0) / 1000);
    return { fullBuildMs, rebuildMs, lookupsPerSecond, heapMb: Math.round(process.memoryUsage().heapUsed / 2 ** 20) };
  } finally {
    await store.close();
  }
}

// ---------------------------------------------------------------- the engine under load

interface EngineFigures {
  load: WrkResult;
  steady: WrkResult;
  rssAfterLoadMb: number;
  rssAfterSteadyMb: number;
  rssAfterManagementMb: number;
  api: Record<string, { ms: number; status: number; bytes: number }>;
}

/** Two wrk rounds over every definition, then the management API at this size. */
async function measureEngine(dyn: Started, tempDir: string, calls: readonly BenchCall[], config: BenchConfig, log: (line: string) => void): Promise<EngineFigures> {
  const scriptDir = join(tempDir, 'wrk');
  mkdirSync(scriptDir);
  const script = writeCallsScript(scriptDir, calls);
  const load: WrkResult = await runWrk({ url: dyn.url, script, seconds: config.seconds, connections: config.connections, threads: config.threads });
  const rssAfterLoadMb = rssMb(dyn.proc.pid as number);
  log(`load over ${calls.length} routes: ${fmt(load.requestsPerSecond)} req/s, p99 ${load.latency.p99} ms, RSS after load ${rssAfterLoadMb} MB`);
  // A second round: every validator the first compiled is there now (the steady state).
  const steady: WrkResult = await runWrk({ url: dyn.url, script, seconds: config.seconds, connections: config.connections, threads: config.threads });
  const rssAfterSteadyMb = rssMb(dyn.proc.pid as number);
  log(`load again: ${fmt(steady.requestsPerSecond)} req/s, p99 ${steady.latency.p99} ms, RSS ${rssAfterSteadyMb} MB`);
  const login = await timed(dyn.url, 'POST', '/api/auth/login', '', { login: 'admin', password: ADMIN_PASSWORD });
  const token = login.json?.data?.accessToken as string;
  if (!token) throw new Error(`login failed: ${login.status}`);
  const api: Record<string, { ms: number; status: number; bytes: number }> = {};
  const management = async (label: string, method: string, path: string, body?: unknown): Promise<any> => {
    const result = await timed(dyn.url, method, path, token, body);
    api[label] = { ms: result.ms, status: result.status, bytes: result.bytes };
    return result.json;
  };
  await management('GET /api/endpoints (page 1, 50)', 'GET', '/api/endpoints?page=1&limit=50');
  await management('GET /api/endpoints (page 100, 50)', 'GET', '/api/endpoints?page=100&limit=50');
  await management('GET /api/openapi.json (first)', 'GET', '/api/openapi.json');
  await management('GET /api/openapi.json (cached)', 'GET', '/api/openapi.json');
  const mcp = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
  const listed = await management('MCP tools/list (first page)', 'POST', '/api/mcp', mcp);
  const cursor = listed?.result?.nextCursor as string | undefined;
  if (cursor) await management('MCP tools/list (next page)', 'POST', '/api/mcp', { ...mcp, id: 2, params: { cursor } });
  await management('GET /api/dashboard/stats', 'GET', '/api/dashboard/stats');
  const rssAfterManagementMb = rssMb(dyn.proc.pid as number);
  log(`management API timed; RSS ${rssAfterManagementMb} MB (the OpenAPI document of every endpoint built and cached)`);
  return { load, steady, rssAfterLoadMb, rssAfterSteadyMb, rssAfterManagementMb, api };
}

// ---------------------------------------------------------------- project-sync starts

/** How long a project start is watched after its first request. */
const AFTER_START_MS = 3000;

interface ProjectStart {
  files: number;
  /** Project files whose mtime changed across the start, or that it removed. */
  filesWrittenOrRemoved: number;
  cpuAfterStartMs: number;
}

/** User + system CPU time of a process so far (ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

/** Every file of the project directory (one level of kind directories) with its mtime. */
function projectMtimes(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  let kinds: string[];
  try {
    kinds = readdirSync(dir);
  } catch {
    return out;
  }
  for (const kind of kinds) {
    let names: string[];
    try {
      names = readdirSync(join(dir, kind));
    } catch {
      continue;
    }
    for (const name of names) out.set(`${kind}/${name}`, statSync(join(dir, kind, name)).mtimeMs);
  }
  return out;
}

/** An edit made while dyn is down: the description of the middle endpoint file. */
function editOneFile(dir: string): void {
  const names = readdirSync(join(dir, 'endpoints')).filter((name) => name.endsWith('.yaml')).sort();
  const file = join(dir, 'endpoints', names[Math.floor(names.length / 2)] as string);
  const text = readFileSync(file, 'utf8');
  const edited = text.replace(/^description: .*$/m, 'description: Edited while dyn was down');
  if (edited === text) throw new Error(`${file} has no description line to edit`);
  writeFileSync(file, edited);
}

// ---------------------------------------------------------------- run

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  const line = (row: string[]): string => row.map((cell, col) => (col === 0 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join('  ');
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

export async function runManyEndpoints(config: BenchConfig = readConfig(), log: (line: string) => void = console.log): Promise<Record<string, unknown>> {
  if (!process.env.BENCH_PROJECT_ONLY && !wrkVersion()) throw new Error(INSTALL_HINT);
  const tempDir = mkdtempSync(join(os.tmpdir(), 'dyn-many-'));
  const dataDir = join(tempDir, 'data');
  const projectDir = join(tempDir, 'project');
  mkdirSync(dataDir);
  try {
    const seeded = await seedDefinitions(dataDir, config.endpoints);
    log(`seeded ${config.endpoints} definitions (${seeded.calls.length} routes to drive) in ${seeded.seconds.toFixed(1)} s`);
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of ['DATABASE_URL', 'NODE_ENV', 'REVISION_CHECK_MS', 'BODY_LIMIT', 'CORS_ORIGINS', 'JWT_SECRET', 'JWT_REFRESH_SECRET', 'BCRYPT_ROUNDS', 'PROJECT_WATCH']) delete env[name];
    Object.assign(env, { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, PROJECT_DIR: projectDir, DEFAULT_ADMIN_PASSWORD: ADMIN_PASSWORD, LOG_LEVEL: 'warn', SQLITE_SYNCHRONOUS: 'NORMAL' });

    const starts: Record<string, Omit<Started, 'proc' | 'url'>> = {};
    const startCase = async (name: string, extra: NodeJS.ProcessEnv, keep = false): Promise<Started> => {
      const started = await startDyn({ ...env, ...extra }, seeded.probe);
      starts[name] = { listeningMs: started.listeningMs, firstRequestMs: started.firstRequestMs, rssMb: started.rssMb };
      log(`start (${name}): listening after ${fmt(started.listeningMs)} ms, first request served after ${fmt(started.firstRequestMs)} ms, RSS ${started.rssMb} MB`);
      if (!keep) await stopChild(started.proc);
      return started;
    };
    // The load runs on the instance without project sync: its figures are the engine's own.
    const dyn = await startCase('PROJECT_WATCH=off', { PROJECT_WATCH: 'off' }, true);
    const engineFigures = process.env.BENCH_PROJECT_ONLY ? null : await measureEngine(dyn, tempDir, seeded.calls, config, log);
    await stopChild(dyn.proc);

    // With project sync (the default): the directory is written from the store on the first start,
    // and read back (in step, nothing to apply) on the next.
    const projectStarts: Record<string, ProjectStart> = {};
    if (!process.env.BENCH_SKIP_PROJECT) {
      const projectCase = async (name: string, before: () => void = () => {}): Promise<void> => {
        before();
        const mtimes = projectMtimes(projectDir);
        const started = await startCase(name, {}, true);
        // What the process still does once serving (a write-back after start shows here).
        const cpu0 = cpuMs(started.proc.pid as number);
        await new Promise((done) => setTimeout(done, AFTER_START_MS));
        const cpuAfterStartMs = cpuMs(started.proc.pid as number) - cpu0;
        await stopChild(started.proc);
        const after = projectMtimes(projectDir);
        let rewritten = 0;
        for (const [file, mtime] of after) if (mtimes.get(file) !== mtime) rewritten++;
        for (const file of mtimes.keys()) if (!after.has(file)) rewritten++;
        projectStarts[name] = { files: after.size, filesWrittenOrRemoved: rewritten, cpuAfterStartMs };
        log(`  ${after.size} files in the project dir, ${rewritten} written or removed by this start; ${fmt(cpuAfterStartMs)} ms CPU in the ${AFTER_START_MS / 1000} s after the first request`);
      };
      await projectCase('empty project dir: writes every file');
      await projectCase('project dir in step');
      await projectCase('project dir in step, again');
      await projectCase('project dir in step, no sync cache (every file parsed)', () => rmSync(join(dataDir, SYNC_CACHE_FILE), { force: true }));
      await projectCase('one file edited while down', () => editOneFile(projectDir));
    }

    const rebuild = process.env.BENCH_PROJECT_ONLY ? null : await measureRebuild(dataDir, seeded.probe);
    if (rebuild) log(`route table in process: full build ${fmt(rebuild.fullBuildMs)} ms, rebuild after one change ${fmt(rebuild.rebuildMs, 1)} ms, ${fmt(rebuild.lookupsPerSecond)} lookups/s`);

    const startRows = Object.entries(starts).map(([name, s]) => [
      `start, ${name}`, `${fmt(s.listeningMs)} ms`, `${fmt(s.firstRequestMs)} ms`, `${s.rssMb} MB`,
      projectStarts[name] ? fmt(projectStarts[name].filesWrittenOrRemoved) : '',
      projectStarts[name] ? `${fmt(projectStarts[name].cpuAfterStartMs)} ms` : '',
    ]);
    log('');
    log(table([['Start (spawn →)', 'listening', 'first request', 'RSS', 'files written', `CPU in ${AFTER_START_MS / 1000} s after`], ...startRows]));
    if (engineFigures) {
      const { load, steady, rssAfterLoadMb, rssAfterSteadyMb, rssAfterManagementMb, api } = engineFigures;
      log('');
      log(table([
        ['Load and table', 'figure'],
        ['routes driven (GET list + POST)', fmt(seeded.calls.length)],
        ['req/s', fmt(load.requestsPerSecond)],
        ['p50 / p99', `${load.latency.p50} / ${load.latency.p99} ms`],
        ['wrk errors (status = non-2xx/3xx)', JSON.stringify(load.errors)],
        ['RSS after load', `${rssAfterLoadMb} MB`],
        ['second round: req/s, p99', `${fmt(steady.requestsPerSecond)}, ${steady.latency.p99} ms`],
        ['RSS after second round', `${rssAfterSteadyMb} MB`],
        ['RSS after the management API calls below', `${rssAfterManagementMb} MB`],
        ...(rebuild ? [
          ['route table full build (10k from store)', `${fmt(rebuild.fullBuildMs)} ms`],
          ['route table rebuild after one change', `${fmt(rebuild.rebuildMs, 1)} ms`],
          ['lookups/s (in process)', fmt(rebuild.lookupsPerSecond)],
        ] : []),
      ]));
      log('');
      log(table([['Management API', 'ms', 'status', 'bytes'], ...Object.entries(api).map(([label, r]) => [label, fmt(r.ms, 1), String(r.status), fmt(r.bytes)])]));
    }
    const engine = starts['PROJECT_WATCH=off'] as Omit<Started, 'proc' | 'url'>;
    const inStep = starts['project dir in step'];
    const goals = {
      startUnder5s: engine.firstRequestMs < 5000,
      rssUnder500Mb: Math.max(engine.rssMb, engineFigures?.rssAfterLoadMb ?? 0, engineFigures?.rssAfterSteadyMb ?? 0) < 500,
      ...(inStep ? { projectInStepStartUnder5s: inStep.firstRequestMs < 5000 } : {}),
    };
    log(`\ngoals (PROJECT_WATCH=off instance): start < 5 s ${goals.startUnder5s ? 'met' : 'NOT MET'}; RSS < 500 MB ${goals.rssUnder500Mb ? 'met' : 'NOT MET'}${inStep ? `; with a project dir in step: start < 5 s ${goals.projectInStepStartUnder5s ? 'met' : 'NOT MET'}` : ''} (2 shared cores: figures are noisy)`);
    const { load, steady, rssAfterLoadMb, rssAfterSteadyMb, rssAfterManagementMb, api } = engineFigures ?? {};
    return { config, seedSeconds: seeded.seconds, starts, projectStarts, load, rssAfterLoadMb, steady, rssAfterSteadyMb, rssAfterManagementMb, rebuild, managementApi: api, goals };
  } finally {
    for (const child of [...children]) await stopChild(child);
    if (process.env.BENCH_KEEP) log(`kept ${tempDir}`);
    else rmSync(tempDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] as string).href) {
  process.on('exit', () => {
    for (const child of [...children, ...runningWrk]) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));
  const date = new Date();
  const code = codeVersion();
  console.log(`dyn many-endpoints benchmark — ${date.toISOString()} — code ${code.commit ?? 'unknown'}${code.srcDirty ? ' + uncommitted changes in src/' : ''}`);
  console.log(`machine: ${os.cpus().length} CPUs, ${Math.round(os.totalmem() / 2 ** 30)} GB, Node ${process.version}\n`);
  try {
    const figures = await runManyEndpoints();
    const dir = join(BENCH_DIR, 'results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${date.toISOString().replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '')}-many-endpoints.json`);
    writeFileSync(file, JSON.stringify({ date: date.toISOString(), code, ...figures }, null, 2) + '\n');
    console.log(`saved ${file.slice(ROOT.length + 1)}`);
  } catch (error) {
    console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 1;
  }
}
