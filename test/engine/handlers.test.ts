import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createUserWith, startTestServer, type ApiResponse, type TestServer } from '../helpers/test-server.ts';

/**
 * JavaScript handlers over real HTTP: definitions saved through POST /api/endpoints with
 * `handler: {enabled: true, code}`, then called like any dynamic endpoint.
 */
let t: TestServer;
let admin: string;
beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
});
afterAll(async () => {
  await t.close();
});

let seq = 0;

interface Definition {
  method?: string;
  schema?: Record<string, unknown>;
  retentionDays?: number;
}

async function saveHandler(path: string, code: string, definition: Definition = {}): Promise<ApiResponse> {
  return t.api('POST', '/api/endpoints', {
    token: admin,
    body: { name: `handler test ${++seq}`, path, method: 'GET', accessType: 'public', schema: {}, ...definition, handler: { enabled: true, code } },
  });
}

async function defineHandler(path: string, code: string, definition: Definition = {}): Promise<string> {
  const res = await saveHandler(path, code, definition);
  if (res.status !== 201) throw new Error(`defining ${definition.method ?? 'GET'} ${path} failed: ${res.status} ${res.text}`);
  return res.body.data._id as string;
}

async function putSettings(patch: Record<string, unknown>): Promise<void> {
  const res = await t.api('PUT', '/api/settings', { token: admin, body: patch });
  expect(res.status, res.text).toBe(200);
}

const DEFAULT_LIMITS = { handlerTimeoutMs: 5000, handlerMemoryMb: 64 };

describe('results and the request object', () => {
  it('turns {status, data} into the response envelope', async () => {
    await defineHandler(
      '/api/h/result',
      `async function handler(req) {
        if (req.query.mode === 'created') return { status: 201, data: { made: true, list: [1, 'two', null] } };
        if (req.query.mode === 'object-error') return { status: 418, data: { error: 'I am a teapot', hint: 'tea' } };
        if (req.query.mode === 'string-error') return { status: 404, data: 'nothing here' };
        if (req.query.mode === 'bare-error') return { status: 503, data: null };
        return { status: 200, data: 'plain' };
      }`,
    );
    const created = await t.api('GET', '/api/h/result?mode=created');
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ success: true, data: { made: true, list: [1, 'two', null] } });

    const plain = await t.api('GET', '/api/h/result');
    expect(plain.status).toBe(200);
    expect(plain.body).toEqual({ success: true, data: 'plain' });

    const objectError = await t.api('GET', '/api/h/result?mode=object-error');
    expect(objectError.status).toBe(418);
    expect(objectError.body).toMatchObject({ success: false, error: 'I am a teapot' });

    const stringError = await t.api('GET', '/api/h/result?mode=string-error');
    expect(stringError.status).toBe(404);
    expect(stringError.body).toEqual({ success: false, error: 'nothing here' });

    const bareError = await t.api('GET', '/api/h/result?mode=bare-error');
    expect(bareError.status).toBe(503);
    expect(bareError.body.success).toBe(false);
    expect(typeof bareError.body.error).toBe('string');
  });

  it('passes method, path, params, query, body, user and headers without credentials', async () => {
    const echo = `async function handler(req) { return { status: 200, data: req }; }`;
    await defineHandler('/api/h/shops/:shopId/echo', echo);
    await defineHandler('/api/h/shops/:shopId/echo', echo, { method: 'POST' });
    const user = await createUserWith(t, ['view']);

    const signedIn = await t.api('GET', '/api/h/shops/s-1/echo?x=1&x=2&y=z', {
      token: user.token,
      headers: { cookie: 'dyn_csrf=secret-cookie', 'x-csrf-token': 'secret-csrf', 'x-custom': 'visible' },
    });
    expect(signedIn.status, signedIn.text).toBe(200);
    const req = signedIn.body.data;
    expect(req).toMatchObject({
      method: 'GET',
      path: '/api/h/shops/s-1/echo',
      params: { shopId: 's-1' },
      query: { x: ['1', '2'], y: 'z' },
      body: null,
      user: { id: user.userId, login: user.login, groupIds: [user.groupId] },
    });
    expect(req.headers['x-custom']).toBe('visible');
    for (const hidden of ['authorization', 'cookie', 'x-api-key', 'x-csrf-token']) expect(req.headers).not.toHaveProperty(hidden);
    expect(signedIn.text).not.toContain(user.token);
    expect(signedIn.text).not.toContain('secret-cookie');
    expect(signedIn.text).not.toContain('secret-csrf');

    // An item route carries the id; an anonymous caller is user null; an API key header is hidden too.
    const item = await t.api('POST', '/api/h/shops/s-2/echo/rec-42', { body: { a: 1, nested: { b: [true] } }, headers: { 'x-api-key': 'not-a-real-key' } });
    expect(item.status, item.text).toBe(200);
    expect(item.body.data).toMatchObject({
      method: 'POST',
      path: '/api/h/shops/s-2/echo/rec-42',
      params: { shopId: 's-2', id: 'rec-42' },
      query: {},
      body: { a: 1, nested: { b: [true] } },
      user: null,
    });
    expect(item.body.data.headers).not.toHaveProperty('x-api-key');
    expect(item.body.data.recordId).toBe('rec-42');
    expect(item.text).not.toContain('not-a-real-key');
    expect(signedIn.body.data.recordId).toBeNull();
  });

  it("keeps a path's own :id apart from the record id", async () => {
    const echo = `async function handler(req) { return { status: 200, data: { params: req.params, recordId: req.recordId } }; }`;
    await defineHandler('/api/h/own-id/:id', echo);
    const item = await t.api('GET', '/api/h/own-id/abc/def');
    expect(item.status, item.text).toBe(200);
    expect(item.body.data).toEqual({ params: { id: 'abc' }, recordId: 'def' });
    const collection = await t.api('GET', '/api/h/own-id/abc');
    expect(collection.body.data).toEqual({ params: { id: 'abc' }, recordId: null });
  });
});

describe('db', () => {
  it('creates records that a plain GET definition on the same path lists, and sees no other path', async () => {
    await defineHandler(
      '/api/h/notes',
      `async function handler(req, db) {
        const record = await db.create(req.body);
        return { status: 201, data: record };
      }`,
      { method: 'POST' },
    );
    await t.api('POST', '/api/endpoints', { token: admin, body: { name: `plain notes ${++seq}`, path: '/api/h/notes', method: 'GET', accessType: 'public', schema: {} } });

    const created = await t.api('POST', '/api/h/notes', { body: { text: 'hello', n: 1 } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data).toMatchObject({ text: 'hello', n: 1 });
    expect(created.body.data._id).toMatch(/^[0-9a-f]{24}$/);
    expect(created.body.data).not.toHaveProperty('expiresAt');
    const noteId = created.body.data._id as string;

    const listed = await t.api('GET', '/api/h/notes');
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([expect.objectContaining({ _id: noteId, text: 'hello', n: 1 })]);
    expect(listed.body.meta.total).toBe(1);

    await defineHandler(
      '/api/h/elsewhere',
      `async function handler(req, db) {
        const id = req.query.id;
        return { status: 200, data: {
          all: await db.find({}),
          byId: await db.findOne({ _id: id }),
          byPath: await db.find({ $or: [{ resourcePath: '/api/h/notes' }, { text: 'hello' }] }),
          updated: await db.update(id, { text: 'hijacked' }),
          deleted: await db.delete(id),
        } };
      }`,
    );
    const elsewhere = await t.api('GET', `/api/h/elsewhere?id=${noteId}`);
    expect(elsewhere.status, elsewhere.text).toBe(200);
    expect(elsewhere.body.data).toEqual({ all: [], byId: null, byPath: [], updated: null, deleted: false });
    const after = await t.api('GET', `/api/h/notes/${noteId}`);
    expect(after.body.data).toMatchObject({ text: 'hello' });
  });

  it('scopes records to the filled-in path of a :param definition', async () => {
    const code = `async function handler(req, db) {
      if (req.method === 'POST') return { status: 201, data: await db.create(req.body) };
      return { status: 200, data: await db.find({}) };
    }`;
    await defineHandler('/api/h/stores/:storeId/items', code, { method: 'POST' });
    await defineHandler('/api/h/stores/:storeId/items', code);
    await t.api('POST', '/api/h/stores/a/items', { body: { name: 'in a' } });
    await t.api('POST', '/api/h/stores/b/items', { body: { name: 'in b' } });
    const a = await t.api('GET', '/api/h/stores/a/items');
    expect(a.body.data.map((r: { name: string }) => r.name)).toEqual(['in a']);
  });

  it('finds with operators, limit and sort; findOne, update (merge) and delete', async () => {
    await defineHandler(
      '/api/h/products',
      `async function handler(req, db) {
        for (let price = 1; price <= 10; price++) await db.create({ name: 'p' + price, price });
        const expensive = await db.find({ price: { $gt: 5 } }, { limit: 3, sort: { price: -1 } });
        const cheapest = await db.find({ price: { $lte: 2 } }, { sort: { price: 1 } });
        const seven = await db.findOne({ price: 7 });
        const updated = await db.update(seven._id, { name: 'lucky', tag: 'x' });
        const deleted = await db.delete(seven._id);
        const gone = await db.findOne({ _id: seven._id });
        const deletedAgain = await db.delete(seven._id);
        const total = (await db.find({})).length;
        return { status: 200, data: { expensive, cheapest, seven, updated, deleted, gone, deletedAgain, total } };
      }`,
      { method: 'POST' },
    );
    const res = await t.api('POST', '/api/h/products');
    expect(res.status, res.text).toBe(200);
    const data = res.body.data;
    expect(data.expensive.map((r: { price: number }) => r.price)).toEqual([10, 9, 8]);
    expect(data.cheapest.map((r: { price: number }) => r.price)).toEqual([1, 2]);
    expect(data.seven).toMatchObject({ name: 'p7', price: 7 });
    expect(data.updated).toMatchObject({ _id: data.seven._id, name: 'lucky', tag: 'x', price: 7 });
    expect(data.deleted).toBe(true);
    expect(data.gone).toBeNull();
    expect(data.deletedAgain).toBe(false);
    expect(data.total).toBe(9);
  });

  it('an invalid filter operator is an error inside the handler: catchable, else a 500', async () => {
    await defineHandler(
      '/api/h/bad-filter',
      `async function handler(req, db) {
        if (req.query.catch) {
          try {
            await db.find({ $where: 'return true' });
            return { status: 200, data: 'not refused' };
          } catch (error) {
            return { status: 200, data: { caught: error instanceof Error, message: String(error.message) } };
          }
        }
        await db.find({ $where: 'return true' });
        return { status: 200, data: 'not refused' };
      }`,
    );
    const caught = await t.api('GET', '/api/h/bad-filter?catch=1');
    expect(caught.status, caught.text).toBe(200);
    expect(caught.body.data.caught).toBe(true);
    expect(caught.body.data.message).toMatch(/\$where/);

    const uncaught = await t.api('GET', '/api/h/bad-filter');
    expect(uncaught.status).toBe(500);
    expect(uncaught.body.success).toBe(false);
    expect(uncaught.body.error).toMatch(/\$where/);
    expect(uncaught.text).not.toContain('not refused');
  });

  it('a filter of more conditions than a query can hold is a 400 the handler can read; 500 are taken', async () => {
    await defineHandler(
      '/api/h/wide-filter',
      `async function handler(req, db) {
        const alternatives = Array.from({ length: Number(req.query.n) }, (_, i) => ({ n: i }));
        try {
          return { status: 200, data: { found: (await db.find({ $or: alternatives })).length } };
        } catch (error) {
          return { status: 200, data: { status: error.status, message: error.message } };
        }
      }`,
    );
    for (const n of [500, 597]) expect((await t.api('GET', `/api/h/wide-filter?n=${n}`)).body.data, String(n)).toEqual({ found: 0 });
    for (const n of [601, 1000, 40000]) {
      expect((await t.api('GET', `/api/h/wide-filter?n=${n}`)).body.data, String(n)).toEqual({ status: 400, message: 'db: filter has more than 600 conditions' });
    }
  });

  it('retentionDays of the handler endpoint sets expiresAt on db.create', async () => {
    await defineHandler(
      '/api/h/expiring',
      `async function handler(req, db) { return { status: 201, data: await db.create({ note: 'short-lived' }) }; }`,
      { method: 'POST', retentionDays: 7 },
    );
    const before = Date.now();
    const res = await t.api('POST', '/api/h/expiring');
    expect(res.status, res.text).toBe(201);
    const expiresAt = new Date(res.body.data.expiresAt).getTime();
    const week = 7 * 86_400_000;
    expect(expiresAt).toBeGreaterThanOrEqual(before + week - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + week + 1000);
  });
});

describe('body validation', () => {
  it('a POST handler endpoint with schema fields validates the body before the handler runs', async () => {
    const schema = { title: { type: 'string', required: true, maxLength: 20 }, qty: { type: 'number', defaultValue: 1 } };
    await defineHandler(
      '/api/h/validated',
      `async function handler(req, db) {
        const record = await db.create({ seen: req.body });
        return { status: 201, data: { body: req.body, record } };
      }`,
      { method: 'POST', schema },
    );
    await defineHandler('/api/h/validated', `async function handler(req, db) { return { status: 200, data: await db.find({}) }; }`);

    for (const body of [{}, { title: 5 }, { title: 'ok', extra: true }, { title: 'x'.repeat(21) }, ['not', 'an', 'object']]) {
      const res = await t.api('POST', '/api/h/validated', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.success).toBe(false);
    }
    expect((await t.api('GET', '/api/h/validated')).body.data).toEqual([]);

    const ok = await t.api('POST', '/api/h/validated', { body: { title: 'fine' } });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.data.body).toEqual({ title: 'fine', qty: 1 });
    expect((await t.api('GET', '/api/h/validated')).body.data).toHaveLength(1);
  });
});

describe('compilation', () => {
  it('uses changed code on the very next request', async () => {
    const id = await defineHandler('/api/h/versioned', `async function handler() { return { status: 200, data: 'v1' }; }`);
    expect((await t.api('GET', '/api/h/versioned')).body.data).toBe('v1');
    expect((await t.api('GET', '/api/h/versioned')).body.data).toBe('v1');
    const put = await t.api('PUT', `/api/endpoints/${id}`, { token: admin, body: { handler: { code: `async function handler() { return { status: 200, data: 'v2' }; }` } } });
    expect(put.status, put.text).toBe(200);
    expect(put.body.data.handler.enabled).toBe(true);
    expect((await t.api('GET', '/api/h/versioned')).body.data).toBe('v2');

    // A PUT with code that does not compile is refused and the running code stays.
    const broken = await t.api('PUT', `/api/endpoints/${id}`, { token: admin, body: { handler: { code: `async function handler() {\n  return {;\n}` } } });
    expect(broken.status).toBe(400);
    expect(broken.body.error).toMatch(/line 2/);
    expect((await t.api('GET', '/api/h/versioned')).body.data).toBe('v2');
  });

  it('a syntax error is a 400 at save naming the line, and nothing is saved', async () => {
    const name = `broken handler ${++seq}`;
    const code = `async function handler(req, db) {\n  const x = 1;\n  return { status: 200, data: x +* 2 };\n}\n`;
    const res = await t.api('POST', '/api/endpoints', {
      token: admin,
      body: { name, path: '/api/h/broken', method: 'GET', accessType: 'public', schema: {}, handler: { enabled: true, code } },
    });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.error).toMatch(/line 3/);
    expect(res.text).not.toContain(process.cwd());

    const listed = await t.api('GET', `/api/endpoints?search=${encodeURIComponent(name)}`, { token: admin });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([]);
    expect((await t.api('GET', '/api/h/broken')).status).toBe(404);

    const noHandler = await t.api('POST', '/api/endpoints', {
      token: admin,
      body: { name: `no handler ${++seq}`, path: '/api/h/no-handler', method: 'GET', accessType: 'public', schema: {}, handler: { enabled: true, code: 'const x = 1;' } },
    });
    expect(noHandler.status).toBe(400);
    expect(noHandler.body.error).toMatch(/handler/);
  });
});

describe('failures', () => {
  afterEach(async () => {
    await putSettings(DEFAULT_LIMITS);
  });

  it('a throw is a 500 with the handler message, no host details, and an audited error', async () => {
    await defineHandler(
      '/api/h/throws',
      `async function handler(req, db) {
        await db.find({});
        if (req.query.plain) throw 'plain-string-thrown';
        function deeper() { throw new Error('boom-from-handler'); }
        deeper();
      }`,
    );
    const res = await t.api('GET', '/api/h/throws');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ success: false, error: 'boom-from-handler' });
    for (const leak of [process.cwd(), 'node_modules', '.ts:', 'isolated-vm', 'handler-runner']) expect(res.text).not.toContain(leak);

    const plain = await t.api('GET', '/api/h/throws?plain=1');
    expect(plain.status).toBe(500);
    expect(plain.body).toEqual({ success: false, error: 'plain-string-thrown' });

    let entry: { action: string; message: string; statusCode: number; path: string } | undefined;
    const deadline = Date.now() + 3000;
    while (!entry && Date.now() < deadline) {
      const logs = await t.api('GET', '/api/dashboard/logs?action=error&limit=100', { token: admin });
      expect(logs.status).toBe(200);
      entry = logs.body.data.find((e: { message: string }) => e.message.includes('boom-from-handler'));
      if (!entry) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(entry).toMatchObject({ action: 'error', statusCode: 500, path: '/api/h/throws' });
  });

  it('an endless loop is stopped within the time limit while the server keeps answering', async () => {
    await putSettings({ handlerTimeoutMs: 300 });
    await defineHandler(
      '/api/h/loop',
      `async function handler(req, db) {
        if (req.query.afterDb) await db.find({});
        if (req.query.loop) while (true) {}
        return { status: 200, data: 'alive' };
      }`,
    );
    const started = performance.now();
    let loopEndedAt = 0;
    const loop = t.api('GET', '/api/h/loop?loop=1').then((res) => {
      loopEndedAt = performance.now();
      return res;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const health = await t.api('GET', '/api/health');
    expect(health.status).toBe(200);
    expect(loopEndedAt).toBe(0);
    const looped = await loop;
    expect(looped.status).toBe(500);
    expect(looped.body.success).toBe(false);
    expect(looped.body.error).toMatch(/time limit/);
    expect(loopEndedAt - started).toBeGreaterThanOrEqual(250);
    expect(loopEndedAt - started).toBeLessThan(1500);
    expect((await t.api('GET', '/api/h/loop')).body.data).toBe('alive');

    // Resumed after a db call, the loop is outside isolated-vm's own timeout: the watchdog stops it.
    const afterDbStart = performance.now();
    const afterDb = await t.api('GET', '/api/h/loop?loop=1&afterDb=1');
    expect(afterDb.status).toBe(500);
    expect(afterDb.body.error).toMatch(/time limit/);
    expect(performance.now() - afterDbStart).toBeLessThan(1500);
    expect((await t.api('GET', '/api/h/loop?afterDb=1')).body.data).toBe('alive');
  });

  it('a never-settling promise is stopped within the time limit', async () => {
    await putSettings({ handlerTimeoutMs: 300 });
    await defineHandler('/api/h/hang', `async function handler() { await new Promise(() => {}); return { status: 200, data: 'unreachable' }; }`);
    const started = performance.now();
    let hangEndedAt = 0;
    const hang = t.api('GET', '/api/h/hang').then((res) => {
      hangEndedAt = performance.now();
      return res;
    });
    const health = await t.api('GET', '/api/health');
    expect(health.status).toBe(200);
    expect(hangEndedAt).toBe(0);
    const res = await hang;
    expect(res.status).toBe(500);
    expect(res.body.error).toMatch(/time limit/);
    expect(hangEndedAt - started).toBeLessThan(1500);
  });

  it('a memory bomb is stopped and the same endpoint works on the next call', async () => {
    await putSettings({ handlerMemoryMb: 16 });
    await defineHandler(
      '/api/h/bomb',
      `async function handler(req) {
        if (req.query.bomb) {
          const hoard = [];
          while (true) hoard.push(new Array(100000).fill(hoard.length));
        }
        return { status: 200, data: 'fine' };
      }`,
    );
    const bomb = await t.api('GET', '/api/h/bomb?bomb=1');
    expect(bomb.status).toBe(500);
    expect(bomb.body.success).toBe(false);
    expect(bomb.body.error).toMatch(/memory/);
    const next = await t.api('GET', '/api/h/bomb');
    expect(next.status, next.text).toBe(200);
    expect(next.body.data).toBe('fine');
    expect((await t.api('GET', '/api/health')).status).toBe(200);
  });
});

describe('isolation', () => {
  it('reaches no host object: process, require, constructors, import, fetch, timers', async () => {
    await defineHandler(
      '/api/h/escape',
      `async function handler(req, db) {
        const attempt = async (f) => {
          try {
            const value = await f();
            return value === undefined ? 'undefined' : 'got a ' + typeof value;
          } catch (error) {
            return 'threw: ' + String(error && error.message);
          }
        };
        return { status: 200, data: {
          process: typeof process,
          require: typeof require,
          globalProcess: typeof globalThis.process,
          thisEscape: await attempt(() => this.constructor.constructor('return process')()),
          dbEscape: await attempt(() => db.find.constructor.constructor('return process')()),
          reqEscape: await attempt(() => req.constructor.constructor('return typeof process === "undefined" ? undefined : process')()),
          importFs: await attempt(() => import('fs')),
          fetch: typeof fetch,
          setTimeout: typeof setTimeout,
          setInterval: typeof setInterval,
          globals: Object.getOwnPropertyNames(globalThis),
        } };
      }`,
    );
    const res = await t.api('GET', '/api/h/escape');
    expect(res.status, res.text).toBe(200);
    const data = res.body.data;
    for (const name of ['process', 'require', 'globalProcess', 'fetch', 'setTimeout', 'setInterval']) expect(data[name], name).toBe('undefined');
    for (const name of ['thisEscape', 'dbEscape', 'reqEscape']) expect(data[name], name).toMatch(/^(undefined|threw: .*)$/);
    expect(data.importFs).toMatch(/^threw: /);
    for (const global of ['process', 'require', 'module', 'Buffer', 'fetch', 'setTimeout', 'setInterval', 'setImmediate']) expect(data.globals).not.toContain(global);
    for (const leak of [process.cwd(), process.env.PATH ?? '/usr/bin', 'node_modules']) expect(res.text).not.toContain(leak);
  });
});

describe('settings', () => {
  afterEach(async () => {
    await putSettings(DEFAULT_LIMITS);
  });

  it('handlerTimeoutMs and handlerMemoryMb changes apply on the next call', async () => {
    await defineHandler(
      '/api/h/limits',
      `async function handler(req) {
        const end = Date.now() + Number(req.query.busyMs || 0);
        while (Date.now() < end) {}
        const hoard = [];
        for (let i = 0; i < Number(req.query.chunks || 0); i++) hoard.push(new Array(100000).fill(i));
        return { status: 200, data: hoard.length };
      }`,
    );
    await putSettings({ handlerTimeoutMs: 150 });
    const slow = await t.api('GET', '/api/h/limits?busyMs=400');
    expect(slow.status).toBe(500);
    expect(slow.body.error).toMatch(/time limit of 150 ms/);
    await putSettings({ handlerTimeoutMs: 2000 });
    const patient = await t.api('GET', '/api/h/limits?busyMs=400');
    expect(patient.status, patient.text).toBe(200);

    await putSettings({ handlerMemoryMb: 16 });
    const big = await t.api('GET', '/api/h/limits?chunks=40');
    expect(big.status).toBe(500);
    expect(big.body.error).toMatch(/memory limit of 16 MB/);
    await putSettings({ handlerMemoryMb: 128 });
    const roomy = await t.api('GET', '/api/h/limits?chunks=40');
    expect(roomy.status, roomy.text).toBe(200);
    expect(roomy.body.data).toBe(40);
  });
});
