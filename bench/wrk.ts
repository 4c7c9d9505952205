/**
 * Drives wrk (a C load generator that costs little CPU) and reads its figures back. The Lua
 * scripts are generated into the run's temp directory; each ends with a done() that prints one
 * JSON line, so no parsing of wrk's human-readable output is needed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface WrkResult {
  requests: number;
  durationSeconds: number;
  requestsPerSecond: number;
  /** Milliseconds. */
  latency: { p50: number; p90: number; p99: number; max: number; mean: number };
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
}

export interface WrkOptions {
  url: string;
  script: string;
  seconds: number;
  connections: number;
  threads: number;
}

export const INSTALL_HINT = 'wrk is not installed: install it (Debian/Ubuntu: sudo apt-get install -y wrk; macOS: brew install wrk) and run npm run bench again';

/** wrk's version line, or null when it is not on PATH. */
export function wrkVersion(): string | null {
  const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  if (probe.error) return null;
  const line = `${probe.stdout}${probe.stderr}`.split('\n').find((l) => /wrk/i.test(l));
  return line?.replace(/\s*Copyright.*$/i, '').trim() ?? 'wrk';
}

const REPORT = `
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\\n@@WRK {"requests":%d,"duration_us":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%f,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.max, latency.mean, e.connect, e.read, e.write, e.status, e.timeout))
end
`;

/** Lua string literal in long brackets (the content never contains the closing bracket). */
const luaString = (text: string): string => {
  if (text.includes(']==]')) throw new Error('cannot embed this text in a Lua long string');
  return `[==[${text}]==]`;
};

/** GET <prefix>/<random id from idsFile> on every request; each thread gets its own seed. */
export function writeGetByIdScript(dir: string, name: string, prefix: string, idsFile: string): string {
  const path = join(dir, `${name}.lua`);
  writeFileSync(
    path,
    `local ids = {}
for line in io.lines(${luaString(idsFile)}) do
  if #line > 0 then ids[#ids + 1] = line end
end
local prefix = ${luaString(prefix)}
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
function init(args)
  math.randomseed(os.time() * 1000 + (tid or 0))
end
function request()
  return wrk.format("GET", prefix .. ids[math.random(#ids)])
end
${REPORT}`,
  );
  return path;
}

/** The same request every time (the URL given to wrk), reporting only. */
export function writeStaticScript(dir: string, name: string): string {
  const path = join(dir, `${name}.lua`);
  writeFileSync(path, REPORT);
  return path;
}

/** POST of a fixed JSON body to the URL given to wrk. */
export function writePostScript(dir: string, name: string, body: unknown): string {
  const path = join(dir, `${name}.lua`);
  writeFileSync(
    path,
    `wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = ${luaString(JSON.stringify(body))}
${REPORT}`,
  );
  return path;
}

/** Children in flight, so the runner can stop them on Ctrl-C. */
export const running = new Set<ChildProcess>();

export function runWrk(options: WrkOptions): Promise<WrkResult> {
  const args = ['-t', String(options.threads), '-c', String(options.connections), '-d', `${options.seconds}s`, '--timeout', '10s', '-s', options.script, options.url];
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('error', (error) => {
      running.delete(child);
      reject(error);
    });
    child.on('close', (code, signal) => {
      running.delete(child);
      const line = out.split('\n').find((l) => l.startsWith('@@WRK '));
      if (code !== 0 || !line) {
        reject(new Error(`wrk ${args.join(' ')} failed (${signal ?? `exit ${code}`}): ${(err || out).trim().slice(0, 2000)}`));
        return;
      }
      const raw = JSON.parse(line.slice('@@WRK '.length)) as Record<string, number>;
      const n = (key: string): number => raw[key] ?? 0;
      const durationSeconds = n('duration_us') / 1e6;
      const ms = (us: number): number => Math.round(us) / 1000;
      resolve({
        requests: n('requests'),
        durationSeconds,
        requestsPerSecond: durationSeconds > 0 ? n('requests') / durationSeconds : 0,
        latency: { p50: ms(n('p50')), p90: ms(n('p90')), p99: ms(n('p99')), max: ms(n('max')), mean: ms(n('mean')) },
        errors: { connect: n('connect'), read: n('read'), write: n('write'), status: n('status'), timeout: n('timeout') },
      });
    });
  });
}
