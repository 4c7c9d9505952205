import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lockFileOf } from '../../src/project/watch-lock.ts';

/**
 * The real `dynctl serve` in a child process, for what only a process shows: the ready line,
 * exit codes, signals, kill -9, two instances on one store. Every process and temp directory
 * made here is tracked; `cleanupServerProcesses()` (in afterAll/afterEach) kills and removes
 * whatever a test left behind, and an exit hook kills stragglers if the worker dies first.
 */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const DYNCTL = join(ROOT, 'bin/dynctl.js');
export const ADMIN_PASSWORD = 'admin-password-1';
export const JWT_SECRET = 'test-access-secret-0123456789-abcdef';
export const JWT_REFRESH_SECRET = 'test-refresh-secret-0123456789-abcdef';

const READY_TIMEOUT_MS = 20_000;
const EXIT_TIMEOUT_MS = 15_000;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);
const READY_LINE = /listening on (http:\/\/(?:127\.0\.0\.1|\[::1\]):(\d+))/;

/** Variables for the child; `undefined` removes a default (e.g. DEFAULT_ADMIN_PASSWORD). */
export type ServerEnv = Record<string, string | undefined>;

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  text: string;
}

export interface ServerProcess {
  url: string;
  port: number;
  dataDir: string;
  pid: number;
  /** Everything written so far, stdout then stderr interleaved in arrival order. */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** Sends the signal and resolves with the exit code (null if the process died of a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  kill9(): Promise<void>;
  api<T = any>(method: string, path: string, options?: { body?: unknown; token?: string; apiKey?: string }): Promise<ApiResponse<T>>;
  /** Logs in and returns `data` of the login response; throws unless 200. */
  login(login?: string, password?: string): Promise<{ accessToken: string; refreshToken: string; user: any }>;
}

export interface ExitedProcess {
  code: number | null;
  stdout: string;
  stderr: string;
  output: string;
}

const live = new Set<ChildProcess>();
const dirs = new Set<string>();
/** Project directories of the servers started here: a killed watcher leaves its claim file (src/project/watch-lock.ts). */
const projectDirs = new Set<string>();

process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** A fresh temp directory, removed by cleanupServerProcesses(). */
export function makeDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dyn-proc-'));
  dirs.add(dir);
  return dir;
}

/** Kills (SIGKILL) every process still running and removes the temp directories. */
export async function cleanupServerProcesses(): Promise<void> {
  await Promise.all([...live].map((child) => killAndWait(child)));
  // Claims are computed from the directories' real paths, so before the directories go.
  for (const dir of projectDirs) rmSync(lockFileOf(dir), { force: true });
  projectDirs.clear();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.clear();
}

function childEnv(dataDir: string, env: ServerEnv): Record<string, string> {
  const merged: ServerEnv = {
    // Only what the child needs: the test runner's own environment (NODE_ENV, NODE_OPTIONS,
    // secrets) must not leak into the server under test.
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TMPDIR: process.env.TMPDIR,
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    PROJECT_DIR: join(dataDir, 'project'),
    DEFAULT_ADMIN_PASSWORD: ADMIN_PASSWORD,
    BCRYPT_ROUNDS: '4',
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    ...env,
  };
  const host = merged.HOST ?? '127.0.0.1';
  if (!LOOPBACK_HOSTS.has(host)) throw new Error(`server-process: HOST must be a loopback address, not "${host}"`);
  return Object.fromEntries(Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

function spawnDynctl(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [DYNCTL, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

function capture(child: ChildProcess): { stdout: () => string; stderr: () => string; output: () => string; onData: (listener: () => void) => void } {
  let out = '';
  let err = '';
  let all = '';
  const listeners: Array<() => void> = [];
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    all += chunk;
    for (const listener of listeners) listener();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
    all += chunk;
  });
  return { stdout: () => out, stderr: () => err, output: () => all, onData: (listener) => listeners.push(listener) };
}

/** Resolves with the exit code once the process has exited and its output pipes have closed. */
function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('close', (code) => resolve(code)));
}

async function killAndWait(child: ChildProcess): Promise<void> {
  const exited = exitOf(child);
  child.kill('SIGKILL');
  await exited;
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message())), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `dynctl <args>` to completion (for commands and configurations that exit by themselves). */
export async function runDynctl(args: string[], options: { env?: ServerEnv; dataDir?: string } = {}): Promise<ExitedProcess> {
  const child = spawnDynctl(args, childEnv(options.dataDir ?? makeDataDir(), options.env ?? {}));
  const io = capture(child);
  const exited = exitOf(child);
  try {
    const code = await withTimeout(exited, EXIT_TIMEOUT_MS, () => `dynctl ${args.join(' ')} did not exit; output:\n${io.output()}`);
    return { code, stdout: io.stdout(), stderr: io.stderr(), output: io.output() };
  } catch (error) {
    await killAndWait(child);
    throw error;
  }
}

/** Starts `dynctl serve` and resolves once it has printed its ready line. */
export async function startServerProcess(options: { env?: ServerEnv; dataDir?: string } = {}): Promise<ServerProcess> {
  const dataDir = options.dataDir ?? makeDataDir();
  const env = childEnv(dataDir, options.env ?? {});
  if (env.PROJECT_DIR) projectDirs.add(env.PROJECT_DIR);
  const child = spawnDynctl(['serve'], env);
  const io = capture(child);
  const exited = exitOf(child);

  const ready = new Promise<{ url: string; port: number }>((resolve, reject) => {
    const check = (): void => {
      const match = READY_LINE.exec(io.stdout());
      if (match) resolve({ url: match[1] as string, port: Number(match[2]) });
    };
    io.onData(check);
    void exited.then((code) => reject(new Error(`dynctl serve exited with ${code} before it was ready; output:\n${io.output()}`)));
  });
  let address: { url: string; port: number };
  try {
    address = await withTimeout(ready, READY_TIMEOUT_MS, () => `dynctl serve was not ready within ${READY_TIMEOUT_MS} ms; output:\n${io.output()}`);
  } catch (error) {
    await killAndWait(child);
    throw error;
  }

  const api = async <T>(method: string, path: string, request: { body?: unknown; token?: string; apiKey?: string } = {}): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = {};
    if (request.token) headers.authorization = `Bearer ${request.token}`;
    if (request.apiKey) headers['x-api-key'] = request.apiKey;
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(address.url + path, {
      method,
      headers,
      ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
    });
    const text = await response.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: response.status, body: body as T, text };
  };

  return {
    url: address.url,
    port: address.port,
    dataDir,
    pid: child.pid as number,
    output: io.output,
    stdout: io.stdout,
    stderr: io.stderr,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      child.kill(signal);
      try {
        return await withTimeout(exited, EXIT_TIMEOUT_MS, () => `dynctl serve did not exit within ${EXIT_TIMEOUT_MS} ms of ${signal}; output:\n${io.output()}`);
      } catch (error) {
        await killAndWait(child);
        throw error;
      }
    },
    async kill9() {
      await killAndWait(child);
    },
    api,
    async login(login = 'admin', password = ADMIN_PASSWORD) {
      const response = await api<{ data: { accessToken: string; refreshToken: string; user: any } }>('POST', '/api/auth/login', { body: { login, password } });
      if (response.status !== 200) throw new Error(`login as ${login} failed: ${response.status} ${response.text}`);
      return response.body.data;
    },
  };
}
