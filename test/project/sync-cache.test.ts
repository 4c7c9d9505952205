import { existsSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SYNC_CACHE_FILE } from '../../src/project/sync-cache.ts';
import { parseYaml } from '../../src/project/yaml-source.ts';
import type { TestServer } from '../helpers/test-server.ts';
import { snapshot } from './helpers.ts';
import { adminCall, copyOfSampleProject, endpointYaml, sleep, syncServers, syncTempDir, watching } from './sync-helpers.ts';

/**
 * The sync cache (src/project/sync-cache.ts): a start remembers what was in step in DATA_DIR, so
 * the next start parses only changed files and applies nothing when nothing changed. What a user
 * sees must be exactly as without it: every edit made while the server was down is applied,
 * however its size and mtime look, and a start where nothing changed writes nothing.
 */
const servers = syncServers();
const start = (dir: string, dataDir: string): Promise<TestServer> => servers.start(watching(dir), dataDir);
const stop = servers.stop;
const call = adminCall;
const exported = (t: TestServer): Promise<any> => call(t, 'GET', '/api/project/export?format=json');
const projectStatus = (t: TestServer): Promise<any> => call(t, 'GET', '/api/project/status');
const shopColor = async (t: TestServer): Promise<string> => (await exported(t)).groups.find((g: any) => g.name === 'Shop').color;
/** Every file's mtime, by path relative to dir. */
function mtimes(dir: string): Record<string, number> {
  return Object.fromEntries(Object.keys(snapshot(dir)).map((rel) => [rel, statSync(join(dir, rel)).mtimeMs]));
}
const GROUP_FILE = 'groups/shop.yaml';

/** A sample project applied once (so the cache holds it), the server stopped again. */
async function syncedOnce(): Promise<{ dir: string; dataDir: string }> {
  const dir = copyOfSampleProject();
  const dataDir = syncTempDir('dyn-sync-data-');
  const first = await start(dir, dataDir);
  // The apply created everything; the write-back that follows finds nothing to write and remembers the state.
  await sleep(600);
  await stop(first);
  expect(existsSync(join(dataDir, SYNC_CACHE_FILE))).toBe(true);
  return { dir, dataDir };
}

describe('sync cache: starts after the server was down', () => {
  it('a start where nothing changed applies nothing and writes no file', async () => {
    const { dir, dataDir } = await syncedOnce();
    const before = mtimes(dir);
    const contents = snapshot(dir);
    const t = await start(dir, dataDir);
    try {
      expect((await projectStatus(t)).lastReconcile).toMatchObject({ ok: true, summary: { create: 0, update: 0, delete: 0 } });
      // Past a few write-back polls.
      await sleep(800);
      expect(mtimes(dir)).toEqual(before);
      expect(snapshot(dir)).toEqual(contents);
      // Still watched: an edit now is applied.
      writeFileSync(join(dir, 'endpoints', 'pong.yaml'), endpointYaml('/api/pong'));
      await waitServed(t, '/api/pong');
    } finally {
      await stop(t);
    }
  });

  it('an edit made while down with the same size and the same mtime is still applied', async () => {
    const { dir, dataDir } = await syncedOnce();
    const file = join(dir, GROUP_FILE);
    const { atime, mtime, size } = statSync(file);
    writeFileSync(file, readFileSync(file, 'utf8').replace('color: "#0ea5e9"', 'color: "#0ea5e8"'));
    utimesSync(file, atime, mtime);
    expect(statSync(file).size).toBe(size);
    expect(statSync(file).mtimeMs).toBe(mtime.getTime());
    const t = await start(dir, dataDir);
    try {
      expect(await shopColor(t)).toBe('#0ea5e8');
      expect((await projectStatus(t)).lastReconcile).toMatchObject({ ok: true, summary: { create: 0, update: 1, delete: 0 } });
    } finally {
      await stop(t);
    }
  });

  it('a file replaced by one with identical content (new inode, new mtime) changes nothing', async () => {
    const { dir, dataDir } = await syncedOnce();
    const file = join(dir, GROUP_FILE);
    const text = readFileSync(file);
    rmSync(file);
    writeFileSync(file, text);
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    const contents = snapshot(dir);
    const t = await start(dir, dataDir);
    try {
      expect((await projectStatus(t)).lastReconcile).toMatchObject({ ok: true, summary: { create: 0, update: 0, delete: 0 } });
      expect(await shopColor(t)).toBe('#0ea5e9');
      await sleep(600);
      expect(snapshot(dir)).toEqual(contents);
    } finally {
      await stop(t);
    }
  });

  it('files added, removed and renamed while down are applied as without a cache', async () => {
    const { dir, dataDir } = await syncedOnce();
    writeFileSync(join(dir, 'endpoints', 'pong.yaml'), endpointYaml('/api/pong'));
    rmSync(join(dir, 'endpoints', 'categories.yaml'));
    const moved = readFileSync(join(dir, 'endpoints', 'products-list.yaml'));
    rmSync(join(dir, 'endpoints', 'products-list.yaml'));
    writeFileSync(join(dir, 'endpoints', 'renamed.yaml'), moved);
    const t = await start(dir, dataDir);
    try {
      const keys = (await exported(t)).endpoints.map((e: any) => `${e.method} ${e.path}`);
      expect(keys).toContain('GET /api/pong');
      expect(keys).toContain('GET /api/shop/products');
      expect(keys.filter((key: string) => key.endsWith('/api/shop/categories'))).toEqual([]);
      expect((await t.api('GET', '/api/pong')).status).toBe(200);
    } finally {
      await stop(t);
    }
  });

  it('a handler file edited while down is applied', async () => {
    const { dir, dataDir } = await syncedOnce();
    const file = join(dir, 'endpoints', 'orders.handler.js');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/\n*$/, '\n// edited while down\n'));
    const t = await start(dir, dataDir);
    try {
      const orders = (await exported(t)).endpoints.find((e: any) => e.path === '/api/shop/orders' && e.method === 'POST');
      expect(orders.handler.code).toContain('// edited while down');
    } finally {
      await stop(t);
    }
  });

  it('a corrupt or missing cache falls back to reading every file: edits are applied', async () => {
    const { dir, dataDir } = await syncedOnce();
    const cacheFile = join(dataDir, SYNC_CACHE_FILE);
    writeFileSync(cacheFile, '{"format":1,"files":[[');
    const file = join(dir, GROUP_FILE);
    writeFileSync(file, readFileSync(file, 'utf8').replace('color: "#0ea5e9"', 'color: "#111111"'));
    let t = await start(dir, dataDir);
    try {
      expect(await shopColor(t)).toBe('#111111');
    } finally {
      await stop(t);
    }
    rmSync(cacheFile);
    writeFileSync(file, readFileSync(file, 'utf8').replace('color: "#111111"', 'color: "#222222"'));
    t = await start(dir, dataDir);
    try {
      expect(await shopColor(t)).toBe('#222222');
    } finally {
      await stop(t);
    }
  });

  it('a store changed while down (another instance without the watcher): the files win, as without a cache', async () => {
    const { dir, dataDir } = await syncedOnce();
    const off = await servers.start({ PROJECT_DIR: dir }, dataDir);
    const shop = (await call(off, 'GET', '/api/endpoints/groups')).find((g: any) => g.name === 'Shop');
    await call(off, 'PUT', `/api/endpoints/groups/${shop._id}`, { color: '#000000' });
    await stop(off);
    const t = await start(dir, dataDir);
    try {
      expect(await shopColor(t)).toBe('#0ea5e9');
    } finally {
      await stop(t);
    }
  });

  it('a placeholder whose value changed while down is applied again', async () => {
    const { dir, dataDir } = await syncedOnce();
    const file = join(dir, GROUP_FILE);
    writeFileSync(file, readFileSync(file, 'utf8').replace('description: The sample shop\'s endpoints', 'description: "${env:DYN_SHOP_TEXT}"'));
    process.env.DYN_SHOP_TEXT = 'first';
    try {
      let t = await start(dir, dataDir);
      await sleep(600);
      await stop(t);
      process.env.DYN_SHOP_TEXT = 'second';
      t = await start(dir, dataDir);
      try {
        const stored = (await call(t, 'GET', '/api/endpoints/groups')).find((g: any) => g.name === 'Shop');
        expect(stored.description).toBe('second');
      } finally {
        await stop(t);
      }
    } finally {
      delete process.env.DYN_SHOP_TEXT;
    }
  });

  it('the rules across files still see unchanged files: a duplicate added and a group removed while down are problems, nothing is applied', async () => {
    const { dir, dataDir } = await syncedOnce();
    writeFileSync(join(dir, 'endpoints', 'again.yaml'), readFileSync(join(dir, 'endpoints', 'products-list.yaml')));
    rmSync(join(dir, GROUP_FILE));
    const t = await start(dir, dataDir);
    try {
      const status = await projectStatus(t);
      expect(status.lastReconcile).toMatchObject({ ok: false });
      const messages = status.problems.map((p: any) => `${p.file.slice(dir.length + 1)}: ${p.message}`);
      expect(messages).toContainEqual(expect.stringMatching(/^endpoints\/(again|products-list)\.yaml: duplicates the endpoint/));
      expect(messages).toContainEqual(expect.stringMatching(/^endpoints\/orders\.yaml: names the endpoint group "Shop", which is not in the project/));
      expect(await shopColor(t)).toBe('#0ea5e9');
    } finally {
      await stop(t);
    }
  });

  it('white box: an unchanged file is taken from the cache, and with the store unchanged too nothing is applied', async () => {
    const { dir, dataDir } = await syncedOnce();
    const cacheFile = join(dataDir, SYNC_CACHE_FILE);
    // The cached value of the group file altered, its hash kept: only a start that trusts the cache sees it.
    const cache = JSON.parse(readFileSync(cacheFile, 'utf8'));
    const entry = cache.files.find((e: any[]) => e[0] === GROUP_FILE);
    entry[2] = { ...entry[2], color: '#999999' };
    writeFileSync(cacheFile, JSON.stringify(cache));
    let t = await start(dir, dataDir);
    try {
      // Files and store as they were: nothing applied at all.
      expect(await shopColor(t)).toBe('#0ea5e9');
    } finally {
      await stop(t);
    }
    writeFileSync(cacheFile, JSON.stringify(cache));
    const off = await servers.start({ PROJECT_DIR: dir }, dataDir);
    await call(off, 'POST', '/api/endpoints', { name: 'Extra', path: '/api/extra', method: 'GET', accessType: 'public', schema: {} });
    await stop(off);
    t = await start(dir, dataDir);
    try {
      // The store changed: the files are applied, the unchanged group file from the cache (not parsed).
      expect(await shopColor(t)).toBe('#999999');
      expect((await t.api('GET', '/api/extra')).status).toBe(404);
    } finally {
      await stop(t);
    }
  });

  it('filling an empty directory remembers every file as a parse of it reads', async () => {
    const dataDir = syncTempDir('dyn-sync-data-');
    const off = await servers.start({}, dataDir);
    await call(off, 'POST', '/api/endpoints/groups', { name: 'Tools', color: '#112233', description: 'yes: no\n"quoted" and 123' });
    const code = 'async function handler(req, db) {\n  return { status: 200, data: `${req.query.x}` };\n}';
    await call(off, 'POST', '/api/endpoints', { name: 'Echo', path: '/api/tools/echo', method: 'POST', accessType: 'public', schema: { n: { type: 'number' } }, handler: { enabled: true, code } });
    await call(off, 'POST', '/api/endpoints', { name: '0123', description: 'true', path: '/api/tools/ping', method: 'GET', accessType: 'public', schema: {} });
    await stop(off);
    const dir = syncTempDir();
    const t = await start(dir, dataDir);
    await stop(t);
    const cache = JSON.parse(readFileSync(join(dataDir, SYNC_CACHE_FILE), 'utf8'));
    const files = Object.keys(snapshot(dir)).filter((rel) => rel.endsWith('.yaml'));
    expect(cache.files.map((entry: any[]) => entry[0]).sort()).toEqual(files.sort());
    for (const [rel, , value] of cache.files) expect(value, rel).toEqual(parseYaml(readFileSync(join(dir, rel), 'utf8')).value);
  });
});

async function waitServed(t: TestServer, path: string): Promise<void> {
  for (let i = 0; i < 150; i++) {
    if ((await t.api('GET', path)).status === 200) return;
    await sleep(20);
  }
  throw new Error(`${path} not served within 3 s`);
}
