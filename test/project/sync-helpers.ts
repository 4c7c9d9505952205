import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * Helpers for the watcher and write-back tests: temp directories that live as long as a suite
 * (not one test), copies of the sample project, and polling.
 */
export const SAMPLE_PROJECT = fileURLToPath(new URL('../../project', import.meta.url));

const dirs: string[] = [];

/** A fresh temp directory; removeSyncDirs() (in afterAll) removes it. */
export function syncTempDir(prefix = 'dyn-sync-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** A temp copy of ./project (which is never changed by a test). */
export function copyOfSampleProject(): string {
  const dir = syncTempDir();
  cpSync(SAMPLE_PROJECT, dir, { recursive: true });
  return dir;
}

export function removeSyncDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every `everyMs` until it holds; returns the time it took. Throws with `what` after timeoutMs. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 3000, everyMs = 20): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await check()) return Math.round(performance.now() - started);
    if (performance.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/** A minimal public endpoint definition as a YAML file. */
export function endpointYaml(path: string, fields: Record<string, string> = {}): string {
  const lines = { name: `Items at ${path}`, path, method: 'GET', accessType: 'public', ...fields };
  return `${Object.entries(lines)
    .map(([key, value]) => `${key}: ${value}`)
    .join('\n')}\nschema:\n  title:\n    type: string\n`;
}

/** The settings of a server that watches `dir` and writes back to it. */
export const watching = (dir: string): Record<string, string> => ({ PROJECT_WATCH: 'on', PROJECT_DIR: dir });

/**
 * In-process servers for one test file: `start` and `stop` one; whatever is still running is
 * closed after the file, and the sync temp directories removed (call at the top of the file).
 */
export function syncServers(): { start(env: Record<string, string>, dataDir?: string): Promise<TestServer>; stop(t: TestServer): Promise<void> } {
  const servers: TestServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.splice(0).map((t) => t.close()));
    removeSyncDirs();
  });
  return {
    async start(env, dataDir) {
      const t = await startTestServer(env, dataDir);
      servers.push(t);
      return t;
    },
    async stop(t) {
      servers.splice(servers.indexOf(t), 1);
      await t.close();
    },
  };
}

/** A management call as the admin that must succeed (< 300); its `data`. */
export async function adminCall(t: TestServer, method: string, path: string, body?: unknown): Promise<any> {
  const res = await t.api(method, path, { token: await t.adminToken(), ...(body === undefined ? {} : { body }) });
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
  return res.body.data;
}
