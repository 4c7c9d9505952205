import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadProject } from '../../src/project/files.ts';
import { writeProject } from '../../src/project/write.ts';
import type { TestServer } from '../helpers/test-server.ts';
import { snapshot } from './helpers.ts';
import { adminCall, copyOfSampleProject, endpointYaml, sleep, syncServers, syncTempDir, waitFor, watching } from './sync-helpers.ts';

/**
 * The two-way sync of PROJECT_DIR and the store (src/project/sync.ts), on a real in-process
 * server over real files in temp directories: startup (files win, or an empty directory is
 * filled from the store), the watcher (files → store) and write-back (API → files).
 */
const { start, stop } = syncServers();
const call = adminCall;
const projectStatus = (t: TestServer): Promise<any> => call(t, 'GET', '/api/project/status');
const exported = (t: TestServer): Promise<any> => call(t, 'GET', '/api/project/export?format=json');
/** Status of an anonymous call of a dynamic endpoint. */
const served = async (t: TestServer, path: string, method = 'GET'): Promise<number> => (await t.api(method, path)).status;
async function endpointAt(t: TestServer, path: string, method = 'GET'): Promise<any> {
  const list = await call(t, 'GET', `/api/endpoints?limit=100&search=${encodeURIComponent(path)}`);
  return list.find((e: any) => e.path === path && e.method === method);
}
const read = (dir: string, rel: string): string => readFileSync(join(dir, rel), 'utf8');
/** Waits until the status reports a reconcile newer than `since` (an ISO time, or null). */
async function nextReconcile(t: TestServer, since: string | null, timeoutMs = 3000): Promise<any> {
  let view: any;
  await waitFor('a reconcile', async () => {
    view = await projectStatus(t);
    return view.lastReconcile !== null && view.lastReconcile.at !== since;
  }, timeoutMs);
  return view;
}
/** A reconcile reports `at` in ms: make the next one distinguishable. */
const lastAt = async (t: TestServer): Promise<string | null> => {
  await sleep(5);
  return (await projectStatus(t)).lastReconcile?.at ?? null;
};

const SAMPLE_ENDPOINTS = [
  'GET /api/shop/categories',
  'POST /api/shop/categories',
  'GET /api/shop/orders',
  'POST /api/shop/orders',
  'GET /api/shop/products',
  'POST /api/shop/products',
];
const keys = (bundle: any): string[] => bundle.endpoints.map((e: any) => `${e.method} ${e.path}`);

describe('startup', () => {
  it('a directory with files is applied to the store, and its definitions are served', async () => {
    const dir = copyOfSampleProject();
    const before = snapshot(dir);
    const t = await start(watching(dir));
    try {
      const bundle = await exported(t);
      expect(keys(bundle)).toEqual(SAMPLE_ENDPOINTS);
      expect(bundle.groups.map((g: any) => g.name)).toEqual(['Shop']);
      expect(bundle.endpoints.every((e: any) => e.group === 'Shop')).toBe(true);
      // The handler's code comes from orders.handler.js.
      expect(bundle.endpoints.find((e: any) => e.path === '/api/shop/orders' && e.method === 'POST').handler.code).toBe(read(dir, 'endpoints/orders.handler.js'));
      expect(await served(t, '/api/shop/products')).toBe(200);
      const status = await projectStatus(t);
      expect(status).toMatchObject({ dir, watching: true, problems: [], lastReconcile: { ok: true, summary: { create: 8, update: 0, delete: 0 } } });
      // Files → store only: applying the files wrote nothing back.
      expect(snapshot(dir)).toEqual(before);
    } finally {
      await stop(t);
    }
  });

  it('files win: a definition created through the API but absent from the files is removed at the next start, and a changed one is put back', async () => {
    const dataDir = syncTempDir('dyn-sync-data-');
    const dir = copyOfSampleProject();
    const first = await start(watching(dir), dataDir);
    await stop(first);

    // Changes to the store while no instance watches the directory.
    const off = await start({ PROJECT_DIR: dir }, dataDir);
    await call(off, 'POST', '/api/endpoints', { name: 'Extra', path: '/api/extra', method: 'GET', accessType: 'public', schema: {} });
    const shop = (await call(off, 'GET', '/api/endpoints/groups')).find((g: any) => g.name === 'Shop');
    await call(off, 'PUT', `/api/endpoints/groups/${shop._id}`, { color: '#000000' });
    expect(await served(off, '/api/extra')).toBe(200);
    await stop(off);
    const before = snapshot(dir);

    const t = await start(watching(dir), dataDir);
    try {
      expect(await served(t, '/api/extra')).toBe(404);
      const bundle = await exported(t);
      expect(keys(bundle)).toEqual(SAMPLE_ENDPOINTS);
      expect(bundle.groups[0].color).toBe('#0ea5e9');
      expect((await projectStatus(t)).lastReconcile).toMatchObject({ ok: true, summary: { create: 0, update: 1, delete: 1 } });
      expect(snapshot(dir)).toEqual(before);
    } finally {
      await stop(t);
    }
  });

  it('a directory with problems at startup changes nothing; the status lists them', async () => {
    const dataDir = syncTempDir('dyn-sync-data-');
    const dir = copyOfSampleProject();
    const first = await start(watching(dir), dataDir);
    await stop(first);
    writeFileSync(join(dir, 'endpoints', 'orders-list.yaml'), read(dir, 'endpoints/orders-list.yaml').replace('accessType: authenticated', 'accessType: sometimes'));
    rmSync(join(dir, 'endpoints', 'products-list.yaml'));

    const t = await start(watching(dir), dataDir);
    try {
      const status = await projectStatus(t);
      expect(status.lastReconcile).toMatchObject({ ok: false, summary: { create: 0, update: 0, delete: 0 } });
      expect(status.problems).toEqual([expect.objectContaining({ file: join(dir, 'endpoints', 'orders-list.yaml'), line: 6, path: 'accessType' })]);
      expect(keys(await exported(t))).toEqual(SAMPLE_ENDPOINTS);
      expect(await served(t, '/api/shop/products')).toBe(200);
    } finally {
      await stop(t);
    }
  });

  it('an empty PROJECT_DIR is filled from the store: one YAML file per definition, each starting with the schema line', async () => {
    const dataDir = syncTempDir('dyn-sync-data-');
    const off = await start({}, dataDir);
    const group = await call(off, 'POST', '/api/endpoints/groups', { name: 'Tools', color: '#112233' });
    await call(off, 'POST', '/api/endpoints', { name: 'Ping', path: '/api/tools/ping', method: 'GET', accessType: 'public', schema: {}, groupId: group._id });
    const code = 'async function handler(req, db) {\n  return { status: 200, data: { pong: true } };\n}';
    await call(off, 'POST', '/api/endpoints', { name: 'Echo', path: '/api/tools/echo', method: 'POST', accessType: 'public', schema: {}, handler: { enabled: true, code } });
    const store = await exported(off);
    await stop(off);

    const dir = syncTempDir();
    mkdirSync(join(dir, 'endpoints'));
    writeFileSync(join(dir, 'README.md'), 'not a definition\n');
    const t = await start(watching(dir), dataDir);
    try {
      expect(Object.keys(snapshot(dir)).sort()).toEqual(['README.md', 'endpoints/tools-echo-post.handler.js', 'endpoints/tools-echo-post.yaml', 'endpoints/tools-ping-get.yaml', 'groups/tools.yaml']);
      for (const file of ['endpoints/tools-echo-post.yaml', 'endpoints/tools-ping-get.yaml', 'groups/tools.yaml']) {
        expect(read(dir, file).split('\n')[0]).toMatch(/^# yaml-language-server: \$schema=\S+$/);
      }
      // Fields at their defaults are left out; the code lives in the handler file.
      expect(read(dir, 'endpoints/tools-ping-get.yaml').split('\n').slice(1).join('\n')).toBe(
        'name: Ping\npath: /api/tools/ping\nmethod: GET\naccessType: public\ngroup: Tools\nschema: {}\n',
      );
      expect(read(dir, 'endpoints/tools-echo-post.handler.js')).toBe(code);
      expect(read(dir, 'endpoints/tools-echo-post.yaml')).toContain('handler:\n  enabled: true\n  file: ./tools-echo-post.handler.js\n');
      // The files hold what the store holds, and the store was not changed by the start.
      const loaded = loadProject(dir);
      expect(loaded.problems).toEqual([]);
      expect(await exported(t)).toEqual(store);
      expect((await projectStatus(t)).watching).toBe(true);
    } finally {
      await stop(t);
    }
  });

  it('a missing PROJECT_DIR is created and filled from the store', async () => {
    const dataDir = syncTempDir('dyn-sync-data-');
    const off = await start({}, dataDir);
    await call(off, 'POST', '/api/endpoints', { name: 'Ping', path: '/api/ping', method: 'GET', accessType: 'public', schema: {} });
    await stop(off);

    const dir = join(syncTempDir(), 'not', 'yet');
    const t = await start(watching(dir), dataDir);
    try {
      expect(Object.keys(snapshot(dir))).toEqual(['endpoints/ping-get.yaml']);
      expect(read(dir, 'endpoints/ping-get.yaml')).toMatch(/^# yaml-language-server: \$schema=\S+\nname: Ping\n/);
      // And it is watched from then on.
      writeFileSync(join(dir, 'endpoints', 'pong.yaml'), endpointYaml('/api/pong'));
      await waitFor('the new file served', async () => (await served(t, '/api/pong')) === 200);
    } finally {
      await stop(t);
    }
  });

  it('removing every definition file is refused: nothing is deleted and the status says why', async () => {
    const dir = syncTempDir();
    const t = await start(watching(dir));
    try {
      mkdirSync(join(dir, 'endpoints'), { recursive: true });
      writeFileSync(join(dir, 'endpoints', 'only.yaml'), endpointYaml('/api/only'));
      await waitFor('the file served', async () => (await served(t, '/api/only')) === 200);
      const since = await lastAt(t);
      rmSync(join(dir, 'endpoints', 'only.yaml'));
      const status = await nextReconcile(t, since);
      expect(status.lastReconcile).toMatchObject({ ok: false, summary: { create: 0, update: 0, delete: 0 } });
      expect(status.lastReconcile.error).toMatch(/no groups, no endpoints, no cronJobs and no webhooks/);
      expect(status.problems).toEqual([{ path: 'bundle', message: 'has no groups, no endpoints, no cronJobs and no webhooks' }]);
      expect(await served(t, '/api/only')).toBe(200);
    } finally {
      await stop(t);
    }
  });

  it('with PROJECT_WATCH=off the directory is neither read nor written', async () => {
    const full = copyOfSampleProject();
    const empty = syncTempDir();
    const fullBefore = snapshot(full);
    const a = await start({ PROJECT_WATCH: 'off', PROJECT_DIR: full });
    const b = await start({ PROJECT_WATCH: 'off', PROJECT_DIR: empty });
    try {
      expect(keys(await exported(a))).toEqual([]);
      expect(await served(a, '/api/shop/products')).toBe(404);
      expect(await projectStatus(a)).toEqual({ dir: full, watching: false, lastReconcile: null, problems: [] });
      await call(a, 'POST', '/api/endpoints', { name: 'Ping', path: '/api/ping', method: 'GET', accessType: 'public', schema: {} });
      await call(b, 'POST', '/api/endpoints', { name: 'Ping', path: '/api/ping', method: 'GET', accessType: 'public', schema: {} });
      writeFileSync(join(full, 'endpoints', 'pong.yaml'), endpointYaml('/api/pong'));
      await sleep(500);
      expect(await served(a, '/api/pong')).toBe(404);
      expect(snapshot(full)).toEqual({ ...fullBefore, 'endpoints/pong.yaml': endpointYaml('/api/pong') });
      expect(readdirSync(empty)).toEqual([]);
    } finally {
      await stop(a);
      await stop(b);
    }
  });
});

describe('watcher: file changes are applied', () => {
  let t: TestServer;
  let dir: string;
  beforeAll(async () => {
    dir = copyOfSampleProject();
    t = await start(watching(dir));
  });
  afterAll(async () => {
    await stop(t);
  });
  const file = (name: string): string => join(dir, 'endpoints', name);

  it('a file added to endpoints/ is served on the next request within a second', async () => {
    const written = performance.now();
    writeFileSync(file('ping.yaml'), endpointYaml('/api/sync/ping'));
    await waitFor('GET /api/sync/ping served', async () => (await served(t, '/api/sync/ping')) === 200, 1500, 10);
    const delay = Math.round(performance.now() - written);
    console.log(`project sync: a new file was served ${delay} ms after it was written`);
    expect(await projectStatus(t)).toMatchObject({ problems: [], lastReconcile: { ok: true, summary: { create: 1, update: 0, delete: 0 } } });
  });

  it('editing a field of a file applies the change', async () => {
    writeFileSync(file('ping.yaml'), endpointYaml('/api/sync/ping', { accessType: 'authenticated' }));
    await waitFor('GET /api/sync/ping needs a login', async () => (await served(t, '/api/sync/ping')) === 401);
    expect((await endpointAt(t, '/api/sync/ping')).accessType).toBe('authenticated');
  });

  it('a file with the schema in the API\'s array form is applied and served, and left as written', async () => {
    const text = 'name: Copied\npath: /api/sync/copied\nmethod: POST\naccessType: public\nschema:\n  - name: title\n    type: string\n    required: true\n    order: 0\n  - name: size\n    type: object\n    children:\n      - {name: width, type: number}\n';
    writeFileSync(file('copied.yaml'), text);
    await waitFor('POST /api/sync/copied served', async () => (await served(t, '/api/sync/copied', 'POST')) === 400, 1500, 10);
    expect((await t.api('POST', '/api/sync/copied', { body: { title: 'x', size: { width: 2 } } })).status).toBe(201);
    expect((await endpointAt(t, '/api/sync/copied', 'POST')).schema.map((f: any) => f.name)).toEqual(['title', 'size']);
    // Polls write back only what differs from the files: the array form compares as the map it is stored as.
    await sleep(1000);
    expect(readFileSync(file('copied.yaml'), 'utf8')).toBe(text);
  });

  it('renaming a file (same content, new name) keeps the definition, its id and its serving', async () => {
    const id = (await endpointAt(t, '/api/sync/ping'))._id;
    const since = await lastAt(t);
    renameSync(file('ping.yaml'), file('renamed.yaml'));
    // Polled throughout: the endpoint must never disappear, even for a moment.
    const seen = new Set<number>();
    const started = performance.now();
    while (performance.now() - started < 800) {
      seen.add(await served(t, '/api/sync/ping'));
      await sleep(10);
    }
    expect([...seen]).toEqual([401]);
    const status = await projectStatus(t);
    expect(status.problems).toEqual([]);
    if (status.lastReconcile.at !== since) expect(status.lastReconcile.summary).toEqual({ create: 0, update: 0, delete: 0 });
    expect((await endpointAt(t, '/api/sync/ping'))._id).toBe(id);
  });

  it('deleting a file removes its definition (404)', async () => {
    rmSync(file('renamed.yaml'));
    await waitFor('GET /api/sync/ping gone', async () => (await served(t, '/api/sync/ping')) === 404);
    expect(await endpointAt(t, '/api/sync/ping')).toBeUndefined();
    expect((await projectStatus(t)).lastReconcile.summary).toEqual({ create: 0, update: 0, delete: 1 });
  });

  it('invalid YAML changes nothing: the last good state keeps serving and the status names the file and line', async () => {
    const since = await lastAt(t);
    // A good change in one file and a broken one in another: the directory is applied as a whole or not at all.
    // The GET of the resource file categories.yaml sets its own accessType.
    writeFileSync(file('categories.yaml'), read(dir, 'endpoints/categories.yaml').replace('accessType: public', 'accessType: authenticated'));
    writeFileSync(file('products-list.yaml'), read(dir, 'endpoints/products-list.yaml').replace('method: GET\n', 'method: GET\ndescription: [not closed\n'));
    const status = await nextReconcile(t, since);
    expect(status.lastReconcile).toMatchObject({ ok: false, summary: { create: 0, update: 0, delete: 0 } });
    expect(status.lastReconcile.error).toMatch(/problem/);
    expect(status.problems.length).toBeGreaterThan(0);
    for (const problem of status.problems) {
      expect(problem.file).toBe(join(dir, 'endpoints', 'products-list.yaml'));
      expect(problem.line).toEqual(expect.any(Number));
    }
    expect(status.problems[0].line).toBeGreaterThanOrEqual(5);
    expect(await served(t, '/api/shop/products')).toBe(200);
    expect(await served(t, '/api/shop/categories')).toBe(200);
    expect((await endpointAt(t, '/api/shop/products')).description).toBe('Products with their category (try ?populate=category)');
  });

  it('fixing the file applies the directory and clears the problems', async () => {
    const since = await lastAt(t);
    writeFileSync(file('products-list.yaml'), read(dir, 'endpoints/products-list.yaml').replace('description: [not closed\n', ''));
    const status = await nextReconcile(t, since);
    expect(status).toMatchObject({ problems: [], lastReconcile: { ok: true, summary: { create: 0, update: 1, delete: 0 } } });
    expect(status.lastReconcile.error).toBeUndefined();
    // The change held back while the directory was broken is applied now.
    expect(await served(t, '/api/shop/categories')).toBe(401);
    expect(await served(t, '/api/shop/products')).toBe(200);
  });

  it('a half-written file ends applied correctly, and no broken state is served meanwhile', async () => {
    writeFileSync(file('half.yaml'), endpointYaml('/api/sync/half', { description: 'before' }));
    await waitFor('GET /api/sync/half served', async () => (await served(t, '/api/sync/half')) === 200);

    const full = endpointYaml('/api/sync/half', { description: 'after', accessType: 'authenticated' });
    const cut = full.indexOf('accessType') + 'accessType: auth'.length;
    const seen = new Set<number>();
    let polling = true;
    const poll = (async () => {
      while (polling) {
        seen.add(await served(t, '/api/sync/half'));
        await sleep(5);
      }
    })();
    writeFileSync(file('half.yaml'), full.slice(0, cut));
    await sleep(30);
    writeFileSync(file('half.yaml'), full.slice(cut), { flag: 'a' });
    await waitFor('GET /api/sync/half needs a login', async () => (await served(t, '/api/sync/half')) === 401);
    await sleep(200);
    polling = false;
    await poll;
    // Only the state before and the state after: never a 404 or a 500.
    expect([...seen].every((code) => code === 200 || code === 401)).toBe(true);
    expect((await endpointAt(t, '/api/sync/half')).description).toBe('after');
    expect((await projectStatus(t)).problems).toEqual([]);
  });

  it('a problem found only when applying (an unknown user group) changes nothing and is in the status', async () => {
    const since = await lastAt(t);
    writeFileSync(file('ghosts.yaml'), endpointYaml('/api/sync/ghosts', { accessType: 'group', allowedGroups: '[Ghosts]' }));
    const status = await nextReconcile(t, since);
    expect(status.lastReconcile).toMatchObject({ ok: false, summary: { create: 0, update: 0, delete: 0 } });
    expect(status.problems).toEqual([{ path: 'endpoints[GET /api/sync/ghosts].allowedGroups', message: 'names the unknown user group "Ghosts"' }]);
    expect(await served(t, '/api/sync/ghosts')).toBe(404);
    expect(await served(t, '/api/shop/products')).toBe(200);

    const removed = await lastAt(t);
    rmSync(file('ghosts.yaml'));
    expect(await nextReconcile(t, removed)).toMatchObject({ problems: [], lastReconcile: { ok: true } });
  });

  it('editor leftovers and temp files do not start a reconcile', async () => {
    const since = await lastAt(t);
    writeFileSync(file('.orders.yaml.swp'), 'binary junk');
    writeFileSync(file('orders.yaml~'), 'name: [broken');
    writeFileSync(file('.#orders.yaml'), 'name: [broken');
    writeFileSync(file('.orders.yaml.1234.tmp'), 'name: [broken');
    await sleep(500);
    expect((await projectStatus(t)).lastReconcile.at).toBe(since);
    for (const name of ['.orders.yaml.swp', 'orders.yaml~', '.#orders.yaml', '.orders.yaml.1234.tmp']) rmSync(file(name));
  });

  it('a symlink leading out of the directory is refused with a problem in the status, and nothing is applied', async () => {
    const outside = join(syncTempDir(), 'outside.yaml');
    writeFileSync(outside, endpointYaml('/api/sync/outside'));
    const since = await lastAt(t);
    symlinkSync(outside, file('outside.yaml'));
    const status = await nextReconcile(t, since);
    expect(status.lastReconcile.ok).toBe(false);
    expect(status.problems).toEqual([{ file: join(dir, 'endpoints', 'outside.yaml'), path: '', message: 'is a symlink leading outside the project directory' }]);
    expect(await served(t, '/api/sync/outside')).toBe(404);
    expect(await served(t, '/api/shop/products')).toBe(200);

    const removed = await lastAt(t);
    rmSync(file('outside.yaml'));
    expect(await nextReconcile(t, removed)).toMatchObject({ problems: [], lastReconcile: { ok: true } });
    expect(await served(t, '/api/sync/outside')).toBe(404);
  });

  it('a file edited while a request is in flight: that request completes normally and the next one sees the change', async () => {
    // Three seconds (under the 5 s handler limit) leaves a loaded CI machine time to reconcile the edit during the call.
    const slow = (version: number) =>
      `${endpointYaml('/api/sync/slow')}handler:\n  enabled: true\n  code: |\n    async function handler(req, db) {\n      const until = Date.now() + 3000;\n      while (Date.now() < until) {}\n      return { status: 200, data: { version: ${version} } };\n    }\n`;
    writeFileSync(file('slow.yaml'), slow(1));
    await waitFor('GET /api/sync/slow served', async () => (await served(t, '/api/sync/slow')) === 200, 5000);

    const since = await lastAt(t);
    let done = false;
    const inFlight = t.api('GET', '/api/sync/slow').finally(() => {
      done = true;
    });
    await sleep(50);
    writeFileSync(file('slow.yaml'), slow(2));
    await nextReconcile(t, since);
    const reconciledWhileInFlight = !done;
    const first = await inFlight;
    expect(first.status, first.text).toBe(200);
    expect(first.body.data).toEqual({ version: 1 });
    const next = await t.api('GET', '/api/sync/slow');
    expect(next.status, next.text).toBe(200);
    expect(next.body.data).toEqual({ version: 2 });
    console.log(`project sync: the edit was applied while the request was ${reconciledWhileInFlight ? 'still' : 'no longer'} in flight`);
    expect(reconciledWhileInFlight).toBe(true);
  });
});

describe('write-back: API changes are written to the directory', () => {
  let t: TestServer;
  let dir: string;
  beforeAll(async () => {
    dir = copyOfSampleProject();
    t = await start(watching(dir));
  });
  afterAll(async () => {
    await stop(t);
  });
  afterEach(() => {
    // Whatever the API wrote, the directory stays loadable.
    expect(loadProject(dir).problems).toEqual([]);
  });

  /** Status and the definitions' timestamps stay the same for a second: no reconcile follows a write-back. */
  async function expectNoReloadLoop(): Promise<void> {
    await sleep(300);
    const status = await projectStatus(t);
    const stamps = (await call(t, 'GET', '/api/endpoints?limit=100')).map((e: any) => `${e._id}@${e.updatedAt}`);
    await sleep(1000);
    expect(await projectStatus(t)).toEqual(status);
    expect((await call(t, 'GET', '/api/endpoints?limit=100')).map((e: any) => `${e._id}@${e.updatedAt}`)).toEqual(stamps);
  }
  const waitForFile = (rel: string, present = true) => waitFor(`${rel} ${present ? 'written' : 'removed'}`, () => existsSync(join(dir, rel)) === present);

  it('an endpoint created through the API is written as a YAML file, fields at their defaults left out', async () => {
    const status = await projectStatus(t);
    await call(t, 'POST', '/api/endpoints', { name: 'Notes', path: '/api/wb/notes', method: 'GET', accessType: 'public', schema: { text: { type: 'string', required: true } }, enabled: true, description: '' });
    await waitForFile('endpoints/wb-notes-get.yaml');
    const text = read(dir, 'endpoints/wb-notes-get.yaml');
    expect(text).toMatch(/^# yaml-language-server: \$schema=\S+\n/);
    expect(text.slice(text.indexOf('\n') + 1)).toBe('name: Notes\npath: /api/wb/notes\nmethod: GET\naccessType: public\nschema:\n  text:\n    type: string\n    required: true\n');
    await expectNoReloadLoop();
    expect((await projectStatus(t)).lastReconcile).toEqual(status.lastReconcile);
  });

  it('an endpoint with a handler is written with its code in a .handler.js file', async () => {
    const code = 'async function handler(req, db) {\n  return { status: 200, data: { hello: 1 } };\n}';
    await call(t, 'POST', '/api/endpoints', { name: 'Hello', path: '/api/wb/hello', method: 'GET', accessType: 'public', schema: {}, handler: { enabled: true, code } });
    await waitForFile('endpoints/wb-hello-get.handler.js');
    await waitForFile('endpoints/wb-hello-get.yaml');
    expect(read(dir, 'endpoints/wb-hello-get.handler.js')).toBe(code);
    expect(read(dir, 'endpoints/wb-hello-get.yaml')).toContain('handler:\n  enabled: true\n  file: ./wb-hello-get.handler.js\n');
    const next = code.replace('hello: 1', 'hello: 2');
    await call(t, 'PUT', `/api/endpoints/${(await endpointAt(t, '/api/wb/hello'))._id}`, { handler: { enabled: true, code: next } });
    await waitFor('the handler file updated', () => read(dir, 'endpoints/wb-hello-get.handler.js') === next);
    await expectNoReloadLoop();
  });

  it('an update of a hand-written file changes only the changed line; comments elsewhere survive', async () => {
    const rel = 'endpoints/products-list.yaml';
    const since = await lastAt(t);
    const commented = read(dir, rel).replace('name: List products\n', '# Owned by the catalogue team.\nname: List products # shown in the admin UI\n').replace('  price:\n', '  # Euros, VAT included.\n  price:\n');
    writeFileSync(join(dir, rel), commented);
    // A comment-only edit is a reconcile with nothing to do.
    expect((await nextReconcile(t, since)).lastReconcile).toMatchObject({ ok: true, summary: { create: 0, update: 0, delete: 0 } });

    const id = (await endpointAt(t, '/api/shop/products'))._id;
    await call(t, 'PUT', `/api/endpoints/${id}`, { description: 'All the products' });
    await waitFor('the file updated', () => read(dir, rel) !== commented);
    const before = commented.split('\n');
    const after = read(dir, rel).split('\n');
    expect(after.length).toBe(before.length);
    expect(after.filter((line, index) => line !== before[index])).toEqual(['description: All the products']);
    expect(before.filter((line, index) => line !== after[index])).toEqual(['description: Products with their category (try ?populate=category)']);
    await expectNoReloadLoop();
  });

  it('a written-back file edited by hand, then restored to what the server wrote, is applied both times', async () => {
    const rel = 'endpoints/wb-notes-get.yaml';
    const id = (await endpointAt(t, '/api/wb/notes'))._id;
    await call(t, 'PUT', `/api/endpoints/${id}`, { description: 'from the API' });
    await waitFor('the description written back', () => read(dir, rel).includes('description: from the API\n'));
    const written = read(dir, rel);
    await sleep(300);

    let since = await lastAt(t);
    writeFileSync(join(dir, rel), written.replace('from the API', 'by hand'));
    expect((await nextReconcile(t, since)).lastReconcile.summary).toEqual({ create: 0, update: 1, delete: 0 });
    expect((await endpointAt(t, '/api/wb/notes')).description).toBe('by hand');

    // As `git checkout` would: the exact bytes the server wrote earlier.
    since = await lastAt(t);
    writeFileSync(join(dir, rel), written);
    expect((await nextReconcile(t, since)).lastReconcile.summary).toEqual({ create: 0, update: 1, delete: 0 });
    expect((await endpointAt(t, '/api/wb/notes')).description).toBe('from the API');
  });

  it('an endpoint whose path changes through the API moves to a file of the new name', async () => {
    const id = (await endpointAt(t, '/api/wb/notes'))._id;
    await call(t, 'PUT', `/api/endpoints/${id}`, { path: '/api/wb/memos' });
    await waitForFile('endpoints/wb-memos-get.yaml');
    await waitForFile('endpoints/wb-notes-get.yaml', false);
    expect(read(dir, 'endpoints/wb-memos-get.yaml')).toContain('path: /api/wb/memos\n');
    await expectNoReloadLoop();
  });

  it('an endpoint deleted through the API has its file and handler file removed', async () => {
    await call(t, 'DELETE', `/api/endpoints/${(await endpointAt(t, '/api/wb/hello'))._id}`);
    await waitForFile('endpoints/wb-hello-get.yaml', false);
    await waitForFile('endpoints/wb-hello-get.handler.js', false);
    await call(t, 'DELETE', `/api/endpoints/${(await endpointAt(t, '/api/wb/memos'))._id}`);
    await waitForFile('endpoints/wb-memos-get.yaml', false);
    await expectNoReloadLoop();
    expect(await served(t, '/api/wb/memos')).toBe(404);
  });

  it('definitions applied or imported through the project API are written back too', async () => {
    const endpoint = { name: 'Applied', path: '/api/wb/applied', method: 'GET', accessType: 'public', schema: {} };
    await call(t, 'POST', '/api/project/apply', { endpoints: [endpoint] });
    await waitForFile('endpoints/wb-applied-get.yaml');
    await call(t, 'POST', '/api/project/import?mode=merge', { endpoints: [{ ...endpoint, path: '/api/wb/imported' }] });
    await waitForFile('endpoints/wb-imported-get.yaml');
    await expectNoReloadLoop();
    for (const path of ['/api/wb/applied', '/api/wb/imported']) await call(t, 'DELETE', `/api/endpoints/${(await endpointAt(t, path))._id}`);
    await waitForFile('endpoints/wb-applied-get.yaml', false);
    await waitForFile('endpoints/wb-imported-get.yaml', false);
  });

  it('endpoint groups are written, renamed (with every endpoint naming the group) and removed', async () => {
    const group = await call(t, 'POST', '/api/endpoints/groups', { name: 'Write Back', color: '#123456' });
    await waitForFile('groups/write-back.yaml');
    expect(read(dir, 'groups/write-back.yaml').split('\n').slice(1).join('\n')).toBe('name: Write Back\ncolor: "#123456"\n');
    await call(t, 'POST', '/api/endpoints', { name: 'Tool', path: '/api/wb/tool', method: 'GET', accessType: 'public', schema: {}, groupId: group._id });
    await waitForFile('endpoints/wb-tool-get.yaml');
    expect(read(dir, 'endpoints/wb-tool-get.yaml')).toContain('group: Write Back\n');

    await call(t, 'PUT', `/api/endpoints/groups/${group._id}`, { name: 'Kit' });
    await waitForFile('groups/kit.yaml');
    await waitForFile('groups/write-back.yaml', false);
    await waitFor('the endpoint names the new group', () => read(dir, 'endpoints/wb-tool-get.yaml').includes('group: Kit\n'));
    await expectNoReloadLoop();

    await call(t, 'DELETE', `/api/endpoints/${(await endpointAt(t, '/api/wb/tool'))._id}`);
    await call(t, 'DELETE', `/api/endpoints/groups/${group._id}`);
    await waitForFile('groups/kit.yaml', false);
    await waitForFile('endpoints/wb-tool-get.yaml', false);
    await expectNoReloadLoop();
  });

  it('an API change to one method of a resource file keeps one file: the method sets the field itself; deleted, it leaves the methods list', async () => {
    const rel = 'endpoints/categories.yaml';
    const original = read(dir, rel);
    const post = await endpointAt(t, '/api/shop/categories', 'POST');
    await call(t, 'PUT', `/api/endpoints/${post._id}`, { description: 'New categories' });
    await waitFor('the description written back', () => read(dir, rel).includes('New categories'));
    expect(read(dir, rel)).toBe(original.replace('    name: Create category\n', '    name: Create category\n    description: New categories\n'));
    expect(readdirSync(join(dir, 'endpoints')).filter((name) => name.startsWith('categories'))).toEqual(['categories.yaml']);
    await expectNoReloadLoop();

    await call(t, 'DELETE', `/api/endpoints/${post._id}`);
    await waitFor('POST left the methods', () => !read(dir, rel).includes('  POST:'));
    expect(read(dir, rel)).toBe(original.replace(/^ {2}POST:\n(?: {4}.*\n)+/m, ''));
    expect(await served(t, '/api/shop/categories')).toBe(200);
    await expectNoReloadLoop();
  });

  it('renaming a hand-written group rewrites only the group line of each endpoint file naming it', async () => {
    const before = snapshot(dir);
    const shop = (await call(t, 'GET', '/api/endpoints/groups')).find((g: any) => g.name === 'Shop');
    await call(t, 'PUT', `/api/endpoints/groups/${shop._id}`, { name: 'Store' });
    await waitForFile('groups/store.yaml');
    await waitForFile('groups/shop.yaml', false);
    const endpointFiles = Object.keys(before).filter((rel) => rel.startsWith('endpoints/') && rel.endsWith('.yaml'));
    expect(endpointFiles.length).toBe(5);
    await waitFor('every endpoint file names Store', () => endpointFiles.every((rel) => read(dir, rel).includes('group: Store\n')));
    for (const rel of endpointFiles) expect(read(dir, rel)).toBe((before[rel] as string).replace('group: Shop\n', 'group: Store\n'));
    expect(read(dir, 'groups/store.yaml')).toContain('name: Store\n');
    await expectNoReloadLoop();
    // The directory and the store agree: a reconcile now has nothing to do.
    const since = await lastAt(t);
    writeFileSync(join(dir, 'endpoints', 'README.txt'), 'touch\n');
    await sleep(400);
    const status = await projectStatus(t);
    if (status.lastReconcile.at !== since) expect(status.lastReconcile.summary).toEqual({ create: 0, update: 0, delete: 0 });
  });
});

describe('export → import → export', () => {
  it('gives byte-identical files', async () => {
    const source = await start({});
    const sample = loadProject(copyOfSampleProject());
    expect(sample.problems).toEqual([]);
    await call(source, 'POST', '/api/project/apply', sample.bundle);
    await call(source, 'POST', '/api/endpoints', {
      name: 'Stats',
      path: '/api/stats',
      method: 'GET',
      accessType: 'authenticated',
      schema: { day: { type: 'datetime' } },
      handler: { enabled: true, code: 'async function handler(req, db) {\n  return { status: 200, data: {} };\n}' },
    });
    const first = syncTempDir();
    writeProject(first, await exported(source), { handlers: 'file' });
    const files = snapshot(first);
    expect(Object.keys(files).length).toBe(12);

    // Imported by starting a fresh server on the directory (files win), then exported again.
    const target = await start(watching(first));
    try {
      expect(snapshot(first)).toEqual(files);
      const second = syncTempDir();
      writeProject(second, await exported(target), { handlers: 'file' });
      expect(snapshot(second)).toEqual(files);
      expect((await target.api('GET', '/api/project/export', { token: await target.adminToken() })).text).toBe(
        (await source.api('GET', '/api/project/export', { token: await source.adminToken() })).text,
      );
    } finally {
      await stop(target);
      await stop(source);
    }
  });
});

describe('write-back racing a reconcile', () => {
  it('a large apply through the API into an empty watched directory ends with every definition in the store and in the files', async () => {
    const dir = syncTempDir();
    const t = await start(watching(dir));
    const endpoints = Array.from({ length: 25 }, (_, i) => ({ name: `Race ${i}`, path: `/api/race/items${i}`, method: 'GET', accessType: 'public', schema: {} }));
    await call(t, 'POST', '/api/project/apply', { groups: [], endpoints });
    // Meanwhile the watcher sees the written-back files (and their new directory); a reconcile
    // must never prune what the store has but the files do not have yet.
    await waitFor('every definition written back', () => existsSync(join(dir, 'endpoints')) && readdirSync(join(dir, 'endpoints')).length === 25, 5000);
    await sleep(500);
    const stored = (await exported(t)).endpoints.filter((e: { path: string }) => e.path.startsWith('/api/race/'));
    expect(stored).toHaveLength(25);
    expect(readdirSync(join(dir, 'endpoints'))).toHaveLength(25);
  });
});

describe('write-back: a file changed since the last sync wins over the store', () => {
  let t: TestServer;
  let dir: string;
  beforeAll(async () => {
    dir = copyOfSampleProject();
    t = await start(watching(dir));
  });
  afterAll(async () => {
    await stop(t);
  });
  const rel = 'endpoints/products-create.yaml';
  const maxLengthOfTitle = async (): Promise<unknown> => (await endpointAt(t, '/api/shop/products', 'POST')).schema.find((f: any) => f.name === 'title').maxLength;
  /** Breaks another file, runs `meanwhile`, lets polls go by (write-backs wait), then fixes it; resolves after the good reconcile. */
  async function whileBroken(meanwhile: () => Promise<void>): Promise<any> {
    const other = join(dir, 'endpoints/orders-list.yaml');
    const good = readFileSync(other, 'utf8');
    let since = await lastAt(t);
    writeFileSync(other, good.replace('method: GET\n', 'method: GET\ndescription: [not closed\n'));
    since = (await nextReconcile(t, since)).lastReconcile.at;
    await meanwhile();
    await sleep(600);
    writeFileSync(other, good);
    await waitFor('the fixed directory applied', async () => {
      const status = await projectStatus(t);
      return status.lastReconcile.at !== since && status.lastReconcile.ok === true;
    });
    await sleep(600);
  }

  it('a file edited while the directory has problems keeps its edit when the API changes the same definition meanwhile', async () => {
    const id = (await endpointAt(t, '/api/shop/products', 'POST'))._id;
    expect(await maxLengthOfTitle()).toBe(200);
    const edited = read(dir, rel).replace('maxLength: 200', 'maxLength: 400');
    await whileBroken(async () => {
      writeFileSync(join(dir, rel), edited);
      await call(t, 'PUT', `/api/endpoints/${id}`, { description: 'changed through the API' });
    });
    expect(read(dir, rel)).toBe(edited);
    expect(await maxLengthOfTitle()).toBe(400);
    expect((await projectStatus(t)).problems).toEqual([]);
  });

  it('a file edited just before an API change of the same definition keeps its edit', async () => {
    const id = (await endpointAt(t, '/api/shop/products', 'POST'))._id;
    const edited = read(dir, rel).replace(/maxLength: \d+/, 'maxLength: 500');
    writeFileSync(join(dir, rel), edited);
    await sleep(20);
    await call(t, 'PUT', `/api/endpoints/${id}`, { description: 'changed again through the API' });
    await waitFor('the edit applied', async () => (await maxLengthOfTitle()) === 500);
    await sleep(600);
    expect(read(dir, rel)).toBe(edited);
    expect(await maxLengthOfTitle()).toBe(500);
  });

  it('a file deleted while the directory has problems is not written back when the API changes its definition meanwhile', async () => {
    const id = (await endpointAt(t, '/api/shop/products', 'POST'))._id;
    await whileBroken(async () => {
      rmSync(join(dir, rel));
      await call(t, 'PUT', `/api/endpoints/${id}`, { description: 'changed through the API' });
    });
    expect(existsSync(join(dir, rel))).toBe(false);
    expect(await endpointAt(t, '/api/shop/products', 'POST')).toBeUndefined();
  });

  it('an API change of a definition whose file is unchanged is still written back', async () => {
    const id = (await endpointAt(t, '/api/shop/products', 'GET'))._id;
    await call(t, 'PUT', `/api/endpoints/${id}`, { description: 'written back' });
    await waitFor('the change written back', () => read(dir, 'endpoints/products-list.yaml').includes('description: written back'));
  });
});
