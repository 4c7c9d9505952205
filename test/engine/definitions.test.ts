import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserWith, startTestServer, type RequestOptions, type TestServer } from '../helpers/test-server.ts';

/**
 * Endpoint definitions (`/api/endpoints`): the management API, what is checked when a definition
 * is saved, the system endpoints, and how a saved change shows in serving on the next request.
 */
let t: TestServer;
let admin: string;
let adminId: string;

let seq = 0;
const unique = (prefix = 't') => `${prefix}${Date.now().toString(36)}${(seq++).toString(36)}`;
/** A fresh collection path under /api that no other test uses. */
const freshPath = (leaf = 'items') => `/api/${unique()}/${leaf}`;
/** A minimal valid definition; every call gets its own path unless one is given. */
const definition = (fields: Record<string, unknown> = {}) => ({ name: 'Items', path: freshPath(), method: 'GET', accessType: 'public', schema: {}, ...fields });

async function define(fields: Record<string, unknown> = {}): Promise<any> {
  const res = await t.api('POST', '/api/endpoints', { token: admin, body: definition(fields) });
  if (res.status !== 201) throw new Error(`endpoint create failed: ${res.text}`);
  return res.body.data;
}

async function update(id: string, body: Record<string, unknown>): Promise<any> {
  const res = await t.api('PUT', `/api/endpoints/${id}`, { token: admin, body });
  if (res.status !== 200) throw new Error(`endpoint update failed: ${res.text}`);
  return res.body.data;
}

async function allDefinitions(): Promise<any[]> {
  const res = await t.api('GET', '/api/endpoints?limit=100', { token: admin });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

beforeAll(async () => {
  t = await startTestServer();
  const session = await t.login();
  admin = session.accessToken;
  adminId = session.user._id;
});
afterAll(async () => {
  await t.close();
});

describe('the definitions API', () => {
  it('creates a definition with its defaults and returns it without internal fields', async () => {
    const path = freshPath('products');
    const res = await t.api('POST', '/api/endpoints', {
      token: admin,
      body: { name: 'Create Product!', path, method: 'POST', accessType: 'public', schema: { title: { type: 'string', required: true } } },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      success: true,
      data: {
        _id: expect.stringMatching(/^[0-9a-f]{24}$/),
        name: 'Create Product!',
        description: '',
        slug: 'create-product',
        path,
        method: 'POST',
        accessType: 'public',
        allowedGroupIds: [],
        groupId: null,
        schema: [{ name: 'title', type: 'string', required: true, order: 0 }],
        networkAccess: { enabled: false, allowedDomains: [], allowedIpRanges: [] },
        inheritGroupNetworkAccess: true,
        enabled: true,
        apiVersion: null,
        isSystem: false,
        retentionDays: null,
        handler: { enabled: false, code: '' },
        callCount: 0,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
    const read = await t.api('GET', `/api/endpoints/${res.body.data._id}`, { token: admin });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
  });

  it('keeps a given slug and refuses one that is not lower-case words joined by dashes', async () => {
    expect((await define({ slug: 'my-items-2' })).slug).toBe('my-items-2');
    const res = await t.api('POST', '/api/endpoints', { token: admin, body: definition({ slug: 'Not A Slug' }) });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^Invalid request body: slug /);
  });

  it('lists definitions paged, 50 per page by default, with meta', async () => {
    const marker = unique('listing-');
    for (let i = 0; i < 3; i++) await define({ name: `${marker} ${i}` });
    const res = await t.api('GET', '/api/endpoints', { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ page: 1, limit: 50, total: expect.any(Number) });
    expect(res.body.meta.total).toBeGreaterThanOrEqual(3 + 6); // ours plus the system endpoints
    expect(res.body.data.length).toBe(Math.min(50, res.body.meta.total));

    const search = await t.api('GET', `/api/endpoints?search=${marker}&limit=2&page=2`, { token: admin });
    expect(search.status).toBe(200);
    expect(search.body.meta).toEqual({ page: 2, limit: 2, total: 3 });
    expect(search.body.data).toHaveLength(1);
    expect(search.body.data[0].name).toMatch(new RegExp(`^${marker} `));
  });

  it.each([
    { name: 'an unknown query parameter', url: '/api/endpoints?sort=name', status: 400 },
    { name: 'a limit of 0', url: '/api/endpoints?limit=0', status: 400 },
    { name: 'an unknown id', url: '/api/endpoints/000000000000000000000000', status: 404 },
    { name: 'a malformed id', url: '/api/endpoints/not-an-id', status: 404 },
  ])('GET with $name → $status', async ({ url, status }) => {
    const res = await t.api('GET', url, { token: admin });
    expect(res.status, res.text).toBe(status);
    expect(res.body).toMatchObject({ success: false, error: expect.any(String) });
  });

  it('PUT changes only the fields it is given', async () => {
    const created = await define({ name: 'Before', description: 'old', schema: { a: { type: 'string' } } });
    const updated = await update(created._id, { description: 'new' });
    expect(updated).toEqual({ ...created, description: 'new', updatedAt: expect.any(String) });
    const renamed = await update(created._id, { name: 'After' });
    expect(renamed).toMatchObject({ name: 'After', slug: created.slug, description: 'new', schema: [{ name: 'a', type: 'string', required: false, order: 0 }] });
    const unchanged = await update(created._id, {});
    expect(unchanged).toMatchObject({ name: 'After', description: 'new' });
  });

  it('PUT and DELETE of an unknown id → 404', async () => {
    const id = '000000000000000000000000';
    expect((await t.api('PUT', `/api/endpoints/${id}`, { token: admin, body: { description: 'x' } })).status).toBe(404);
    expect((await t.api('DELETE', `/api/endpoints/${id}`, { token: admin })).status).toBe(404);
  });

  it('DELETE returns the definition and it is gone', async () => {
    const created = await define();
    const res = await t.api('DELETE', `/api/endpoints/${created._id}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ _id: created._id, path: created.path });
    expect((await t.api('GET', `/api/endpoints/${created._id}`, { token: admin })).status).toBe(404);
    expect((await t.api('DELETE', `/api/endpoints/${created._id}`, { token: admin })).status).toBe(404);
  });

  it.each(['name', 'path', 'method', 'accessType', 'schema'])('creating without %s is a 400 naming it', async (field) => {
    const body: Record<string, unknown> = definition();
    delete body[field];
    const res = await t.api('POST', '/api/endpoints', { token: admin, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(`Invalid request body: ${field} is required`);
    expect(res.body.details).toEqual([{ field, message: 'is required' }]);
  });

  // Fields a definition is shown with (_id, isSystem, callCount, createdAt, updatedAt) may be sent
  // back: see "a definition as the API shows it, sent back".
  it.each([
    { field: 'revision', value: 9 },
    { field: 'colour', value: 'red' },
  ])('the unknown field $field is a 400 on create and update', async ({ field, value }) => {
    const created = await t.api('POST', '/api/endpoints', { token: admin, body: { ...definition(), [field]: value } });
    expect(created.status).toBe(400);
    expect(created.body.error).toBe(`Invalid request body: ${field} is not an allowed field`);
    const existing = await define();
    const updated = await t.api('PUT', `/api/endpoints/${existing._id}`, { token: admin, body: { [field]: value } });
    expect(updated.status).toBe(400);
    expect(updated.body.error).toBe(`Invalid request body: ${field} is not an allowed field`);
    expect((await t.api('GET', `/api/endpoints/${existing._id}`, { token: admin })).body.data).toEqual(existing);
  });

  it.each([
    { name: 'an unknown method', fields: { method: 'HEAD' }, field: 'method' },
    { name: 'an unknown access type', fields: { accessType: 'private' }, field: 'accessType' },
    { name: 'a blank name', fields: { name: '   ' }, field: 'name' },
    { name: 'a schema that is neither an array nor an object', fields: { schema: 'title' }, field: 'schema' },
    { name: 'an apiVersion without v', fields: { apiVersion: '1' }, field: 'apiVersion' },
    { name: 'retentionDays 0', fields: { retentionDays: 0 }, field: 'retentionDays' },
    { name: 'a string for enabled', fields: { enabled: 'yes' }, field: 'enabled' },
  ])('$name is a 400 naming $field', async ({ fields, field }) => {
    const res = await t.api('POST', '/api/endpoints', { token: admin, body: definition(fields) });
    expect(res.status).toBe(400);
    expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it("a value that may also be null is refused for the value's own problem, without the null branch's lines", async () => {
    const res = await t.api('POST', '/api/endpoints', { token: admin, body: definition({ apiVersion: '1' }) });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Invalid request body: apiVersion must match pattern "^v[0-9]{1,4}$"');
    expect(res.body.details).toEqual([{ field: 'apiVersion', message: 'must match pattern "^v[0-9]{1,4}$"' }]);
  });
});

describe('who may read and write definitions', () => {
  type Who = 'nobody' | 'viewer' | 'api manager' | 'user without group' | 'key with manage_api' | 'key with view';
  const credentials = {} as Record<Who, RequestOptions>;
  let existing: string;

  beforeAll(async () => {
    existing = (await define())._id;
    const key = async (permissions: string[]) => {
      const res = await t.api('POST', '/api/api-keys', { token: admin, body: { name: unique('key-'), permissions } });
      if (res.status !== 201) throw new Error(res.text);
      return res.body.data.key as string;
    };
    Object.assign(credentials, {
      nobody: {},
      viewer: { token: (await createUserWith(t, ['view'])).token },
      'api manager': { token: (await createUserWith(t, ['manage_api'])).token },
      'user without group': { token: (await createUserWith(t, [])).token },
      'key with manage_api': { apiKey: await key(['manage_api']) },
      'key with view': { apiKey: await key(['view']) },
    } satisfies Record<Who, RequestOptions>);
  });

  /** `:new` is a definition created by the admin just for that row. */
  function routes(who: Who, read: number, write: number, created = write) {
    return [
      { who, method: 'GET', url: '/api/endpoints', status: read },
      { who, method: 'GET', url: '/api/endpoints/:existing', status: read },
      { who, method: 'GET', url: '/api/endpoints/:existing/examples', status: read },
      { who, method: 'GET', url: '/api/endpoints/:existing/docs', status: read },
      { who, method: 'POST', url: '/api/endpoints', body: true, status: created },
      { who, method: 'PUT', url: '/api/endpoints/:new', body: true, status: write },
      { who, method: 'DELETE', url: '/api/endpoints/:new', status: write },
    ];
  }

  it.each([
    ...routes('nobody', 401, 401),
    ...routes('user without group', 403, 403),
    ...routes('viewer', 200, 403),
    ...routes('key with view', 200, 403),
    ...routes('api manager', 200, 200, 201),
    ...routes('key with manage_api', 200, 200, 201),
  ])('$who: $method $url → $status', async ({ who, method, url, body, status }) => {
    let path = url.replace(':existing', existing);
    if (path.includes(':new')) path = path.replace(':new', (await define())._id);
    const payload = method === 'POST' ? definition() : { description: 'changed' };
    const res = await t.api(method, path, { ...credentials[who], ...(body ? { body: payload } : {}) });
    expect(res.status, res.text).toBe(status);
    if (status >= 400) expect(res.body).toEqual({ success: false, error: expect.any(String) });
    else expect(res.body.success).toBe(true);
  });

  it('a 403 names the permissions needed', async () => {
    const read = await t.api('GET', '/api/endpoints', credentials['user without group']);
    expect(read.body.error).toBe('Forbidden: requires view or manage_api');
    const write = await t.api('POST', '/api/endpoints', { ...credentials.viewer, body: definition() });
    expect(write.body.error).toBe('Forbidden: requires manage_api');
  });

  it('a refused write changes nothing', async () => {
    const before = (await t.api('GET', `/api/endpoints/${existing}`, { token: admin })).body.data;
    const total = (await t.api('GET', '/api/endpoints', { token: admin })).body.meta.total;
    for (const who of ['nobody', 'viewer', 'key with view'] as const) {
      await t.api('POST', '/api/endpoints', { ...credentials[who], body: definition() });
      await t.api('PUT', `/api/endpoints/${existing}`, { ...credentials[who], body: { name: 'Hijacked' } });
      await t.api('DELETE', `/api/endpoints/${existing}`, credentials[who]);
    }
    expect((await t.api('GET', `/api/endpoints/${existing}`, { token: admin })).body.data).toEqual(before);
    expect((await t.api('GET', '/api/endpoints', { token: admin })).body.meta.total).toBe(total);
  });
});

describe('paths', () => {
  it.each([
    { raw: 'norm-a/items/', path: '/norm-a/items' },
    { raw: '//norm-b//c', path: '/norm-b/c' },
    { raw: '  /api/norm-c/items  ', path: '/api/norm-c/items' },
    { raw: '/api/shops/:shopId/items', path: '/api/shops/:shopId/items' },
    { raw: '/', path: '/' },
  ])('"$raw" is saved as $path', async ({ raw, path }) => {
    // DELETE on "/" serves only DELETE /:id, so the root definition does not catch other tests' calls.
    const created = await define({ path: raw, method: 'DELETE' });
    expect(created.path).toBe(path);
    expect((await t.api('DELETE', `/api/endpoints/${created._id}`, { token: admin })).status).toBe(200);
  });

  it.each([
    { name: 'a space', path: '/api/sh op/items' },
    { name: 'a query string', path: '/api/shop?x=1' },
    { name: 'a percent escape', path: '/api/a%20b' },
    { name: 'a non-ASCII letter', path: '/api/café' },
    { name: 'a dot-dot segment', path: '/api/../users' },
    { name: 'a parameter starting with a digit', path: '/api/shop/:1st' },
    { name: 'a parameter used twice', path: '/api/:shop/x/:shop' },
    { name: 'a bare colon', path: '/api/shop/:' },
  ])('a path with $name is a 400', async ({ path }) => {
    const res = await t.api('POST', '/api/endpoints', { token: admin, body: definition({ path }) });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatch(/^Invalid path: /);
    expect(res.body.details).toEqual([{ field: 'path', message: expect.any(String) }]);
  });

  it('(path, method) is unique, also when the second path only normalizes to the first', async () => {
    const path = freshPath();
    await define({ path, method: 'GET' });
    for (const spelling of [path, `${path}/`, path.slice(1), path.replace('/api/', '/api//')]) {
      const res = await t.api('POST', '/api/endpoints', { token: admin, body: definition({ path: spelling, method: 'GET' }) });
      expect(res.status, spelling).toBe(409);
      expect(res.body).toEqual({ success: false, error: `An endpoint for GET ${path} already exists` });
    }
    expect((await define({ path: `${path}/`, method: 'POST' })).path).toBe(path);
  });

  it('moving a definition onto another one\'s (path, method) is a 409 and changes nothing', async () => {
    const taken = await define({ method: 'GET' });
    const other = await define({ method: 'GET' });
    const res = await t.api('PUT', `/api/endpoints/${other._id}`, { token: admin, body: { path: taken.path } });
    expect(res.status).toBe(409);
    expect((await t.api('GET', `/api/endpoints/${other._id}`, { token: admin })).body.data.path).toBe(other.path);
  });

  it.each([
    { path: '/api/auth/x', clash: '/api/auth' },
    { path: '/api/users', clash: '/api/users' },
    { path: '/api/v1/users', clash: '/api/v1/users' },
    { path: '/api/v2/endpoints/foo', clash: '/api/v2/endpoints' },
    { path: '/api/endpoints/foo', clash: '/api/endpoints' },
    { path: '/api/health', clash: '/api/health' },
    { path: '/api/settings/logs', clash: '/api/settings' },
    { path: 'api/groups/', clash: '/api/groups' },
    { path: '/api/:anything', clash: 'the management routes under /api' },
    { path: '/api/v1/:anything/x', clash: 'the management routes under /api/v1' },
    { path: '/admin/x', clash: '/admin' },
    { path: '/admin', clash: '/admin' },
    { path: '/:x', clash: '/admin and /api' },
  ])('$path would shadow $clash: 400 naming the clash', async ({ path, clash }) => {
    const res = await t.api('POST', '/api/endpoints', { token: admin, body: definition({ path }) });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatch(new RegExp(`^Invalid path: \\S+ would shadow ${clash.replace(/[/]/g, '\\/')}, which the service serves itself$`));
    expect(res.body.details).toEqual([{ field: 'path', message: `would shadow ${clash}, which the service serves itself` }]);
  });

  it('a path next to the management routes is fine', async () => {
    for (const path of ['/api/shop/items', '/api/v1/shop/items', '/api/user-profiles', '/api/v1x/users', '/administration/x']) {
      expect((await define({ path })).path).toBe(path);
    }
  });

  it('changing a path to a reserved one is refused the same way', async () => {
    const created = await define();
    const res = await t.api('PUT', `/api/endpoints/${created._id}`, { token: admin, body: { path: '/api/profile' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/would shadow \/api\/profile/);
  });
});

describe('system endpoints', () => {
  const find = (list: any[], method: string, path: string) => list.find((e) => e.method === method && e.path === path);

  it('are listed after start with isSystem', async () => {
    const list = await allDefinitions();
    for (const [method, path] of [
      ['POST', '/api/auth/login'],
      ['POST', '/api/auth/refresh'],
      ['POST', '/api/auth/logout'],
      ['POST', '/api/auth/register'],
      ['GET', '/api/health'],
      ['GET', '/api/csrf-token'],
    ] as const) {
      expect(find(list, method, path), `${method} ${path}`).toMatchObject({ isSystem: true, accessType: 'public', enabled: true });
    }
    expect(list.filter((e) => e.isSystem)).toHaveLength(6);
  });

  it('cannot be deleted (403)', async () => {
    const login = find(await allDefinitions(), 'POST', '/api/auth/login');
    const res = await t.api('DELETE', `/api/endpoints/${login._id}`, { token: admin });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ success: false, error: 'A system endpoint cannot be deleted' });
    expect((await t.api('GET', `/api/endpoints/${login._id}`, { token: admin })).status).toBe(200);
  });

  it.each([
    { name: 'path', body: { path: '/api/auth/sign-in' } },
    { name: 'method', body: { method: 'PUT' } },
    { name: 'path and method', body: { path: '/api/health2', method: 'POST' } },
  ])('cannot change their $name (400)', async ({ body }) => {
    const health = find(await allDefinitions(), 'GET', '/api/health');
    const res = await t.api('PUT', `/api/endpoints/${health._id}`, { token: admin, body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: 'A system endpoint cannot change its path or method' });
    expect((await t.api('GET', `/api/endpoints/${health._id}`, { token: admin })).body.data).toMatchObject({ path: '/api/health', method: 'GET' });
  });

  it('each takes back the object a GET returned, with a descriptive change', async () => {
    for (const system of (await allDefinitions()).filter((e) => e.isSystem)) {
      const read = (await t.api('GET', `/api/endpoints/${system._id}`, { token: admin })).body.data;
      const back = await t.api('PUT', `/api/endpoints/${system._id}`, { token: admin, body: { ...read, description: `${read.description} (sent back)` } });
      expect(back.status, `${system.method} ${system.path}: ${back.text}`).toBe(200);
      expect(back.body.data).toEqual({ ...read, description: `${read.description} (sent back)`, updatedAt: expect.any(String), callCount: expect.any(Number) });
    }
  });

  it('take back the object a GET returned, with a descriptive change; a change to what the platform serves stays a 400', async () => {
    const health = find(await allDefinitions(), 'GET', '/api/health');
    const read = (await t.api('GET', `/api/endpoints/${health._id}`, { token: admin })).body.data;
    const back = await t.api('PUT', `/api/endpoints/${health._id}`, { token: admin, body: { ...read, description: 'Liveness' } });
    expect(back.status, back.text).toBe(200);
    expect(back.body.data).toMatchObject({ description: 'Liveness', isSystem: true, enabled: true, path: '/api/health' });
    const disabled = await t.api('PUT', `/api/endpoints/${health._id}`, { token: admin, body: { ...read, enabled: false } });
    expect(disabled.status).toBe(400);
    expect(disabled.body.error).toBe('A system endpoint is served by the platform: enabled cannot be changed (only name, description, slug and groupId)');
    expect((await t.api('GET', '/api/health')).status).toBe(200);
  });

  it('can change their description, and still behave as platform routes', async () => {
    const list = await allDefinitions();
    const login = find(list, 'POST', '/api/auth/login');
    const updated = await update(login._id, { description: 'Sign in here', path: 'api/auth/login/', method: 'POST' });
    expect(updated).toMatchObject({ description: 'Sign in here', path: '/api/auth/login', method: 'POST', isSystem: true });
    expect((await t.login()).accessToken).toMatch(/^ey/);
    const health = await t.api('GET', '/api/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ success: true, status: 'ok' });
  });
});

describe('a definition as the API shows it, sent back', () => {
  it('a PUT of the object a GET returned changes only what the client changed', async () => {
    const created = await define({ description: 'before', schema: [{ name: 'title', type: 'string', required: true }] });
    await t.api('GET', `${created.path}`);
    const read = (await t.api('GET', `/api/endpoints/${created._id}`, { token: admin })).body.data;
    expect(read).toMatchObject({ _id: created._id, isSystem: false, callCount: expect.any(Number), createdAt: expect.any(String), updatedAt: expect.any(String) });
    const back = await t.api('PUT', `/api/endpoints/${created._id}`, { token: admin, body: { ...read, description: 'after', callCount: 0, createdAt: '2000-01-01T00:00:00.000Z' } });
    expect(back.status, back.text).toBe(200);
    expect(back.body.data).toMatchObject({ description: 'after', schema: read.schema, createdAt: read.createdAt, isSystem: false });
  });

  it('_id and isSystem cannot be changed by a PUT (400, nothing changed)', async () => {
    const created = await define({ description: 'kept' });
    for (const [field, value] of [['_id', 'ffffffffffffffffffffffff'], ['isSystem', true]] as const) {
      const res = await t.api('PUT', `/api/endpoints/${created._id}`, { token: admin, body: { [field]: value, description: 'changed' } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, error: `Invalid request body: ${field} cannot be changed`, details: [{ field, message: 'cannot be changed' }] });
    }
    expect((await t.api('GET', `/api/endpoints/${created._id}`, { token: admin })).body.data.description).toBe('kept');
  });

  it('a POST of a shown definition without its _id creates a copy; an _id or isSystem true is a 400', async () => {
    const original = await define({ description: 'to copy' });
    const { _id, ...shown } = (await t.api('GET', `/api/endpoints/${original._id}`, { token: admin })).body.data;
    const copy = await t.api('POST', '/api/endpoints', { token: admin, body: { ...shown, path: freshPath() } });
    expect(copy.status, copy.text).toBe(201);
    expect(copy.body.data).toMatchObject({ description: 'to copy', isSystem: false, callCount: 0 });
    expect(copy.body.data._id).not.toBe(_id);
    const withId = await t.api('POST', '/api/endpoints', { token: admin, body: { ...shown, _id, path: freshPath() } });
    expect(withId.status).toBe(400);
    expect(withId.body.error).toBe('Invalid request body: _id is assigned by the service');
    const system = await t.api('POST', '/api/endpoints', { token: admin, body: { ...shown, isSystem: true, path: freshPath() } });
    expect(system.status).toBe(400);
    expect(system.body.details).toEqual([{ field: 'isSystem', message: 'can only be false' }]);
  });
});

describe('what is checked when a definition is saved', () => {
  it.each(['_id', 'id', 'createdAt', 'updatedAt', 'expiresAt', '$x', 'a.b'])('the field name "%s" is a 400 naming it', async (name) => {
    const res = await t.api('POST', '/api/endpoints', { token: admin, body: definition({ schema: { [name]: { type: 'string' } } }) });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(new RegExp(`^Invalid schema: schema\\.${name.replace(/[.$]/g, '\\$&')} `));
    expect(res.body.details).toEqual([{ field: `schema.${name}`, message: expect.any(String) }]);
  });

  it.each(['__proto__', 'constructor', 'prototype'])('the field name "%s" is a 400, at the top level and nested', async (name) => {
    for (const schema of [{ [name]: { type: 'string' } }, { outer: { type: 'object', children: { [name]: { type: 'string' } } } }]) {
      const res = await t.api('POST', '/api/endpoints', { token: admin, body: definition({ schema }) });
      expect(res.status, JSON.stringify(schema)).toBe(400);
      expect(res.body).toMatchObject({ success: false, error: expect.stringMatching(/forbidden key|reserved name/) });
    }
  });

  it('record keys are reserved only at the top level; $ and dots everywhere', async () => {
    const nested = (name: string) => definition({ schema: { outer: { type: 'object', children: { [name]: { type: 'string' } } } } });
    expect((await t.api('POST', '/api/endpoints', { token: admin, body: nested('id') })).status).toBe(201);
    expect((await t.api('POST', '/api/endpoints', { token: admin, body: nested('createdAt') })).status).toBe(201);
    const dollar = await t.api('POST', '/api/endpoints', { token: admin, body: nested('$x') });
    expect(dollar.status).toBe(400);
    expect(dollar.body.details).toEqual([{ field: 'schema.outer.children.$x', message: 'must not start with $' }]);
  });

  it.each([
    { name: 'an unknown type', schema: { price: { type: 'money' } }, field: 'schema.price.type' },
    { name: 'a missing type', schema: { price: { required: true } }, field: 'schema.price.type' },
    { name: 'an option of another type', schema: { price: { type: 'string', minimum: 0 } }, field: 'schema.price.minimum' },
    { name: 'a definition that is not an object', schema: { price: 'number' }, field: 'schema.price' },
    { name: 'a reference without ref', schema: { category: { type: 'reference' } }, field: 'schema.category.ref' },
    { name: 'a reference with a :param ref', schema: { category: { type: 'reference', ref: '/api/shops/:shopId/categories' } }, field: 'schema.category.ref' },
    { name: 'a reference with an unnormalized ref', schema: { category: { type: 'reference', ref: '/api/shop/categories/' } }, field: 'schema.category.ref' },
    { name: 'a reference whose ref is not a path', schema: { category: { type: 'reference', ref: 'categories' } }, field: 'schema.category.ref' },
    { name: 'a defaultValue of the wrong type', schema: { price: { type: 'number', defaultValue: 'ten' } }, field: 'schema.price.defaultValue' },
    { name: 'a defaultValue outside the bounds', schema: { price: { type: 'number', minimum: 0, defaultValue: -1 } }, field: 'schema.price.defaultValue' },
    { name: 'a defaultValue not in the enum', schema: { size: { type: 'string', enum: ['S', 'M'], defaultValue: 'XL' } }, field: 'schema.size.defaultValue' },
  ])('$name is a 400 naming $field', async ({ schema, field }) => {
    const res = await t.api('POST', '/api/endpoints', { token: admin, body: definition({ schema }) });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatch(new RegExp(`^Invalid schema: ${field.replace(/\./g, '\\.')} `));
    expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('every schema problem is listed in details, and the error names the first', async () => {
    const res = await t.api('POST', '/api/endpoints', {
      token: admin,
      body: definition({ schema: { a: { type: 'money' }, id: { type: 'string' }, c: { type: 'number', defaultValue: 'x' } } }),
    });
    expect(res.status).toBe(400);
    expect(res.body.details.map((d: { field: string }) => d.field)).toEqual(['schema.a.type', 'schema.id', 'schema.c.defaultValue']);
    expect(res.body.error).toMatch(/^Invalid schema: schema\.a\.type /);
  });

  it.each([
    { name: 'a CIDR prefix over 32', networkAccess: { enabled: true, allowedIpRanges: ['10.0.0.0/33'] }, field: 'networkAccess.allowedIpRanges', rule: '10.0.0.0/33' },
    { name: 'an IP that is not one', networkAccess: { enabled: true, allowedIpRanges: ['10.0.0.256'] }, field: 'networkAccess.allowedIpRanges', rule: '10.0.0.256' },
    { name: 'a domain with spaces', networkAccess: { enabled: true, allowedDomains: ['not a domain'] }, field: 'networkAccess.allowedDomains', rule: 'not a domain' },
    { name: 'a disabled rule set with a bad rule', networkAccess: { enabled: false, allowedDomains: ['http://x.com'] }, field: 'networkAccess.allowedDomains', rule: 'http://x.com' },
  ])('$name is a 400 naming the rule', async ({ networkAccess, field, rule }) => {
    const res = await t.api('POST', '/api/endpoints', { token: admin, body: definition({ networkAccess }) });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatch(new RegExp(`^Invalid ${field.replace('.', '\\.')}: `));
    expect(res.body.error).toContain(`"${rule}"`);
    expect(res.body.details).toEqual([{ field, message: expect.stringContaining(rule) }]);
  });

  it('valid network rules are saved as given', async () => {
    const networkAccess = { enabled: true, allowedDomains: ['example.com', '*.example.org', 'localhost'], allowedIpRanges: ['10.0.0.0/8', '::1', '192.168.1.7'] };
    expect((await define({ networkAccess })).networkAccess).toEqual(networkAccess);
  });

  it('accessType group needs existing user groups in allowedGroupIds', async () => {
    const group = (await createUserWith(t, ['view'])).groupId as string;
    const cases = [
      { allowedGroupIds: undefined, error: 'Invalid endpoint: accessType "group" needs at least one id in allowedGroupIds' },
      { allowedGroupIds: [], error: 'Invalid endpoint: accessType "group" needs at least one id in allowedGroupIds' },
      { allowedGroupIds: ['000000000000000000000000'], error: 'Invalid endpoint: unknown group id 000000000000000000000000' },
      { allowedGroupIds: [group, 'nope'], error: 'Invalid endpoint: unknown group id nope' },
    ];
    for (const { allowedGroupIds, error } of cases) {
      const res = await t.api('POST', '/api/endpoints', { token: admin, body: definition({ accessType: 'group', ...(allowedGroupIds ? { allowedGroupIds } : {}) }) });
      expect(res.status, JSON.stringify(allowedGroupIds)).toBe(400);
      expect(res.body.error).toBe(error);
      expect(res.body.details).toEqual([{ field: 'allowedGroupIds', message: expect.any(String) }]);
    }
    expect((await define({ accessType: 'group', allowedGroupIds: [group] })).allowedGroupIds).toEqual([group]);
  });

  it('changing accessType to group without allowedGroupIds is refused on update too', async () => {
    const created = await define();
    const res = await t.api('PUT', `/api/endpoints/${created._id}`, { token: admin, body: { accessType: 'group' } });
    expect(res.status).toBe(400);
    expect((await t.api('GET', `/api/endpoints/${created._id}`, { token: admin })).body.data.accessType).toBe('public');
  });

  it.each(['000000000000000000000000', 'not-an-id'])('an unknown endpoint group id %s is a 400', async (groupId) => {
    const res = await t.api('POST', '/api/endpoints', { token: admin, body: definition({ groupId }) });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: `Invalid endpoint: unknown endpoint group ${groupId}`, details: [{ field: 'groupId', message: 'is not an endpoint group' }] });
  });

  it('a handler with a syntax error is a 400; one that compiles is saved', async () => {
    const broken = await t.api('POST', '/api/endpoints', {
      token: admin,
      body: definition({ handler: { enabled: true, code: 'async function handler(req, db) { return {' } }),
    });
    expect(broken.status).toBe(400);
    expect(broken.body.error).toMatch(/^Invalid handler: /);
    expect(broken.body.details).toEqual([{ field: 'handler.code', message: expect.any(String) }]);

    const noHandler = await t.api('POST', '/api/endpoints', { token: admin, body: definition({ handler: { enabled: true, code: 'const x = 1;' } }) });
    expect(noHandler.status).toBe(400);
    expect(noHandler.body.error).toBe('Invalid handler: Handler code must define async function handler(req, db)');

    const code = 'async function handler(req, db) { return { status: 200, data: { hello: req.query.name ?? null } }; }';
    const saved = await define({ handler: { enabled: true, code } });
    expect(saved.handler).toEqual({ enabled: true, code });
    const res = await t.api('GET', `${saved.path}?name=dyn`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { hello: 'dyn' } });
  });

  it('a refused update leaves the definition as it was', async () => {
    const created = await define({ schema: { a: { type: 'string' } } });
    for (const body of [{ schema: { id: { type: 'string' } } }, { networkAccess: { allowedIpRanges: ['x'] } }, { path: '/api/a b' }, { groupId: '000000000000000000000000' }]) {
      expect((await t.api('PUT', `/api/endpoints/${created._id}`, { token: admin, body })).status, JSON.stringify(body)).toBe(400);
    }
    expect((await t.api('GET', `/api/endpoints/${created._id}`, { token: admin })).body.data).toEqual(created);
  });
});

describe('a saved change is served on the next request', () => {
  it('a new definition is served at once', async () => {
    const path = freshPath();
    expect((await t.api('POST', path, { body: { title: 'x' } })).status).toBe(404);
    await define({ path, method: 'POST', schema: { title: { type: 'string', required: true } } });
    await define({ path, method: 'GET' });
    const created = await t.api('POST', path, { body: { title: 'Dune' } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data).toMatchObject({ _id: expect.any(String), title: 'Dune' });
    const list = await t.api('GET', path);
    expect(list.status).toBe(200);
    expect(list.body.data.map((r: { title: string }) => r.title)).toEqual(['Dune']);
  });

  it('a schema change applies to the next write', async () => {
    const path = freshPath();
    const post = await define({ path, method: 'POST', schema: { title: { type: 'string' } } });
    const before = await t.api('POST', path, { body: { title: 'A', price: 3 } });
    expect(before.status).toBe(400);
    expect(before.body.error).toBe('Invalid record: price is not a field of this endpoint');
    await update(post._id, { schema: { title: { type: 'string' }, price: { type: 'number', minimum: 0 } } });
    const after = await t.api('POST', path, { body: { title: 'A', price: 3 } });
    expect(after.status, after.text).toBe(201);
    expect(after.body.data).toMatchObject({ title: 'A', price: 3 });
    expect((await t.api('POST', path, { body: { price: -1 } })).status).toBe(400);
  });

  it('an access type change applies to the next request', async () => {
    const get = await define({ method: 'GET' });
    expect((await t.api('GET', get.path)).status).toBe(200);
    await update(get._id, { accessType: 'authenticated' });
    expect((await t.api('GET', get.path)).status).toBe(401);
    expect((await t.api('GET', get.path, { token: admin })).status).toBe(200);
  });

  it('a deleted definition stops being served', async () => {
    const get = await define({ method: 'GET' });
    expect((await t.api('GET', get.path)).status).toBe(200);
    expect((await t.api('DELETE', `/api/endpoints/${get._id}`, { token: admin })).status).toBe(200);
    const res = await t.api('GET', get.path);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: `No route for GET ${get.path}` });
  });

  it('a disabled definition is not served (405: the path is still served by POST) and serves its records again once re-enabled', async () => {
    const path = freshPath();
    await define({ path, method: 'POST', schema: { n: { type: 'number' } } });
    const get = await define({ path, method: 'GET' });
    expect((await t.api('POST', path, { body: { n: 1 } })).status).toBe(201);
    await update(get._id, { enabled: false });
    const off = await t.api('GET', path);
    expect(off.status).toBe(405);
    expect(off.headers.get('allow')).toBe('POST, OPTIONS');
    expect((await t.api('POST', path, { body: { n: 2 } })).status).toBe(201);
    await update(get._id, { enabled: true });
    const list = await t.api('GET', path);
    expect(list.status).toBe(200);
    expect(list.body.data.map((r: { n: number }) => r.n)).toEqual([1, 2]);
  });

  it('a path change serves the new path and no longer the old one', async () => {
    const get = await define({ method: 'GET' });
    const next = freshPath();
    await update(get._id, { path: next });
    expect((await t.api('GET', get.path)).status).toBe(404);
    expect((await t.api('GET', next)).status).toBe(200);
  });
});

describe('changing a path moves the endpoint\'s own records', () => {
  const titles = (res: { body: { data: Array<{ title: string }> } }) => res.body.data.map((r) => r.title).sort();

  it('records created through the moved POST definition follow it; other records stay', async () => {
    const base = unique('move');
    const from = `/api/${base}-a/items`;
    const to = `/api/${base}-b/items`;
    const schema = { title: { type: 'string' } };

    // Records written through an earlier POST definition of the same path, since deleted.
    const earlier = await define({ path: from, method: 'POST', schema });
    expect((await t.api('POST', from, { body: { title: 'other' } })).status).toBe(201);
    expect((await t.api('DELETE', `/api/endpoints/${earlier._id}`, { token: admin })).status).toBe(200);

    const post = await define({ path: from, method: 'POST', schema });
    await define({ path: from, method: 'GET' });
    const mine = [];
    for (const title of ['one', 'two']) mine.push((await t.api('POST', from, { body: { title } })).body.data);
    expect(titles(await t.api('GET', from))).toEqual(['one', 'other', 'two']);

    expect((await update(post._id, { path: to })).path).toBe(to);
    await define({ path: to, method: 'GET' });

    const moved = await t.api('GET', to);
    expect(moved.status).toBe(200);
    expect(titles(moved)).toEqual(['one', 'two']);
    expect(moved.body.meta.total).toBe(2);
    const stayed = await t.api('GET', from);
    expect(titles(stayed)).toEqual(['other']);
    expect(stayed.body.meta.total).toBe(1);

    // A moved record keeps its id and is read under the new path only.
    const one = await t.api('GET', `${to}/${mine[0]._id}`);
    expect(one.status).toBe(200);
    expect(one.body.data).toEqual(mine[0]);
    expect((await t.api('GET', `${from}/${mine[0]._id}`)).status).toBe(404);

    // New writes go to the new path.
    expect((await t.api('POST', to, { body: { title: 'three' } })).status).toBe(201);
    expect((await t.api('POST', from, { body: { title: 'x' } })).status).toBe(405); // the old path is still read by GET
    expect(titles(await t.api('GET', to))).toEqual(['one', 'three', 'two']);
  });

  it('parameter values are carried over by name', async () => {
    const base = unique('mv');
    const from = `/api/${base}-shops/:shopId/items`;
    const to = `/api/${base}-stores/:shopId/items`;
    const post = await define({ path: from, method: 'POST', schema: { title: { type: 'string' } } });
    await define({ path: from, method: 'GET' });
    const at = (pattern: string, shop: string) => pattern.replace(':shopId', shop);
    for (const [shop, title] of [['s1', 'a'], ['s1', 'b'], ['s2', 'c']] as const) {
      expect((await t.api('POST', at(from, shop), { body: { title } })).status).toBe(201);
    }

    await update(post._id, { path: to });
    await define({ path: to, method: 'GET' });

    const s1 = await t.api('GET', at(to, 's1'));
    expect(s1.status).toBe(200);
    expect(titles(s1)).toEqual(['a', 'b']);
    expect(s1.body.meta.total).toBe(2);
    expect(titles(await t.api('GET', at(to, 's2')))).toEqual(['c']);
    const old = await t.api('GET', at(from, 's1'));
    expect(old.status).toBe(200);
    expect(old.body.data).toEqual([]);
    expect(old.body.meta.total).toBe(0);
  });
});

describe('audit', () => {
  it('records endpoint_created, endpoint_updated and endpoint_deleted with who, where and status', async () => {
    const created = await define({ method: 'POST' });
    await update(created._id, { description: 'audited' });
    expect((await t.api('DELETE', `/api/endpoints/${created._id}`, { token: admin })).status).toBe(200);
    for (const [action, verb, method, status] of [
      ['endpoint_created', 'created', 'POST', 201],
      ['endpoint_updated', 'updated', 'PUT', 200],
      ['endpoint_deleted', 'deleted', 'DELETE', 200],
    ] as const) {
      const res = await t.api('GET', `/api/dashboard/logs?action=${action}&limit=100`, { token: admin });
      expect(res.status).toBe(200);
      const entry = res.body.data.find((e: { message: string }) => e.message === `Endpoint POST ${created.path} ${verb}`);
      expect(entry, action).toMatchObject({ action, source: 'endpoints', userId: adminId, ip: '127.0.0.1', method, statusCode: status });
      expect(entry.path).toBe(method === 'POST' ? '/api/endpoints' : `/api/endpoints/${created._id}`);
    }
  });

  it('a refused write is not recorded as a change', async () => {
    const path = freshPath();
    await t.api('POST', '/api/endpoints', { token: admin, body: definition({ path, schema: { id: { type: 'string' } } }) });
    const res = await t.api('GET', `/api/dashboard/logs?action=endpoint_created&search=${encodeURIComponent(path)}`, { token: admin });
    expect(res.body.data).toEqual([]);
  });
});
