import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Principal } from '../../src/model/principal.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * engine.invoke — the call MCP `tools/call`, cron's endpoint action and the /test route make —
 * runs through the same steps as a live request on a real server: what it returns is what an
 * HTTP client of the same definition gets, and it is counted, audited and announced like one.
 */
let t: TestServer;
let admin: string;
let seq = 0;
const unique = (prefix = 'inv') => `${prefix}${Date.now().toString(36)}${(seq++).toString(36)}`;

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
});
afterAll(async () => {
  await t.close();
});

async function define(body: Record<string, unknown>): Promise<string> {
  const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: unique('n'), accessType: 'public', schema: { title: { type: 'string' } }, ...body } });
  if (res.status !== 201) throw new Error(`endpoint create failed: ${res.status} ${res.text}`);
  return res.body.data._id as string;
}

const engine = () => t.server.services.engine;

describe('engine.invoke', () => {
  it('by endpoint id: creates a record that a live GET then lists, with a plain-object body', async () => {
    const path = `/api/${unique()}/items`;
    const post = await define({ path, method: 'POST', schema: { title: { type: 'string', required: true } } });
    const get = await define({ path, method: 'GET' });
    const created = await engine().invoke(post, { body: { title: 'invoked' }, source: 'mcp' }, undefined);
    expect(created).toMatchObject({ status: 201, body: { success: true, data: { title: 'invoked', _id: expect.stringMatching(/^[0-9a-f]{24}$/) } } });
    const live = await t.api('GET', path);
    const record = (created.body as { data: unknown }).data;
    expect(live.body.data).toEqual([record]);

    const listed = await engine().invoke(get, { query: { limit: '1' } }, undefined);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ success: true, data: [record], meta: { page: 1, limit: 1, total: 1 } });
    expect((listed.body as object).constructor).toBe(Object); // never JsonText
    const one = await engine().invoke(get, { recordId: (record as { _id: string })._id }, undefined);
    expect(one).toMatchObject({ status: 200, body: { success: true, data: record } });
    expect((one.body as object).constructor).toBe(Object);
  });

  it('by method and path: the same answer a live client gets, failures included', async () => {
    const path = `/api/${unique()}/items`;
    await define({ path, method: 'POST', schema: { title: { type: 'string', required: true } } });
    await define({ path, method: 'GET' });
    const invalid = await engine().invoke({ method: 'POST', path }, { body: {} }, undefined);
    const live = await t.api('POST', path, { body: {} });
    expect(invalid).toMatchObject({ status: live.status, body: live.body });
    const item = await engine().invoke({ method: 'get', path: `${path}/000000000000000000000000` }, {}, undefined);
    expect(item).toMatchObject({ status: 404, body: { success: false, error: 'Record not found' } });
  });

  it('an unknown target is a 404 response, a path served with other methods a 405 with Allow — never a throw', async () => {
    const path = `/api/${unique()}/items`;
    await define({ path, method: 'GET' });
    expect(await engine().invoke('000000000000000000000000', {}, undefined)).toEqual({ status: 404, body: { success: false, error: 'Endpoint not found' } });
    expect(await engine().invoke({ method: 'GET', path: `/api/${unique()}/nothing` }, {}, undefined)).toMatchObject({ status: 404, body: { success: false } });
    const wrong = await engine().invoke({ method: 'DELETE', path }, {}, undefined);
    const live = await t.api('DELETE', path);
    expect(wrong).toEqual({ status: 405, body: live.body, headers: { Allow: 'GET, HEAD, OPTIONS' } });
    expect(live.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('a disabled definition answers 404 unless includeDisabled', async () => {
    const id = await define({ path: `/api/${unique()}/items`, method: 'GET', enabled: false });
    expect((await engine().invoke(id, {}, undefined)).status).toBe(404);
    expect((await engine().invoke(id, { includeDisabled: true }, undefined)).status).toBe(200);
  });

  it('fills :param segments from params; a missing one is a 400 response', async () => {
    const base = unique();
    const post = await define({ path: `/api/${base}/:shop/items`, method: 'POST' });
    await define({ path: `/api/${base}/:shop/items`, method: 'GET' });
    expect(await engine().invoke(post, { body: { title: 'x' } }, undefined)).toEqual({
      status: 400,
      body: { success: false, error: 'params needs shop', details: [{ field: 'params', message: 'needs shop' }] },
    });
    expect((await engine().invoke(post, { body: { title: 'in s1' }, params: { shop: 's1' } }, undefined)).status).toBe(201);
    expect((await t.api('GET', `/api/${base}/s1/items`)).body.data.map((r: { title: string }) => r.title)).toEqual(['in s1']);
  });

  it('checks access as the given principal, and network rules unless skipNetworkRules', async () => {
    const path = `/api/${unique()}/items`;
    const closed = await define({ path, method: 'GET', accessType: 'authenticated', networkAccess: { enabled: true, allowedIpRanges: ['10.9.9.9'] } });
    expect((await engine().invoke(closed, { ip: '10.9.9.9' }, undefined)).status).toBe(401);
    const me = (await t.api('GET', '/api/profile', { token: admin })).body.data;
    const principal: Principal = { kind: 'user', userId: me._id, login: me.login, groupIds: me.groupIds, permissions: new Set() };
    expect((await engine().invoke(closed, {}, principal)).status).toBe(403);
    expect((await engine().invoke(closed, { ip: '10.9.9.9' }, principal)).status).toBe(200);
    expect((await engine().invoke(closed, { skipNetworkRules: true }, principal)).status).toBe(200);
  });

  it('is counted and audited with who called it (via), and announced to subscribers with its source', async () => {
    const path = `/api/${unique()}/items`;
    const get = await define({ path, method: 'GET' });
    const seen: Array<{ source: string; statusCode: number }> = [];
    const stop = t.server.services.events.on('endpoint.called', (event) => {
      if (event.path === path) seen.push({ source: event.source, statusCode: event.statusCode });
    });
    try {
      await engine().invoke(get, { source: 'cron' }, undefined);
      await engine().invoke({ method: 'GET', path }, { source: 'mcp' }, undefined);
      await t.api('GET', path);
      expect(seen).toEqual([{ source: 'cron', statusCode: 200 }, { source: 'mcp', statusCode: 200 }, { source: 'http', statusCode: 200 }]);
    } finally {
      stop();
    }
    await vi.waitFor(
      async () => {
        const calls = await t.api('GET', `/api/dashboard/logs?action=api_call&search=${encodeURIComponent(path)}`, { token: admin });
        expect(calls.body.data.map((entry: { via: string }) => entry.via).sort()).toEqual(['cron', 'http', 'mcp']);
        const doc = await t.api('GET', `/api/endpoints/${get}`, { token: admin });
        expect(doc.body.data.callCount).toBe(3);
      },
      { timeout: 5000, interval: 100 },
    );
  });

  it('/test calls are audited as via test', async () => {
    const path = `/api/${unique()}/items`;
    const get = await define({ path, method: 'GET' });
    expect((await t.api('POST', `/api/endpoints/${get}/test`, { token: admin, body: {} })).body.data.status).toBe(200);
    await vi.waitFor(
      async () => {
        const calls = await t.api('GET', `/api/dashboard/logs?action=api_call&search=${encodeURIComponent(path)}`, { token: admin });
        expect(calls.body.data).toHaveLength(1);
        expect(calls.body.data[0]).toMatchObject({ source: 'endpoint', via: 'test', path, statusCode: 200 });
      },
      { timeout: 5000, interval: 100 },
    );
  });
});
