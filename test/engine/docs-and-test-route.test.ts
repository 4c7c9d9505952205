import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * What the management API tells about a definition (`/examples`, `/docs`) and the `/test` route,
 * which runs a definition through the same dispatch as a live call, as the calling user.
 */
let t: TestServer;
let admin: string;
let adminId: string;

let seq = 0;
const unique = (prefix = 't') => `${prefix}${Date.now().toString(36)}${(seq++).toString(36)}`;
const freshPath = (leaf = 'items') => `/api/${unique()}/${leaf}`;

async function define(fields: Record<string, unknown> = {}): Promise<any> {
  const body = { name: 'Items', path: freshPath(), method: 'GET', accessType: 'public', schema: {}, ...fields };
  const res = await t.api('POST', '/api/endpoints', { token: admin, body });
  if (res.status !== 201) throw new Error(`endpoint create failed: ${res.text}`);
  return res.body.data;
}

function runTest(id: string, body: Record<string, unknown> = {}, token = admin) {
  return t.api('POST', `/api/endpoints/${id}/test`, { token, body });
}

async function systemEndpoint(method: string, path: string): Promise<any> {
  const list = await t.api('GET', '/api/endpoints?limit=100', { token: admin });
  return list.body.data.find((e: { method: string; path: string }) => e.method === method && e.path === path);
}

/** A schema using every field type that needs no other record. */
const productSchema = {
  title: { type: 'string', required: true, maxLength: 200, description: 'The title' },
  code: { type: 'string', minLength: 6 },
  size: { type: 'string', enum: ['S', 'M', 'L'] },
  price: { type: 'number', minimum: 2 },
  stock: { type: 'number', integer: true },
  inStock: { type: 'boolean' },
  tags: { type: 'array', items: { type: 'string' }, defaultValue: ['new'] },
  releasedAt: { type: 'datetime' },
  extra: { type: 'json' },
  address: { type: 'object', children: { city: { type: 'string', required: true } } },
};

beforeAll(async () => {
  t = await startTestServer();
  const session = await t.login();
  admin = session.accessToken;
  adminId = session.user._id;
});
afterAll(async () => {
  await t.close();
});

describe('GET /api/endpoints/:id/examples', () => {
  it('a POST definition gets a create example whose body matches the schema and the live endpoint accepts', async () => {
    const post = await define({ method: 'POST', schema: productSchema });
    const res = await t.api('GET', `/api/endpoints/${post._id}/examples`, { token: admin });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ endpointId: post._id, method: 'POST', path: post.path });
    expect(res.body.data.examples).toHaveLength(1);
    const [example] = res.body.data.examples;
    expect(example).toMatchObject({
      name: 'Create',
      request: { method: 'POST', url: post.path, headers: { 'Content-Type': 'application/json' } },
      response: { status: 201 },
    });
    expect(example.request.headers).not.toHaveProperty('Authorization');

    const body = example.request.body;
    expect(Object.keys(body).sort()).toEqual(Object.keys(productSchema).sort());
    expect(body).toEqual({
      title: expect.any(String),
      code: expect.stringMatching(/^.{6,}$/),
      size: 'S',
      price: 2,
      stock: 0,
      inStock: true,
      tags: ['new'],
      releasedAt: expect.any(String),
      extra: expect.anything(),
      address: { city: expect.any(String) },
    });
    expect(example.response.body).toEqual({
      success: true,
      data: { _id: expect.stringMatching(/^[0-9a-f]{24}$/), ...body, createdAt: expect.any(String), updatedAt: expect.any(String) },
    });

    const live = await t.api('POST', post.path, { body });
    expect(live.status, live.text).toBe(201);
    expect(Object.keys(live.body.data).sort()).toEqual(Object.keys(example.response.body.data).sort());
  });

  it('a reference field gets a record id as its sample', async () => {
    const post = await define({ method: 'POST', schema: { category: { type: 'reference', ref: '/api/shop/categories' } } });
    const res = await t.api('GET', `/api/endpoints/${post._id}/examples`, { token: admin });
    expect(res.body.data.examples[0].request.body).toEqual({ category: expect.stringMatching(/^[0-9a-f]{24}$/) });
  });

  it('names the newest existing record where a reference points (for whoever may run it), so the sample body can be sent as it is', async () => {
    const categories = await define({ method: 'POST', schema: { title: { type: 'string' } } });
    const first = (await t.api('POST', categories.path, { body: { title: 'older' } })).body.data._id;
    const newest = (await t.api('POST', categories.path, { body: { title: 'newer' } })).body.data._id;
    expect(first).not.toBe(newest);
    const post = await define({ method: 'POST', schema: { category: { type: 'reference', ref: categories.path }, lines: { type: 'array', items: { type: 'object', children: { c: { type: 'reference', ref: categories.path } } } } } });
    const res = await t.api('GET', `/api/endpoints/${post._id}/examples`, { token: admin });
    const body = res.body.data.examples[0].request.body;
    expect(body.category).toBe(newest);
    for (const line of body.lines) expect(line.c).toBe(newest);
    expect((await t.api('POST', post.path, { body })).status).toBe(201);
    // `view` alone gets placeholders: record ids of other paths are not shown to it.
    const viewer = await createUserWith(t, ['view']);
    const seen = (await t.api('GET', `/api/endpoints/${post._id}/examples`, { token: viewer.token })).body.data.examples[0].request.body;
    expect(seen.category).not.toBe(newest);
  });

  it.each([
    { method: 'GET', names: ['List', 'Get one'], item: [false, true], body: false },
    { method: 'PUT', names: ['Replace'], item: [true], body: true },
    { method: 'PATCH', names: ['Update'], item: [true], body: true },
    { method: 'DELETE', names: ['Delete'], item: [true], body: false },
  ])('a $method definition gets the examples $names', async ({ method, names, item, body }) => {
    const doc = await define({ method, schema: { title: { type: 'string' } } });
    const res = await t.api('GET', `/api/endpoints/${doc._id}/examples`, { token: admin });
    expect(res.status).toBe(200);
    const examples = res.body.data.examples;
    expect(examples.map((e: { name: string }) => e.name)).toEqual(names);
    examples.forEach((example: any, index: number) => {
      expect(example.request.method).toBe(method);
      expect(example.request.url).toMatch(item[index] ? new RegExp(`^${doc.path}/[0-9a-f]{24}$`) : new RegExp(`^${doc.path}\\?`));
      expect('body' in example.request).toBe(body);
      if (body) expect(example.request.body).toEqual({ title: expect.any(String) });
      expect(example.response.status).toBe(200);
      expect(example.response.body.success).toBe(true);
    });
    if (method === 'GET') expect(examples[0].response.body.meta).toEqual({ page: 1, limit: 20, total: 1 });
  });

  it('shows path parameters as {name}, credentials for non-public endpoints, and a note for handlers', async () => {
    const base = unique();
    const doc = await define({
      path: `/api/${base}/:shopId/items`,
      method: 'POST',
      accessType: 'authenticated',
      handler: { enabled: true, code: 'async function handler(req, db) { return { status: 201, data: req.body }; }' },
    });
    const res = await t.api('GET', `/api/endpoints/${doc._id}/examples`, { token: admin });
    const [example] = res.body.data.examples;
    expect(example.request.url).toBe(`/api/${base}/{shopId}/items`);
    expect(example.request.headers).toEqual({ Authorization: 'Bearer <access token>', 'Content-Type': 'application/json' });
    expect(example.note).toMatch(/handler/);
  });

  it('an unknown or malformed id is a 404', async () => {
    for (const id of ['000000000000000000000000', 'nope']) {
      const res = await t.api('GET', `/api/endpoints/${id}/examples`, { token: admin });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: 'Endpoint not found' });
    }
  });
});

describe('GET /api/endpoints/:id/docs', () => {
  it('a POST definition lists its body parameters and fields', async () => {
    const doc = await define({
      name: 'Create product',
      description: 'Adds a product',
      method: 'POST',
      apiVersion: 'v2',
      retentionDays: 30,
      schema: {
        title: { type: 'string', required: true, description: 'The title' },
        price: { type: 'number', required: true, defaultValue: 1 },
        category: { type: 'reference', ref: '/api/shop/categories' },
      },
    });
    const res = await t.api('GET', `/api/endpoints/${doc._id}/docs`, { token: admin });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      endpointId: doc._id,
      name: 'Create product',
      description: 'Adds a product',
      method: 'POST',
      path: doc.path,
      versionedPath: doc.path.replace('/api/', '/api/v2/'),
      accessType: 'public',
      enabled: true,
      handler: false,
      retentionDays: 30,
      parameters: [
        { name: 'title', in: 'body', type: 'string', required: true, description: 'The title' },
        { name: 'price', in: 'body', type: 'number', required: false, description: 'default 1' },
        { name: 'category', in: 'body', type: 'reference', required: false, description: 'id of a record of /api/shop/categories' },
      ],
      fields: [
        { name: 'title', type: 'string', required: true, indexed: false, unique: false, description: 'The title' },
        { name: 'price', type: 'number', required: true, indexed: false, unique: false, description: 'default 1' },
        { name: 'category', type: 'reference', required: false, indexed: false, unique: false, description: 'id of a record of /api/shop/categories' },
      ],
    });
  });

  it('a GET definition on a :param path lists path and query parameters', async () => {
    const base = unique();
    const doc = await define({ path: `/api/${base}/:shopId/items`, method: 'GET', schema: { title: { type: 'string' } } });
    const res = await t.api('GET', `/api/endpoints/${doc._id}/docs`, { token: admin });
    const parameters = res.body.data.parameters as Array<{ name: string; in: string; required: boolean }>;
    expect(parameters.map((p) => [p.in, p.name, p.required])).toEqual([
      ['path', 'shopId', true],
      ['path', 'id', false],
      ['query', 'page', false],
      ['query', 'limit', false],
      ['query', 'sort', false],
      ['query', 'populate', false],
      ['query', 'search', false],
      ['query', 'total', false],
      ['query', 'title', false],
    ]);
    expect(parameters.at(-1)).toMatchObject({ type: 'string', description: 'filter: title=value, or title[ne|gt|gte|lt|lte|in|nin|exists]=value' });
    expect(res.body.data).not.toHaveProperty('versionedPath');
  });

  it('PUT needs the record id and the required fields; PATCH needs only the id', async () => {
    const schema = { title: { type: 'string', required: true } };
    for (const [method, required] of [['PUT', true], ['PATCH', false]] as const) {
      const doc = await define({ method, schema });
      const res = await t.api('GET', `/api/endpoints/${doc._id}/docs`, { token: admin });
      expect(res.body.data.parameters.map((p: any) => [p.in, p.name, p.required])).toEqual([
        ['path', 'id', true],
        ['body', 'title', required],
      ]);
    }
  });

  it("marks a field unique when another definition of the path does, and offers field=value only where eq is taken", async () => {
    const path = freshPath();
    const get = await define({ path, method: 'GET', schema: { sku: { type: 'string', unique: true }, tags: { type: 'array', items: { type: 'string' } } } });
    const post = await define({ path, method: 'POST', schema: { sku: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } } });
    const postDocs = (await t.api('GET', `/api/endpoints/${post._id}/docs`, { token: admin })).body.data;
    expect(postDocs.fields.find((f: any) => f.name === 'sku')).toMatchObject({ indexed: true, unique: true });
    expect(postDocs.parameters.find((p: any) => p.name === 'sku').description).toContain('unique (another record of this path with the same value is a 409)');
    const getDocs = (await t.api('GET', `/api/endpoints/${get._id}/docs`, { token: admin })).body.data;
    expect(getDocs.parameters.find((p: any) => p.name === 'tags').description).toBe('filter: tags[has|exists]=value');
    expect(getDocs.parameters.find((p: any) => p.name === 'sku').description).toBe('filter: sku=value, or sku[ne|gt|gte|lt|lte|in|nin|exists]=value (indexed)');
  });

  it('an unknown id is a 404', async () => {
    const res = await t.api('GET', '/api/endpoints/000000000000000000000000/docs', { token: admin });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: 'Endpoint not found' });
  });
});

describe('POST /api/endpoints/:id/test', () => {
  it('a test POST creates a record that a live GET then lists, and reports what it did', async () => {
    const post = await define({ method: 'POST', schema: { title: { type: 'string', required: true } } });
    await define({ path: post.path, method: 'GET' });
    const res = await runTest(post._id, { body: { title: 'From a test' }, headers: { 'X-Trace': 'abc' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: {
        request: { method: 'POST', path: post.path, headers: { 'x-trace': 'abc' }, query: {}, body: { title: 'From a test' }, clientIp: '127.0.0.1', networkRulesApplied: false },
        status: 201,
        body: { success: true, data: { _id: expect.stringMatching(/^[0-9a-f]{24}$/), title: 'From a test', createdAt: expect.any(String), updatedAt: expect.any(String) } },
        durationMs: expect.any(Number),
      },
    });
    expect(res.body.data.durationMs).toBeGreaterThanOrEqual(0);
    const live = await t.api('GET', post.path);
    expect(live.body.data).toEqual([res.body.data.body.data]);
  });

  it('a test GET lists with the given query, or reads the record given by recordId', async () => {
    const post = await define({ method: 'POST', schema: { n: { type: 'number' } } });
    const get = await define({ path: post.path, method: 'GET', schema: { n: { type: 'number' } } });
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push((await t.api('POST', post.path, { body: { n } })).body.data._id);

    const list = await runTest(get._id, { query: { limit: '2', sort: '-n' } });
    expect(list.body.data.status).toBe(200);
    expect(list.body.data.body.data.map((r: { n: number }) => r.n)).toEqual([3, 2]);
    expect(list.body.data.body.meta).toEqual({ page: 1, limit: 2, total: 3 });

    const one = await runTest(get._id, { recordId: ids[0] });
    expect(one.body.data.request.path).toBe(`${post.path}/${ids[0]}`);
    expect(one.body.data.status).toBe(200);
    expect(one.body.data.body.data).toMatchObject({ _id: ids[0], n: 1 });

    const missing = await runTest(get._id, { recordId: '000000000000000000000000' });
    expect(missing.body.data.status).toBe(404);
    const badQuery = await runTest(get._id, { query: { colour: 'red' } });
    expect(badQuery.body.data).toMatchObject({ status: 400, body: { success: false, error: 'Unknown query parameter "colour"' } });
  });

  it('the endpoint\'s own answer is reported, a validation failure included', async () => {
    const post = await define({ method: 'POST', schema: { title: { type: 'string', required: true } } });
    const res = await runTest(post._id, { body: { price: 1 } });
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe(400);
    expect(res.body.data.body).toMatchObject({ success: false, error: 'Invalid record: title is required' });
    const none = await runTest(post._id);
    expect(none.body.data).toMatchObject({ status: 400, request: { body: null } });
  });

  it('network rules are skipped unless applyNetworkAccess', async () => {
    const post = await define({ method: 'POST', schema: { n: { type: 'number' } }, networkAccess: { enabled: true, allowedIpRanges: ['10.9.9.9'] } });
    const get = await define({ path: post.path, method: 'GET', networkAccess: { enabled: true, allowedIpRanges: ['10.9.9.9'] } });
    expect((await t.api('POST', post.path, { body: { n: 0 } })).status).toBe(403); // live, from 127.0.0.1

    const skipped = await runTest(post._id, { body: { n: 1 } });
    expect(skipped.body.data).toMatchObject({ status: 201, request: { clientIp: '127.0.0.1', networkRulesApplied: false } });
    expect((await runTest(get._id)).body.data.status).toBe(200);
    expect((await runTest(post._id, { body: { n: 2 }, clientIp: '8.8.8.8' })).body.data.status).toBe(201);

    const allowed = await runTest(post._id, { body: { n: 3 }, clientIp: '10.9.9.9', applyNetworkAccess: true });
    expect(allowed.body.data).toMatchObject({ status: 201, request: { clientIp: '10.9.9.9', networkRulesApplied: true } });
    expect((await runTest(get._id, { clientIp: '10.9.9.9', applyNetworkAccess: true })).body.data.status).toBe(200);

    for (const clientIp of ['8.8.8.8', undefined]) {
      const denied = await runTest(post._id, { body: { n: 4 }, applyNetworkAccess: true, ...(clientIp ? { clientIp } : {}) });
      expect(denied.status).toBe(200);
      expect(denied.body.data).toMatchObject({ status: 403, body: { success: false, error: 'Forbidden: network access denied' } });
    }
    const records = await runTest(get._id);
    expect(records.body.data.body.data.map((r: { n: number }) => r.n)).toEqual([1, 2, 3]);
  });

  it('rules inherited from the endpoint group apply as well', async () => {
    const group = await t.api('POST', '/api/endpoints/groups', { token: admin, body: { name: unique('net-'), networkAccess: { enabled: true, allowedIpRanges: ['10.9.9.9'] } } });
    const get = await define({ method: 'GET', groupId: group.body.data._id });
    expect((await runTest(get._id, { applyNetworkAccess: true, clientIp: '8.8.8.8' })).body.data.status).toBe(403);
    expect((await runTest(get._id, { applyNetworkAccess: true, clientIp: '10.9.9.9' })).body.data.status).toBe(200);
  });

  it('a :param path needs its params; records land under the given values', async () => {
    const base = unique();
    const path = `/api/${base}/:shopId/items`;
    const post = await define({ path, method: 'POST', schema: { title: { type: 'string' } } });
    await define({ path, method: 'GET' });
    for (const params of [undefined, {}, { other: 'x' }, { shopId: '' }]) {
      const res = await runTest(post._id, { body: { title: 'x' }, ...(params ? { params } : {}) });
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(res.body).toEqual({ success: false, error: 'Invalid request body: params needs shopId', details: [{ field: 'params', message: 'needs shopId' }] });
    }
    const res = await runTest(post._id, { body: { title: 'in s1' }, params: { shopId: 's1' } });
    expect(res.body.data).toMatchObject({ status: 201, request: { path: `/api/${base}/s1/items` } });
    expect((await t.api('GET', `/api/${base}/s1/items`)).body.data.map((r: { title: string }) => r.title)).toEqual(['in s1']);
    expect((await t.api('GET', `/api/${base}/s2/items`)).body.data).toEqual([]);
  });

  it.each([
    { name: 'an invalid clientIp', body: { clientIp: 'not-an-ip' }, error: 'Invalid request body: clientIp must be an IP address' },
    { name: 'an unknown field', body: { ip: '10.0.0.1' }, error: 'Invalid request body: ip is not an allowed field' },
    { name: 'a non-string header', body: { headers: { 'x-n': 1 } }, error: expect.stringMatching(/^Invalid request body: headers\.x-n /) },
    { name: 'a non-boolean applyNetworkAccess', body: { applyNetworkAccess: 'yes' }, error: expect.stringMatching(/^Invalid request body: applyNetworkAccess /) },
  ])('$name is a 400', async ({ body, error }) => {
    const get = await define({ method: 'GET' });
    const res = await runTest(get._id, body);
    expect(res.status, res.text).toBe(400);
    expect(res.body).toMatchObject({ success: false, error });
  });

  it('a disabled endpoint can be tested while it is not served', async () => {
    const post = await define({ method: 'POST', enabled: false, schema: { title: { type: 'string' } } });
    const get = await define({ path: post.path, method: 'GET', enabled: false });
    expect((await t.api('POST', post.path, { body: { title: 'live' } })).status).toBe(404);
    expect((await runTest(post._id, { body: { title: 'tested' } })).body.data.status).toBe(201);
    const list = await runTest(get._id);
    expect(list.body.data.status).toBe(200);
    expect(list.body.data.body.data.map((r: { title: string }) => r.title)).toEqual(['tested']);
  });

  it('the test reflects the saved definition at once', async () => {
    const post = await define({ method: 'POST', schema: { title: { type: 'string' } } });
    expect((await runTest(post._id, { body: { title: 'a', price: 1 } })).body.data.status).toBe(400);
    expect((await t.api('PUT', `/api/endpoints/${post._id}`, { token: admin, body: { schema: { title: { type: 'string' }, price: { type: 'number' } } } })).status).toBe(200);
    expect((await runTest(post._id, { body: { title: 'a', price: 1 } })).body.data.status).toBe(201);
  });

  it('a system endpoint cannot be tested (400)', async () => {
    const login = await systemEndpoint('POST', '/api/auth/login');
    const res = await runTest(login._id, { body: { login: 'admin', password: 'x' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: 'System endpoints are platform routes: call them directly' });
  });

  it('an unknown endpoint is a 404', async () => {
    const res = await runTest('000000000000000000000000');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: 'Endpoint not found' });
  });

  it('runs as the caller: their access is checked and a handler sees them', async () => {
    const otherGroup = (await createUserWith(t, ['view'])).groupId as string;
    const members = await define({ method: 'GET', accessType: 'group', allowedGroupIds: [otherGroup] });
    const denied = await runTest(members._id);
    expect(denied.body.data).toMatchObject({ status: 403, body: { success: false } });

    const signedIn = await define({ method: 'GET', accessType: 'authenticated' });
    expect((await runTest(signedIn._id)).body.data.status).toBe(200);

    const code = 'async function handler(req, db) { return { status: 200, data: { user: req.user && req.user.login, headers: req.headers, query: req.query } }; }';
    const echo = await define({ method: 'GET', handler: { enabled: true, code } });
    const res = await runTest(echo._id, { headers: { 'X-Test': 'yes', Authorization: 'Bearer secret' }, query: { q: '1' } });
    expect(res.body.data).toMatchObject({ status: 200, body: { success: true, data: { user: 'admin', headers: { 'x-test': 'yes' }, query: { q: '1' } } } });
    expect(res.body.data.body.data.headers).not.toHaveProperty('authorization');
  });

  it('needs manage_api', async () => {
    const get = await define({ method: 'GET' });
    const viewer = await createUserWith(t, ['view']);
    const refused = await runTest(get._id, {}, viewer.token);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ success: false, error: 'Forbidden: requires manage_api' });
    expect((await t.api('POST', `/api/endpoints/${get._id}/test`, { body: {} })).status).toBe(401);

    const manager = await createUserWith(t, ['manage_api']);
    expect((await runTest(get._id, {}, manager.token)).body.data.status).toBe(200);
    const key = await t.api('POST', '/api/api-keys', { token: admin, body: { name: unique('key-'), permissions: ['manage_api'] } });
    const byKey = await t.api('POST', `/api/endpoints/${get._id}/test`, { apiKey: key.body.data.key, body: {} });
    expect(byKey.status).toBe(200);
    expect(byKey.body.data.status).toBe(200);
  });

  it('a body no JSON request could carry (a number, a string, true, null) is a 400 and nothing is counted', async () => {
    const post = await define({ method: 'POST', schema: { title: { type: 'string' } } });
    for (const body of [42, 'x', true, null]) {
      const res = await runTest(post._id, { body });
      expect(res.status, res.text).toBe(400);
      expect(res.body).toEqual({ success: false, error: 'Invalid request body: body must be a JSON object or array', details: [{ field: 'body', message: 'must be a JSON object or array' }] });
    }
    // An array is JSON a live call can send: the endpoint answers it (its own 400), as live.
    const array = await runTest(post._id, { body: [1] });
    expect(array.body.data).toMatchObject({ status: 400, body: { success: false, error: 'Invalid record: the body must be a JSON object' } });
    await vi.waitFor(async () => expect((await t.api('GET', `/api/endpoints/${post._id}`, { token: admin })).body.data.callCount).toBe(1), { timeout: 5000, interval: 100 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await t.api('GET', `/api/endpoints/${post._id}`, { token: admin })).body.data.callCount).toBe(1);
  });

  it('test calls are counted and audited like live calls', async () => {
    const get = await define({ method: 'GET' });
    for (let i = 0; i < 3; i++) expect((await runTest(get._id)).body.data.status).toBe(200);
    expect((await runTest(get._id, { query: { nope: '1' } })).body.data.status).toBe(400);
    await vi.waitFor(
      async () => {
        const doc = await t.api('GET', `/api/endpoints/${get._id}`, { token: admin });
        expect(doc.body.data.callCount).toBe(4);
      },
      { timeout: 5000, interval: 100 },
    );
    await vi.waitFor(
      async () => {
        const calls = await t.api('GET', `/api/dashboard/logs?action=api_call&search=${encodeURIComponent(get.path)}`, { token: admin });
        expect(calls.body.data).toHaveLength(3);
        expect(calls.body.data[0]).toMatchObject({ source: 'endpoint', method: 'GET', path: get.path, statusCode: 200, userId: adminId });
        const errors = await t.api('GET', `/api/dashboard/logs?action=error&search=${encodeURIComponent(get.path)}`, { token: admin });
        expect(errors.body.data).toHaveLength(1);
        expect(errors.body.data[0]).toMatchObject({ statusCode: 400, path: get.path });
      },
      { timeout: 5000, interval: 100 },
    );
  });
});
