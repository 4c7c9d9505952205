import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

let t: TestServer;
let admin: string;
beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
});
afterAll(async () => {
  await t.close();
});

const define = (body: Record<string, unknown>) =>
  t.api('POST', '/api/endpoints', { token: admin, body: { name: `e-${Math.random().toString(36).slice(2, 8)}`, accessType: 'public', schema: { title: { type: 'string' } }, ...body } });

describe('definition edge rules', () => {
  it('refuses a definition that would take another one\'s requests (409), and changes nothing', async () => {
    const books = await define({ name: 'Books', path: '/api/shape/books', method: 'GET' });
    expect(books.status).toBe(201);
    // A collection route one :param below: GET /api/shape/books/<id> would reach it instead.
    const takeover = await define({ path: '/api/shape/books/:slug', method: 'GET' });
    expect(takeover.status).toBe(409);
    expect(takeover.body).toEqual({
      success: false,
      error: 'GET /api/shape/books/:slug would take every record route of "Books" (GET /api/shape/books): GET /api/shape/books/<id> would reach it instead. Put a literal segment before :slug (e.g. /api/shape/books/by-slug/:slug) or give "Books" (GET /api/shape/books) a handler',
    });
    // Another method is another route; a literal segment does not take the item routes.
    expect((await define({ path: '/api/shape/books/:slug', method: 'DELETE' })).status).toBe(201);
    expect((await define({ path: '/api/shape/books/by-slug/:slug', method: 'GET' })).status).toBe(201);
    // The other way round: a definition whose record routes an existing one takes.
    const under = await define({ path: '/api/shape/:shop/shelves/:shelf', method: 'GET' });
    expect(under.status).toBe(201);
    const shelves = await define({ path: '/api/shape/:store/shelves', method: 'GET' });
    expect(shelves.status).toBe(409);
    expect(shelves.body.error).toMatch(/^GET \/api\/shape\/:store\/shelves: its record routes \(GET \/api\/shape\/:store\/shelves\/<id>\) would be taken by ".+" \(GET \/api\/shape\/:shop\/shelves\/:shelf\)$/);
    // The same path but for parameter names: one of the two would never be reached.
    const renamed = await define({ path: '/api/shape/:a/shelves/:b', method: 'GET' });
    expect(renamed.status).toBe(409);
    expect(renamed.body.error).toMatch(/^GET \/api\/shape\/:a\/shelves\/:b matches the same requests as ".+" \(GET \/api\/shape\/:shop\/shelves\/:shelf\), which would answer them$/);
    // An update that moves a definition onto such a path is refused too; its own save is not.
    const moved = await t.api('PUT', `/api/endpoints/${under.body.data._id}`, { token: admin, body: { path: '/api/shape/books/:slug' } });
    expect(moved.status).toBe(409);
    expect((await t.api('PUT', `/api/endpoints/${under.body.data._id}`, { token: admin, body: { description: 'kept' } })).status).toBe(200);
    const paths = (await t.api('GET', '/api/endpoints?search=shape&limit=100', { token: admin })).body.data.map((e: { method: string; path: string }) => `${e.method} ${e.path}`).sort();
    expect(paths).toEqual(['DELETE /api/shape/books/:slug', 'GET /api/shape/:shop/shelves/:shelf', 'GET /api/shape/books', 'GET /api/shape/books/by-slug/:slug']);
  });

  it('refuses a path that equals another definition\'s versioned form, both ways (409)', async () => {
    expect((await define({ path: '/api/edge/items', method: 'GET', apiVersion: 'v1' })).status).toBe(201);
    const explicit = await define({ path: '/api/v1/edge/items', method: 'GET' });
    expect(explicit.status).toBe(409);
    expect(explicit.body.error).toMatch(/GET \/api\/v1\/edge\/items is already served by/);
    expect((await define({ path: '/api/v1/edge/other', method: 'GET' })).status).toBe(201);
    expect((await define({ path: '/api/edge/other', method: 'GET', apiVersion: 'v1' })).status).toBe(409);
    // Another method too: the URL would answer GET from /api/edge/items's records and POST into its own.
    const post = await define({ path: '/api/v1/edge/items', method: 'POST' });
    expect(post.status).toBe(409);
    expect(post.body.error).toBe('POST /api/v1/edge/items: /api/v1/edge/items is already served by "' + post.body.error.split('"')[1] + '" (GET /api/edge/items, v1), with the records of another path; a definition there would answer one URL from two sets of records');
    expect((await define({ path: '/api/edge/items', method: 'POST', apiVersion: 'v1' })).status).toBe(201);
  });

  it('refuses a path change that drops a parameter while the endpoint has records: the values would be lost and the records mixed (400)', async () => {
    const post = await define({ path: '/api/edge/shops/:shop/items', method: 'POST' });
    for (const shop of ['1', '2']) expect((await t.api('POST', `/api/edge/shops/${shop}/items`, { body: { title: shop } })).status).toBe(201);
    const moved = await t.api('PUT', `/api/endpoints/${post.body.data._id}`, { token: admin, body: { path: '/api/edge/flat' } });
    expect(moved.status).toBe(400);
    expect(moved.body).toMatchObject({ success: false, error: 'Invalid path: this endpoint\'s records cannot move to /api/edge/flat: they would lose their :shop value, and the records of every value would be mixed', details: [{ field: 'path', message: 'drops parameters its records have values for' }] });
    expect((await t.api('GET', `/api/endpoints/${post.body.data._id}`, { token: admin })).body.data.path).toBe('/api/edge/shops/:shop/items');
    // Renamed, the parameter is kept: allowed.
    expect((await t.api('PUT', `/api/endpoints/${post.body.data._id}`, { token: admin, body: { path: '/api/edge/stores/:shop/items' } })).status).toBe(200);
  });

  it('saved at the same moment, a path and the versioned form of another cannot both get in', async () => {
    for (let round = 0; round < 6; round++) {
      const [versioned, plain] = await Promise.all([define({ path: `/api/race${round}/rv`, method: 'GET', apiVersion: 'v1' }), define({ path: `/api/v1/race${round}/rv`, method: 'GET' })]);
      expect([versioned.status, plain.status].sort(), `round ${round}`).toEqual([201, 409]);
    }
  });

  it('refuses changes to a system endpoint that the platform would ignore (400)', async () => {
    const list = await t.api('GET', '/api/endpoints?search=login', { token: admin });
    const login = list.body.data.find((e: { path: string }) => e.path === '/api/auth/login');
    const inert = await t.api('PUT', `/api/endpoints/${login._id}`, { token: admin, body: { accessType: 'authenticated' } });
    expect(inert.status).toBe(400);
    expect(inert.body.error).toMatch(/accessType cannot be changed/);
    expect((await t.api('PUT', `/api/endpoints/${login._id}`, { token: admin, body: { description: 'Sign in' } })).status).toBe(200);
  });

  it('refuses a path change that adds parameters the endpoint\'s records have no value for (400)', async () => {
    const post = await define({ path: '/api/edge/notes', method: 'POST' });
    expect((await t.api('POST', '/api/edge/notes', { body: { title: 'a' } })).status).toBe(201);
    const moved = await t.api('PUT', `/api/endpoints/${post.body.data._id}`, { token: admin, body: { path: '/api/edge/:owner/notes' } });
    expect(moved.status).toBe(400);
    expect(moved.body.error).toMatch(/no value for :owner/);
    expect((await t.api('GET', `/api/endpoints/${post.body.data._id}`, { token: admin })).body.data.path).toBe('/api/edge/notes');
  });

  it('treats endpoint group names as unique regardless of case (409)', async () => {
    expect((await t.api('POST', '/api/endpoints/groups', { token: admin, body: { name: 'Shop' } })).status).toBe(201);
    expect((await t.api('POST', '/api/endpoints/groups', { token: admin, body: { name: ' shop ' } })).status).toBe(409);
  });

  it('keeps list totals right after retention is switched off (expired records were swept)', async () => {
    const post = await define({ path: '/api/edge/temp', method: 'POST', retentionDays: 1 });
    await define({ path: '/api/edge/temp', method: 'GET' });
    const a = await t.api('POST', '/api/edge/temp', { body: { title: 'a' } });
    await t.api('POST', '/api/edge/temp', { body: { title: 'b' } });
    await t.server.services.store.collection('endpointdatas').updateOne({ _id: a.body.data._id }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
    await t.server.services.store.sweepExpired();
    expect((await t.api('PUT', `/api/endpoints/${post.body.data._id}`, { token: admin, body: { retentionDays: null } })).status).toBe(200);
    const list = await t.api('GET', '/api/edge/temp');
    expect(list.body.data.map((r: { title: string }) => r.title)).toEqual(['b']);
    expect(list.body.meta.total).toBe(1);
  });
});
