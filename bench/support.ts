/**
 * What the benchmark scripts share: server processes started as children that report the port
 * they bound over IPC (`{ port }`, see report-port.ts) and stopped gracefully, integer settings
 * read from the environment, and a seeded random source so every run stores the same data.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SERVER_NODE_FLAGS } from '../src/cli/server-flags.ts';

const BENCH_DIR = import.meta.dirname;
export const ROOT = resolve(BENCH_DIR, '..');

/** Every child still running, so a script can stop (or, on exit, kill) what it started. */
export const children = new Set<ChildProcess>();

/** Node arguments that run `dynctl serve` the way users run it, reporting its port. */
export function dynServeArgs(): string[] {
  // The flags `dynctl serve` would exec itself with: it does not where there is an IPC channel.
  return [...SERVER_NODE_FLAGS, '--import', pathToFileURL(join(BENCH_DIR, 'report-port.ts')).href, join(ROOT, 'bin', 'dynctl.js'), 'serve'];
}

/** Starts a Node process with `args` and resolves with it and the port it reports. */
export function startReporting(name: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.add(proc);
  proc.on('exit', () => children.delete(proc));
  return new Promise((resolvePort, reject) => {
    const timer = setTimeout(() => fail(new Error(`${name} did not start within ${timeoutMs / 1000} s`)), timeoutMs);
    const fail = (error: Error): void => {
      clearTimeout(timer);
      reject(error);
    };
    proc.once('error', fail);
    proc.once('exit', (code, signal) => fail(new Error(`${name} exited during startup (${signal ?? `exit ${code}`})`)));
    proc.on('message', (message: { port?: unknown }) => {
      if (typeof message?.port !== 'number') return;
      clearTimeout(timer);
      resolvePort({ proc, port: message.port });
    });
  });
}

/** SIGTERM (servers finish and flush), then SIGKILL after a grace period. */
export async function stopChild(proc: ChildProcess, graceMs = 15_000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((done) => proc.once('exit', () => done()));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** An integer setting from the environment, `fallback` when unset; out of range throws naming it. */
export function intEnv(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
  return value;
}

/** Mulberry32, so every run stores the same data. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The commit measured, and whether src/ had uncommitted changes (null where git cannot tell). */
export function codeVersion(): { commit: string | null; srcDirty: boolean | null } {
  const git = (...args: string[]): string | null => {
    const result = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
    return result.status === 0 ? result.stdout.trim() : null;
  };
  const status = git('status', '--porcelain', '--', 'src');
  return { commit: git('rev-parse', '--short', 'HEAD'), srcDirty: status === null ? null : status !== '' };
}

/**
 * Runs a baseline server on 127.0.0.1 (PORT, 0 by default): reports its port to the parent over
 * IPC or prints it, and closes server and database on SIGTERM, SIGINT or the parent's going.
 */
export function serveBaseline(name: string, server: Server, closeDb: () => void): void {
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    if (process.send) process.send({ port });
    else process.stdout.write(`${name} listening on http://127.0.0.1:${port}\n`);
  });
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    server.close(() => {
      closeDb();
      process.exit(0);
    });
    server.closeAllConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('disconnect', stop);
}
