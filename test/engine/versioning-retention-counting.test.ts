import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventMap } from '../../src/events/bus.ts';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * Versioned aliases, record retention, call counting, the audit trail of dynamic calls and the
 * events they emit — over real HTTP, with the store and the event bus observed in process.
 */
let t: TestServer;
let admin: string;

let seq = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${(seq++).toString(36)}`;
const DAY = 86_400_000;

async function createEndpoint(server: TestServer, token: string, body: Record<string, unknown>): Promise<string> {
  const res = await server.api('POST', '/api/endpoints', { token, body: { name: unique('vrc-'), accessType: 'public', schema: { title: { type: 'string' } }, ...body } });
  if (res.status !== 201) throw new Error(`endpoint create failed: ${res.status} ${res.text}`);
  return res.body.data._id;
}

/** GET + POST on one path; returns the ids (GET first). */
async function crudPair(path: string, extra: Record<string, unknown> = {}, server = t, token = admin): Promise<{ get: string; post: string }> {
  const get = await createEndpoint(server, token, { path, method: 'GET', ...extra });
  const post = await createEndpoint(server, token, { path, method: 'POST', ...extra });
  return { get, post };
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() - started > timeoutMs) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
});

afterAll(async () => {
  await t.close();
});

describe('versioning', () => {
  it('apiVersion v1 on /api/shop/items also serves /api/v1/shop/items, with the same records', async () => {
    await crudPair('/api/shop/items', { apiVersion: 'v1' });
    const plain = await t.api('POST', '/api/shop/items', { body: { title: 'plain' } });
    expect(plain.status).toBe(201);
    const versioned = await t.api('POST', '/api/v1/shop/items', { body: { title: 'versioned' } });
    expect(versioned.status).toBe(201);

    const viaPlain = await t.api('GET', '/api/shop/items');
    const viaVersion = await t.api('GET', '/api/v1/shop/items');
    expect(viaPlain.status).toBe(200);
    expect(viaVersion.status).toBe(200);
    expect(viaPlain.body.data.map((r: { title: string }) => r.title)).toEqual(['plain', 'versioned']);
    expect(viaVersion.body.data).toEqual(viaPlain.body.data);
    expect(viaVersion.body.meta.total).toBe(2);

    const one = await t.api('GET', `/api/v1/shop/items/${plain.body.data._id}`);
    expect(one.status).toBe(200);
    expect(one.body.data).toEqual(plain.body.data);
    expect((await t.api('GET', `/api/shop/items/${versioned.body.data._id}`)).body.data.title).toBe('versioned');
  });

  it('a path outside /api gets the version as its first segment', async () => {
    await crudPair('/shop/things', { apiVersion: 'v1' });
    const created = await t.api('POST', '/v1/shop/things', { body: { title: 'thing' } });
    expect(created.status).toBe(201);
    const list = await t.api('GET', '/shop/things');
    expect(list.body.data.map((r: { _id: string }) => r._id)).toEqual([created.body.data._id]);
    expect((await t.api('GET', '/v1/shop/things')).body.data).toEqual(list.body.data);
    expect((await t.api('GET', `/v1/shop/things/${created.body.data._id}`)).status).toBe(200);
    // Not `/api/v1/…` for a path outside /api.
    expect((await t.api('GET', '/api/v1/shop/things')).status).toBe(404);
  });

  it('a versioned path with :params shares the records of each parameter value', async () => {
    await crudPair('/api/vshops/:shopId/items', { apiVersion: 'v3' });
    const one = await t.api('POST', '/api/v3/vshops/s1/items', { body: { title: 'in s1' } });
    expect(one.status).toBe(201);
    expect((await t.api('POST', '/api/vshops/s2/items', { body: { title: 'in s2' } })).status).toBe(201);
    expect((await t.api('GET', '/api/vshops/s1/items')).body.data.map((r: { title: string }) => r.title)).toEqual(['in s1']);
    expect((await t.api('GET', '/api/v3/vshops/s2/items')).body.data.map((r: { title: string }) => r.title)).toEqual(['in s2']);
    expect((await t.api('GET', `/api/vshops/s1/items/${one.body.data._id}`)).status).toBe(200);
    expect((await t.api('GET', `/api/v3/vshops/s2/items/${one.body.data._id}`)).status).toBe(404);
  });

  it('without apiVersion there is no versioned alias', async () => {
    await crudPair('/api/plain/items');
    expect((await t.api('GET', '/api/plain/items')).status).toBe(200);
    expect((await t.api('GET', '/api/v1/plain/items')).status).toBe(404);
    expect((await t.api('POST', '/api/v1/plain/items', { body: { title: 'x' } })).status).toBe(404);
  });

  it('changing or removing apiVersion applies on the next request', async () => {
    const { get } = await crudPair('/api/verswitch/items', { apiVersion: 'v1' });
    expect((await t.api('GET', '/api/v1/verswitch/items')).status).toBe(200);
    expect((await t.api('PUT', `/api/endpoints/${get}`, { token: admin, body: { apiVersion: 'v2' } })).status).toBe(200);
    expect((await t.api('GET', '/api/v2/verswitch/items')).status).toBe(200);
    // The POST definition keeps v1, so the v1 path is still served, by POST only (405 for GET).
    expect((await t.api('GET', '/api/v1/verswitch/items')).status).toBe(405);
    expect((await t.api('PUT', `/api/endpoints/${get}`, { token: admin, body: { apiVersion: null } })).status).toBe(200);
    expect((await t.api('GET', '/api/v2/verswitch/items')).status).toBe(404);
    expect((await t.api('GET', '/api/verswitch/items')).status).toBe(200);
  });
});

describe('retention', () => {
  const records = () => t.server.services.store.collection('endpointdatas');

  it('retentionDays sets expiresAt ≈ now + N days on create', async () => {
    await crudPair('/api/ret/sevenday', { retentionDays: 7 });
    const before = Date.now();
    const res = await t.api('POST', '/api/ret/sevenday', { body: { title: 'short-lived' } });
    const after = Date.now();
    expect(res.status).toBe(201);
    const expiresAt = Date.parse(res.body.data.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 7 * DAY - 1000);
    expect(expiresAt).toBeLessThanOrEqual(after + 7 * DAY + 1000);
    expect(Date.parse(res.body.data.createdAt) + 7 * DAY).toBe(expiresAt);
    const got = await t.api('GET', `/api/ret/sevenday/${res.body.data._id}`);
    expect(got.body.data.expiresAt).toBe(res.body.data.expiresAt);
  });

  it('records without retention carry no expiresAt', async () => {
    await crudPair('/api/ret/forever');
    const res = await t.api('POST', '/api/ret/forever', { body: { title: 'kept' } });
    expect(res.status).toBe(201);
    expect(res.body.data).not.toHaveProperty('expiresAt');
  });

  it('a handler’s db.create applies retentionDays too', async () => {
    await createEndpoint(t, admin, {
      path: '/api/ret/handled',
      method: 'POST',
      schema: {},
      retentionDays: 3,
      handler: { enabled: true, code: 'async function handler(req, db) { return { status: 201, data: await db.create({ title: "from handler" }) }; }' },
    });
    const res = await t.api('POST', '/api/ret/handled', { body: {} });
    expect(res.status, res.text).toBe(201);
    expect(Date.parse(res.body.data.expiresAt) - Date.parse(res.body.data.createdAt)).toBe(3 * DAY);
  });

  it('expired records are never returned — list, get, totals — and the sweep removes them', async () => {
    await crudPair('/api/ret/expiring', { retentionDays: 1 });
    const ids: string[] = [];
    for (const title of ['a', 'b', 'c']) ids.push((await t.api('POST', '/api/ret/expiring', { body: { title } })).body.data._id);
    const [expired, , alsoExpired] = ids as [string, string, string];
    expect((await t.api('GET', '/api/ret/expiring')).body.meta.total).toBe(3);

    const past = new Date(Date.now() - 1000);
    expect(await records().updateOne({ _id: expired }, { $set: { expiresAt: past } })).not.toBeNull();
    expect(await records().updateOne({ _id: alsoExpired }, { $set: { expiresAt: past } })).not.toBeNull();

    const list = await t.api('GET', '/api/ret/expiring');
    expect(list.status).toBe(200);
    expect(list.body.data.map((r: { title: string }) => r.title)).toEqual(['b']);
    expect(list.body.meta.total).toBe(1);
    const page2 = await t.api('GET', '/api/ret/expiring?limit=1&page=2');
    expect(page2.body.data).toEqual([]);
    expect(page2.body.meta.total).toBe(1);
    const got = await t.api('GET', `/api/ret/expiring/${expired}`);
    expect(got.status).toBe(404);
    expect(got.body).toEqual({ success: false, error: 'Record not found' });

    const removed = await t.server.services.store.sweepExpired();
    expect(removed).toBeGreaterThanOrEqual(2);
    // Gone for good: a second sweep finds nothing of them, and totals stay right.
    expect(await t.server.services.store.sweepExpired()).toBe(0);
    expect((await t.api('GET', '/api/ret/expiring')).body.meta.total).toBe(1);
    expect(await records().count({ resourcePath: '/api/ret/expiring' })).toBe(1);
  });

  it('expired records cannot be changed or deleted through the API', async () => {
    const path = '/api/ret/locked';
    await crudPair(path, { retentionDays: 1 });
    await createEndpoint(t, admin, { path, method: 'PATCH', retentionDays: 1 });
    await createEndpoint(t, admin, { path, method: 'DELETE', retentionDays: 1 });
    const id = (await t.api('POST', path, { body: { title: 'old' } })).body.data._id as string;
    await records().updateOne({ _id: id }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await t.api('PATCH', `${path}/${id}`, { body: { title: 'new' } })).status).toBe(404);
    expect((await t.api('DELETE', `${path}/${id}`)).status).toBe(404);
  });
});

describe('call counter', () => {
  it('each served call increments callCount, visible within about 2 seconds', async () => {
    const path = `/api/count/${unique('c')}`;
    const { get, post } = await crudPair(path);
    for (let i = 0; i < 3; i++) expect((await t.api('GET', path)).status).toBe(200);
    expect((await t.api('POST', path, { body: { title: 'x' } })).status).toBe(201);
    // A /test call is counted like a live one.
    expect((await t.api('POST', `/api/endpoints/${get}/test`, { token: admin, body: {} })).body.data.status).toBe(200);

    const started = Date.now();
    const count = async (id: string) => (await t.api('GET', `/api/endpoints/${id}`, { token: admin })).body.data.callCount as number;
    const getCount = await eventually(() => count(get), (n) => n >= 4, 2500);
    expect(getCount).toBe(4);
    expect(Date.now() - started).toBeLessThan(2500);
    expect(await count(post)).toBe(1);
    // And in the list.
    const listed = await t.api('GET', `/api/endpoints?search=${encodeURIComponent(path)}`, { token: admin });
    expect(listed.body.data.find((e: { _id: string }) => e._id === get).callCount).toBe(4);
  });

  it('the platform routes behind system definitions count their calls, failures included', async () => {
    const system = async () => {
      const res = await t.api('GET', '/api/endpoints?limit=100', { token: admin });
      const byPath = (path: string) => res.body.data.find((e: { path: string; isSystem: boolean }) => e.isSystem && e.path === path);
      return { csrf: byPath('/api/csrf-token').callCount as number, login: byPath('/api/auth/login').callCount as number };
    };
    const before = await system();
    for (let i = 0; i < 3; i++) expect((await t.api('GET', '/api/csrf-token')).status).toBe(200);
    expect((await t.api('POST', '/api/auth/login', { body: { login: 'admin', password: 'not the password' } })).status).toBe(401);
    await t.login();
    const after = await eventually(system, (counts) => counts.csrf - before.csrf >= 3 && counts.login - before.login >= 2, 2500);
    expect(after.csrf - before.csrf).toBe(3);
    expect(after.login - before.login).toBeGreaterThanOrEqual(2);
  });

  it('requests no definition matches count nowhere', async () => {
    const path = `/api/count/${unique('n')}`;
    const { get, post } = await crudPair(path);
    expect((await t.api('GET', `${path}/x/y`)).status).toBe(404);
    expect((await t.api('DELETE', `${path}/000000000000000000000000`)).status).toBe(405); // no DELETE definition
    expect((await t.api('GET', path)).status).toBe(200);
    const count = async (id: string) => (await t.api('GET', `/api/endpoints/${id}`, { token: admin })).body.data.callCount as number;
    expect(await eventually(() => count(get), (n) => n >= 1, 2500)).toBe(1);
    expect(await count(post)).toBe(0);
  });
});

describe('audit', () => {
  async function logs(server: TestServer, token: string, action: string, search: string): Promise<any[]> {
    const res = await server.api('GET', `/api/dashboard/logs?action=${action}&search=${encodeURIComponent(search)}&limit=100`, { token });
    expect(res.status).toBe(200);
    return res.body.data;
  }

  it('a served call is an api_call entry; a 4xx is an error entry', async () => {
    const path = `/api/audited/${unique('a')}`;
    await crudPair(path, { schema: { title: { type: 'string', required: true } } });
    const user = await createUserWith(t, ['view']);
    expect((await t.api('POST', path, { token: user.token, body: { title: 'ok' }, headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(201);
    expect((await t.api('POST', path, { body: { nope: 1 } })).status).toBe(400);
    expect((await t.api('GET', `${path}/000000000000000000000000`)).status).toBe(404);

    const calls = await eventually(() => logs(t, admin, 'api_call', path), (l) => l.length >= 1, 2000);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ action: 'api_call', source: 'endpoint', method: 'POST', path, statusCode: 201, ip: '203.0.113.9', userId: user.userId });

    const errors = await eventually(() => logs(t, admin, 'error', path), (l) => l.length >= 2, 2000);
    expect(errors.map((e) => e.statusCode).sort()).toEqual([400, 404]);
    const invalid = errors.find((e) => e.statusCode === 400);
    expect(invalid).toMatchObject({ action: 'error', method: 'POST', path, userId: null, ip: '127.0.0.1' });
    expect(invalid.message).toContain('400');
  });

  it('with auditApiCalls off, successful calls are not audited and failures still are', async () => {
    const server = await startTestServer();
    try {
      const token = await server.adminToken();
      const path = `/api/quiet/${unique('q')}`;
      await createEndpoint(server, token, { path, method: 'GET' });
      expect((await server.api('PUT', '/api/settings', { token, body: { auditApiCalls: false } })).status).toBe(200);
      expect((await server.api('GET', path)).status).toBe(200);
      expect((await server.api('GET', `${path}/000000000000000000000000`)).status).toBe(404);
      // The failure's entry shows that the buffer was written; the success left none.
      await eventually(() => logs(server, token, 'error', path), (l) => l.length >= 1, 2000);
      expect(await logs(server, token, 'api_call', path)).toEqual([]);

      expect((await server.api('PUT', '/api/settings', { token, body: { auditApiCalls: true } })).status).toBe(200);
      expect((await server.api('GET', path)).status).toBe(200);
      expect(await eventually(() => logs(server, token, 'api_call', path), (l) => l.length >= 1, 2000)).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('a network-denied call is audited as an error', async () => {
    const path = `/api/audited/${unique('n')}`;
    await createEndpoint(t, admin, { path, method: 'GET', networkAccess: { enabled: true, allowedIpRanges: ['203.0.113.9'] } });
    expect((await t.api('GET', path, { headers: { 'x-forwarded-for': '198.51.100.1' } })).status).toBe(403);
    const errors = await eventually(() => logs(t, admin, 'error', path), (l) => l.length >= 1, 2000);
    expect(errors[0]).toMatchObject({ statusCode: 403, path, ip: '198.51.100.1' });
    expect(errors[0].message).toContain('network access denied');
  });

  it('a clean close flushes buffered entries', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dyn-flush-'));
    try {
      let server = await startTestServer({}, dir);
      const token = await server.adminToken();
      const path = `/api/flushed/${unique('f')}`;
      await createEndpoint(server, token, { path, method: 'GET' });
      expect((await server.api('GET', path)).status).toBe(200);
      await server.close(); // right away: the entry is still in the buffer

      server = await startTestServer({}, dir);
      try {
        const entries = await logs(server, await server.adminToken(), 'api_call', path);
        expect(entries).toHaveLength(1);
        expect(entries[0]).toMatchObject({ path, method: 'GET', statusCode: 200 });
        // The call count was flushed too.
        const list = await server.api('GET', `/api/endpoints?search=${encodeURIComponent(path)}`, { token: await server.adminToken() });
        expect(list.body.data[0].callCount).toBe(1);
      } finally {
        await server.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('events', () => {
  function collect<E extends keyof EventMap>(event: E): { seen: EventMap[E][]; stop: () => void } {
    const seen: EventMap[E][] = [];
    const stop = t.server.services.events.on(event, (data) => {
      seen.push(data);
    });
    return { seen, stop };
  }

  it('endpoint.created carries the id, path, method and the definition', async () => {
    const created = collect('endpoint.created');
    try {
      const path = `/api/evt/${unique('c')}`;
      const id = await createEndpoint(t, admin, { path, method: 'POST' });
      // With a subscriber, the event also carries the definition as the API shows it (for webhooks).
      expect(created.seen).toEqual([{ id, path, method: 'POST', endpoint: expect.objectContaining({ _id: id, path, method: 'POST' }) }]);
    } finally {
      created.stop();
    }
  });

  it('endpoint.called only when a call succeeds; api.error on a 4xx instead', async () => {
    const called = collect('endpoint.called');
    const errors = collect('api.error');
    try {
      const path = `/api/evt/${unique('e')}`;
      const { get, post } = await crudPair(path, { schema: { title: { type: 'string', required: true } } });
      const ok = await t.api('POST', path, { body: { title: 'hi' } });
      expect(ok.status).toBe(201);
      expect((await t.api('POST', path, { body: {} })).status).toBe(400);
      expect((await t.api('GET', `${path}/${ok.body.data._id}`)).status).toBe(200);
      expect((await t.api('GET', `${path}/000000000000000000000000`)).status).toBe(404);

      const mine = called.seen.filter((e) => e.path.startsWith(path));
      expect(mine).toEqual([
        { endpointId: post, path, resourcePath: path, method: 'POST', statusCode: 201, source: 'http' },
        { endpointId: get, path: `${path}/${ok.body.data._id}`, resourcePath: path, method: 'GET', statusCode: 200, source: 'http' },
      ]);
      const myErrors = errors.seen.filter((e) => e.path.startsWith(path));
      expect(myErrors).toHaveLength(2);
      expect(myErrors[0]).toMatchObject({ endpointId: post, path, method: 'POST', statusCode: 400, source: 'http' });
      expect(myErrors[0]?.error).toMatch(/title/);
      expect(myErrors[1]).toEqual({ endpointId: get, path: `${path}/000000000000000000000000`, resourcePath: path, method: 'GET', statusCode: 404, error: 'Record not found', source: 'http' });
    } finally {
      called.stop();
      errors.stop();
    }
  });

  it('a call refused before the engine (unreadable body) is a failed call of its definition: api.error, audited, counted; a 429 is not', async () => {
    const server = await startTestServer();
    const seen: EventMap['api.error'][] = [];
    const stop = server.server.services.events.on('api.error', (data) => {
      seen.push(data);
    });
    try {
      const token = await server.adminToken();
      const path = `/api/evt/${unique('r')}`;
      const { get, post } = await crudPair(path, {}, server, token);
      const refused = [
        await server.api('POST', path, { rawBody: '{bad', headers: { 'content-type': 'application/json' } }),
        await server.api('POST', path, { rawBody: 'title=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      ];
      expect(refused.map((res) => res.status)).toEqual([400, 415]);
      // Nothing serves this path: not a call of any definition, so not recorded (and the route is
      // looked up before the body is read: a 404, whatever was sent).
      expect((await server.api('POST', `${path}/x/y`, { rawBody: '{bad', headers: { 'content-type': 'application/json' } })).status).toBe(404);
      // The rate limit (here on the fast path, GET) sheds load: what it refuses records nothing.
      expect((await server.api('PUT', '/api/settings', { token, body: { rateLimitEnabled: true, rateLimitMax: 1, rateLimitWindowSeconds: 60 } })).status).toBe(200);
      expect((await server.api('GET', path)).status).toBe(200);
      expect((await server.api('GET', path)).status).toBe(429);

      expect(seen).toEqual([
        { endpointId: post, path, resourcePath: path, method: 'POST', statusCode: 400, error: 'Malformed JSON body', source: 'http' },
        { endpointId: post, path, resourcePath: path, method: 'POST', statusCode: 415, error: expect.stringMatching(/application\/x-www-form-urlencoded/), source: 'http' },
      ]);
      // Audited and counted like the engine's own failures (read straight from the store: the API is rate limited now).
      await server.server.services.audit.flush();
      await server.server.services.callCounter.flush();
      const logged = await server.server.services.store.collection('logs').find({ action: 'error', path });
      expect(logged.map((entry) => entry.statusCode).sort()).toEqual([400, 415]);
      const counts = await server.server.services.store.collection('endpoints').find({ _id: { $in: [get, post] } });
      expect(Object.fromEntries(counts.map((doc) => [doc._id, doc.callCount]))).toEqual({ [get]: 1, [post]: 2 });
    } finally {
      stop();
      await server.close();
    }
  });

  it('a failing subscriber does not break the call', async () => {
    const stop = t.server.services.events.on('endpoint.called', () => {
      throw new Error('subscriber failed');
    });
    const stopAsync = t.server.services.events.on('endpoint.called', async () => {
      throw new Error('async subscriber failed');
    });
    try {
      const path = `/api/evt/${unique('f')}`;
      await createEndpoint(t, admin, { path, method: 'GET' });
      expect((await t.api('GET', path)).status).toBe(200);
    } finally {
      stop();
      stopAsync();
    }
  });
});
