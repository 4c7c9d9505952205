import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyOfSampleProject, removeSyncDirs, waitFor } from '../project/sync-helpers.ts';
import { ADMIN_PASSWORD, createUserWith, startTestServer, type ApiResponse, type TestServer } from '../helpers/test-server.ts';

/**
 * The raw collection browser, /api/database/collections[/:name[/:id]]: exactly seven
 * collections, secrets read as [REDACTED], writes made through each collection's own service
 * (so its invariants hold and changes are served at once) and every write audited.
 */
let t: TestServer;
let admin: string;

const COLLECTIONS = ['users', 'groups', 'endpoints', 'endpointgroups', 'endpointdatas', 'logs', 'systemsettings'];
const base = '/api/database/collections';

const call = (method: string, path: string, body?: unknown, token = admin) => t.api(method, path, { token, ...(body !== undefined ? { body } : {}) });

function expectError(res: ApiResponse, status: number, error?: RegExp): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body.success).toBe(false);
  if (error) expect(res.body.error).toMatch(error);
}

async function rawGet(name: string, id: string) {
  const res = await call('GET', `${base}/${name}/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** A document as GET returns it, without `_id`: what an editor sends back with PUT. */
function editable(doc: Record<string, unknown>): Record<string, unknown> {
  const { _id, ...rest } = doc;
  return rest;
}

async function defineEndpoint(path: string, method: string, schema: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await call('POST', '/api/endpoints', { name: `${method} ${path}`, path, method, accessType: 'public', schema, ...extra });
  expect(res.status, res.text).toBe(201);
  return res.body.data._id;
}

async function auditEntries(action: string) {
  const res = await call('GET', `/api/dashboard/logs?action=${action}&limit=100`);
  expect(res.status).toBe(200);
  return res.body.data as Array<{ message: string; source: string; userId: string | null; statusCode: number }>;
}

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
});
afterAll(async () => {
  await t.close();
});

describe('permissions', () => {
  const id = 'ffffffffffffffffffffffff';
  const routes: Array<[string, string]> = [
    ['GET', base],
    ['GET', `${base}/users`],
    ['GET', `${base}/users/${id}`],
    ['POST', `${base}/groups`],
    ['PUT', `${base}/groups/${id}`],
    ['DELETE', `${base}/groups/${id}`],
    ['DELETE', `${base}/logs`],
  ];

  it('every route answers 401 without credentials and 403 without manage_users', async () => {
    const viewer = await createUserWith(t, ['view', 'view_logs', 'manage_api']);
    for (const [method, path] of routes) {
      const body = method === 'POST' || method === 'PUT' ? { body: { name: 'x' } } : {};
      expectError(await t.api(method, path, body), 401);
      expectError(await t.api(method, path, { token: viewer.token, ...body }), 403);
    }
  });

  it('manage_users alone browses users, groups, records and settings; not what another permission guards', async () => {
    const manager = await createUserWith(t, ['manage_users']);
    expect((await call('GET', base, undefined, manager.token)).status).toBe(200);
    for (const name of ['users', 'groups', 'endpointdatas', 'systemsettings']) expect((await call('GET', `${base}/${name}`, undefined, manager.token)).status, name).toBe(200);
    const logs = await call('GET', `${base}/logs`, undefined, manager.token);
    expect(logs.status).toBe(403);
    expect(logs.body).toEqual({ success: false, error: 'Forbidden: reading logs requires view_logs' });
    const endpoint = (await call('GET', '/api/endpoints?limit=1')).body.data[0];
    const before = (await call('GET', `${base}/endpoints/${endpoint._id}`)).body.data;
    expect((await call('GET', `${base}/endpoints`, undefined, manager.token)).status).toBe(403);
    expect((await call('GET', `${base}/endpointgroups`, undefined, manager.token)).status).toBe(403);
    // Changing definitions is manage_api's: the browser is no way around that rule.
    const create = await call('POST', `${base}/endpoints`, { name: 'mu', path: '/api/mu-ep', method: 'GET', accessType: 'public', schema: {} }, manager.token);
    expect(create.status).toBe(403);
    expect(create.body.error).toBe('Forbidden: changing endpoints requires manage_api');
    expect((await call('PUT', `${base}/endpoints/${endpoint._id}`, { ...before, _id: undefined, accessType: 'public' }, manager.token)).status).toBe(403);
    expect((await call('DELETE', `${base}/endpoints/${endpoint._id}`, undefined, manager.token)).status).toBe(403);
    expect((await call('POST', `${base}/endpointgroups`, { name: 'mu-group' }, manager.token)).status).toBe(403);
    expect((await call('GET', `${base}/endpoints/${endpoint._id}`)).body.data).toEqual(before);
    expect((await call('GET', '/api/mu-ep')).status).toBe(404);
    const both = await createUserWith(t, ['manage_users', 'view_logs', 'manage_api']);
    for (const name of ['logs', 'endpoints', 'endpointgroups']) expect((await call('GET', `${base}/${name}`, undefined, both.token)).status, name).toBe(200);
    // Deleting a log entry is clearing's rule (manage_users), but the answer shows nothing of it.
    const entry = (await call('GET', `${base}/logs?limit=1`, undefined, both.token)).body.data[0];
    const deleted = await call('DELETE', `${base}/logs/${entry._id}`, undefined, manager.token);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ success: true, data: { _id: entry._id } });
    expect((await call('GET', `${base}/logs/${entry._id}`, undefined, both.token)).status).toBe(404);
  });
});

describe('collections and reading', () => {
  it('lists exactly the seven collections with their document counts', async () => {
    const res = await call('GET', base);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.map((c: any) => c.name)).toEqual(COLLECTIONS);
    const users = res.body.data.find((c: any) => c.name === 'users');
    expect(users.count).toBe((await call('GET', '/api/users')).body.meta.total);
  });

  it.each(['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'Users', 'USERS', 'apikeys', 'sessions', 'recordcounts', 'dailystats', 'nope'])('"%s" is not a collection (404 on every route)', async (name) => {
    const id = 'ffffffffffffffffffffffff';
    for (const [method, path] of [['GET', `${base}/${name}`], ['GET', `${base}/${name}/${id}`], ['POST', `${base}/${name}`], ['PUT', `${base}/${name}/${id}`], ['DELETE', `${base}/${name}/${id}`], ['DELETE', `${base}/${name}`]] as const) {
      expectError(await call(method, path, method === 'POST' || method === 'PUT' ? { name: 'x' } : undefined), 404);
    }
  });

  it('pages with meta, searches text fields and finds a 24-hex term by _id', async () => {
    const user = await createUserWith(t, [], 'rawsearch-one');
    const page = await call('GET', `${base}/users?page=1&limit=1`);
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(1);
    expect(page.body.meta).toMatchObject({ page: 1, limit: 1 });
    expect(page.body.meta.total).toBeGreaterThan(1);

    const byLogin = await call('GET', `${base}/users?search=rawsearch-one`);
    expect(byLogin.body.data.map((u: any) => u._id)).toEqual([user.userId]);
    const byId = await call('GET', `${base}/users?search=${user.userId}`);
    expect(byId.body.data.map((u: any) => u.login)).toEqual(['rawsearch-one']);
    const byPath = await call('GET', `${base}/endpoints?search=/api/auth`);
    expect(byPath.body.meta.total).toBeGreaterThan(0);
  });

  it('refuses unknown and repeated query parameters', async () => {
    expectError(await call('GET', `${base}/users?filter=x`), 400);
    expectError(await call('GET', `${base}/users?search[$ne]=x`), 400);
  });

  it('reads password hashes and token material as [REDACTED], dates as ISO strings', async () => {
    const users = await call('GET', `${base}/users?search=admin`);
    const adminDoc = users.body.data.find((u: any) => u.login === 'admin');
    expect(adminDoc.passwordHash).toBe('[REDACTED]');
    expect(users.text).not.toMatch(/\$2[aby]\$/);
    expect(new Date(adminDoc.createdAt).toISOString()).toBe(adminDoc.createdAt);
    const one = await rawGet('users', adminDoc._id);
    expect(one).toMatchObject({ login: 'admin', passwordHash: '[REDACTED]', loginKey: 'admin' });
  });

  it('one document: 404 for an unknown or malformed id', async () => {
    expectError(await call('GET', `${base}/users/ffffffffffffffffffffffff`), 404);
    expectError(await call('GET', `${base}/users/not-an-id`), 404);
  });
});

describe('users and groups through their services', () => {
  it('creates a user with a password that is hashed, never returned, and signs in', async () => {
    const res = await call('POST', `${base}/users`, { login: 'raw-made', password: 'raw-password-1', name: 'Raw' });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({ login: 'raw-made', loginKey: 'raw-made', passwordHash: '[REDACTED]' });
    expect(res.text).not.toContain('raw-password-1');
    expect((await t.api('POST', '/api/auth/login', { body: { login: 'raw-made', password: 'raw-password-1' } })).status).toBe(200);
  });

  it('a PUT of the document as read changes the edited field; [REDACTED] is ignored and the password still works', async () => {
    const user = await createUserWith(t, [], 'raw-edit');
    const doc = await rawGet('users', user.userId);
    const res = await call('PUT', `${base}/users/${user.userId}`, { ...editable(doc), name: 'Edited Raw' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'Edited Raw', passwordHash: '[REDACTED]' });
    expect((await call('GET', `/api/users/${user.userId}`)).body.data.name).toBe('Edited Raw');
    expect((await t.api('POST', '/api/auth/login', { body: { login: 'raw-edit', password: user.password } })).status).toBe(200);
  });

  it('a user read before their next sign-in is taken back whole: lastLoginAt is ignored, the sign-in time kept', async () => {
    const user = await createUserWith(t, [], 'raw-signin');
    const doc = await rawGet('users', user.userId);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await t.api('POST', '/api/auth/login', { body: { login: 'raw-signin', password: user.password } })).status).toBe(200);
    const signedIn = (await rawGet('users', user.userId)).lastLoginAt;
    expect(signedIn).not.toBe(doc.lastLoginAt);
    const res = await call('PUT', `${base}/users/${user.userId}`, { ...editable(doc), name: 'Edited After Sign-in' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'Edited After Sign-in', lastLoginAt: signedIn });
    expectError(await call('POST', `${base}/users`, { login: 'raw-prelogged', password: 'raw-password-1', lastLoginAt: signedIn }), 400);
  });

  it.each([
    ['a password', { password: 'new-password-1' }, 'password'],
    ['a password hash', { passwordHash: '$2b$04$abcdefghijklmnopqrstuuJ5Yx3o0j8N6Bf6g5kC2m5p0mR8i7y6a' }, 'passwordHash'],
    ['a refresh token', { refreshToken: 'x' }, 'refreshToken'],
    ['a derived lookup key', { loginKey: 'someone-else' }, 'loginKey'],
    ['an unknown field', { isAdmin: true }, 'isAdmin'],
    ['an operator-shaped key', { $set: { name: 'x' } }, '$set'],
    ['a malformed id list', { groupIds: ['not-an-id'] }, 'groupIds'],
    ['an _id', { _id: 'ffffffffffffffffffffffff' }, '_id'],
  ])('a PUT with %s is refused (400) and changes nothing', async (_what, extra, field) => {
    const user = await createUserWith(t, []);
    const doc = await rawGet('users', user.userId);
    const res = await call('PUT', `${base}/users/${user.userId}`, { ...editable(doc), name: 'Should Not Stick', ...extra });
    expectError(res, 400);
    expect(res.body.details.map((d: any) => d.field)).toContain(field);
    expect((await rawGet('users', user.userId)).name).toBe(doc.name);
    expect((await t.api('POST', '/api/auth/login', { body: { login: user.login, password: user.password } })).status).toBe(200);
  });

  it('converts ids given in upper case in …Id and …Ids fields to the stored form', async () => {
    const user = await createUserWith(t, []);
    const doc = await rawGet('users', user.userId);
    const group = await call('POST', `${base}/groups`, { name: 'Raw Upper Case', permissions: [] });
    expect(group.status, group.text).toBe(201);
    const res = await call('PUT', `${base}/users/${user.userId}`, { ...editable(doc), groupIds: [group.body.data._id.toUpperCase()] });
    expect(res.status, res.text).toBe(200);
    expect((await rawGet('users', user.userId)).groupIds).toEqual([group.body.data._id]);
  });

  it('finds a document by its id in upper case too: read, search, replace and delete', async () => {
    const group = await call('POST', `${base}/groups`, { name: 'Raw Upper Case Read', permissions: [] });
    expect(group.status, group.text).toBe(201);
    const id = group.body.data._id as string;
    const upper = id.toUpperCase();
    const read = await call('GET', `${base}/groups/${upper}`);
    expect(read.status, read.text).toBe(200);
    expect(read.body.data._id).toBe(id);
    const found = await call('GET', `${base}/groups?search=${upper}`);
    expect(found.body.data.map((g: any) => g._id)).toEqual([id]);
    const { _id, ...rest } = read.body.data;
    const replaced = await call('PUT', `${base}/groups/${upper}`, { ...rest, _id: upper, description: 'by upper-case id' });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body.data).toMatchObject({ _id: id, description: 'by upper-case id' });
    expect((await call('DELETE', `${base}/groups/${upper}`)).status).toBe(200);
    expect((await call('GET', `${base}/groups/${id}`)).status).toBe(404);
  });

  it('a POST cannot set a password hash or an id', async () => {
    expectError(await call('POST', `${base}/users`, { login: 'raw-hash', passwordHash: 'x' }), 400);
    expectError(await call('POST', `${base}/users`, { _id: 'ffffffffffffffffffffffff', login: 'raw-id', password: 'raw-password-1' }), 400);
    expect((await call('GET', `${base}/users?search=raw-hash`)).body.meta.total).toBe(0);
  });

  it('keeps uniqueness and the last administrator', async () => {
    const adminDoc = (await call('GET', `${base}/users?search=admin`)).body.data.find((u: any) => u.login === 'admin');
    expectError(await call('POST', `${base}/users`, { login: 'ADMIN', password: 'raw-password-1' }), 409);
    expectError(await call('PUT', `${base}/users/${adminDoc._id}`, { ...editable(adminDoc), groupIds: [] }), 409);
    // The last administrator is the caller here: disabling oneself is refused first.
    expectError(await call('PUT', `${base}/users/${adminDoc._id}`, { ...editable(adminDoc), status: 'disabled' }), 400, /You cannot disable your own account/);
  });

  it('system groups cannot be renamed or deleted; a new group can be created, replaced and deleted', async () => {
    const groups = (await call('GET', `${base}/groups?search=Administrators`)).body.data;
    const admins = groups.find((g: any) => g.name === 'Administrators');
    expectError(await call('PUT', `${base}/groups/${admins._id}`, { ...editable(admins), name: 'Renamed' }), 403);
    expectError(await call('DELETE', `${base}/groups/${admins._id}`), 403);

    const created = await call('POST', `${base}/groups`, { name: 'Raw Readers', permissions: ['view'] });
    expect(created.status, created.text).toBe(201);
    const id = created.body.data._id;
    // Replace: left-out description and permissions return to their defaults.
    const replaced = await call('PUT', `${base}/groups/${id}`, { name: 'Raw Readers 2' });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body.data).toMatchObject({ name: 'Raw Readers 2', nameKey: 'raw readers 2', permissions: [], description: '' });
    expect((await call('DELETE', `${base}/groups/${id}`)).status).toBe(200);
    expectError(await call('GET', `${base}/groups/${id}`), 404);
  });
});

describe('endpoints and records', () => {
  it('an endpoint edited with a raw PUT is served changed on the next request', async () => {
    const id = await defineEndpoint('/api/rawx/items', 'GET', { title: { type: 'string' } });
    expect((await t.api('GET', '/api/rawx/items')).status).toBe(200);
    const doc = await rawGet('endpoints', id);
    const res = await call('PUT', `${base}/endpoints/${id}`, { ...editable(doc), accessType: 'authenticated' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.revision).toBeGreaterThan(doc.revision);
    expect((await t.api('GET', '/api/rawx/items')).status).toBe(401);
    expect((await call('GET', '/api/rawx/items')).status).toBe(200);
  });

  it('an endpoint edited with a raw PUT is written back to the project directory', async () => {
    const dir = copyOfSampleProject();
    const watched = await startTestServer({ PROJECT_WATCH: 'on', PROJECT_DIR: dir });
    try {
      const token = await watched.adminToken();
      const found = await watched.api('GET', `${base}/endpoints?search=/api/shop/products&limit=100`, { token });
      const doc = found.body.data.find((e: any) => e.path === '/api/shop/products' && e.method === 'GET');
      const res = await watched.api('PUT', `${base}/endpoints/${doc._id}`, { token, body: { ...editable(doc), description: 'Edited in the raw browser' } });
      expect(res.status, res.text).toBe(200);
      await waitFor('the description written back', () => readFileSync(join(dir, 'endpoints/products-list.yaml'), 'utf8').includes('description: Edited in the raw browser\n'));
    } finally {
      await watched.close();
      removeSyncDirs();
    }
  });

  it('endpoint definitions are validated and system endpoints protected', async () => {
    const id = await defineEndpoint('/api/rawx/checked', 'GET', {});
    const doc = await rawGet('endpoints', id);
    expectError(await call('PUT', `${base}/endpoints/${id}`, { ...editable(doc), method: 'FETCH' }), 400);
    const system = (await call('GET', `${base}/endpoints?limit=100`)).body.data.find((e: any) => e.isSystem);
    expectError(await call('DELETE', `${base}/endpoints/${system._id}`), 403);
    const renamed = await call('PUT', `${base}/endpoints/${system._id}`, { ...editable(system), name: 'Renamed system route' });
    expect(renamed.status, renamed.text).toBe(200);
  });

  it('a definition read before its callCount moved is taken back whole: callCount is ignored, a stale revision is not', async () => {
    const id = await defineEndpoint('/api/rawx/counted', 'GET', {});
    const doc = await rawGet('endpoints', id);
    expect(doc.callCount).toBe(0);
    expect((await call('GET', '/api/rawx/counted')).status).toBe(200);
    await waitFor('the call counted', async () => (await rawGet('endpoints', id)).callCount === 1, 5000);

    const res = await call('PUT', `${base}/endpoints/${id}`, { ...editable(doc), description: 'edited after a call' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ description: 'edited after a call', callCount: 1 });
    const ignored = await call('PUT', `${base}/endpoints/${id}`, { ...editable(res.body.data), callCount: 1_000_000 });
    expect(ignored.status, ignored.text).toBe(200);
    expect((await rawGet('endpoints', id)).callCount).toBe(1);

    // The revision moves only with an edit: one read before it is a document that changed since.
    const stale = await call('PUT', `${base}/endpoints/${id}`, { ...editable(doc), description: 'lost update' });
    expectError(stale, 400);
    expect(stale.body.error).toMatch(/revision/);
    expect((await rawGet('endpoints', id)).description).toBe('edited after a call');
    // On create it is the service's to set, like any field it keeps.
    expectError(await call('POST', `${base}/endpoints`, { name: 'counted', path: '/api/rawx/precounted', method: 'GET', accessType: 'public', schema: {}, callCount: 5 }), 400);
  });

  it('a record created with a raw POST appears in the dynamic list and its meta.total; a raw DELETE takes it out', async () => {
    const postId = await defineEndpoint('/api/rawx/notes', 'POST', { text: { type: 'string', required: true }, extra: { type: 'json' } });
    await defineEndpoint('/api/rawx/notes', 'GET', { text: { type: 'string' } });
    expect((await t.api('POST', '/api/rawx/notes', { body: { text: 'via http' } })).status).toBe(201);

    // Operator-shaped keys are never taken as a query: outside json values they are refused.
    expectError(await call('POST', `${base}/endpointdatas`, { endpointId: postId, data: { text: 'x', $where: 'sleep(1)' } }), 400);
    const created = await call('POST', `${base}/endpointdatas`, { endpointId: postId, data: { text: 'via raw', extra: { q: '{"$ne":null}', list: [1] } } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data).toMatchObject({ endpointId: postId, resourcePath: '/api/rawx/notes', data: { text: 'via raw', extra: { q: '{"$ne":null}', list: [1] } } });

    const list = await t.api('GET', '/api/rawx/notes');
    expect(list.body.meta.total).toBe(2);
    expect(list.body.data.find((r: any) => r._id === created.body.data._id)).toMatchObject({ text: 'via raw', extra: { q: '{"$ne":null}', list: [1] } });

    const edited = await call('PUT', `${base}/endpointdatas/${created.body.data._id}`, { ...editable(created.body.data), data: { text: 'edited raw' } });
    expect(edited.status, edited.text).toBe(200);
    expect((await t.api('GET', `/api/rawx/notes/${created.body.data._id}`)).body.data.text).toBe('edited raw');

    expect((await call('DELETE', `${base}/endpointdatas/${created.body.data._id}`)).status).toBe(200);
    expect((await t.api('GET', '/api/rawx/notes')).body.meta.total).toBe(1);
  });

  it('a record of a path with :params needs a resourcePath of that pattern', async () => {
    const postId = await defineEndpoint('/api/rawx/shops/:shop/items', 'POST', { n: { type: 'number' } });
    await defineEndpoint('/api/rawx/shops/:shop/items', 'GET', {});
    expectError(await call('POST', `${base}/endpointdatas`, { endpointId: postId, data: { n: 1 } }), 400);
    expectError(await call('POST', `${base}/endpointdatas`, { endpointId: postId, resourcePath: '/api/rawx/shops/a/b/items', data: { n: 1 } }), 400);
    const created = await call('POST', `${base}/endpointdatas`, { endpointId: postId, resourcePath: '/api/rawx/shops/north/items', data: { n: 1 } });
    expect(created.status, created.text).toBe(201);
    expect((await t.api('GET', '/api/rawx/shops/north/items')).body.meta.total).toBe(1);
    expect((await t.api('GET', '/api/rawx/shops/south/items')).body.meta.total).toBe(0);
  });

  it('record data must fit the endpoint schema; endpointId must name an endpoint; resourcePath a path of it', async () => {
    const postId = await defineEndpoint('/api/rawx/typed', 'POST', { n: { type: 'number', required: true } });
    expectError(await call('POST', `${base}/endpointdatas`, { endpointId: postId, data: { n: 'one' } }), 400);
    expectError(await call('POST', `${base}/endpointdatas`, { endpointId: 'ffffffffffffffffffffffff', data: { n: 1 } }), 400);
    expectError(await call('POST', `${base}/endpointdatas`, { endpointId: 'nope', data: { n: 1 } }), 400);
    expectError(await call('POST', `${base}/endpointdatas`, { endpointId: postId, resourcePath: '/api/elsewhere', data: { n: 1 } }), 400);
    expectError(await call('POST', `${base}/endpointdatas`, { endpointId: postId, resourcePath: '/api/rawx/%E0%A4%A', data: { n: 1 } }), 400);
    const created = await call('POST', `${base}/endpointdatas`, { endpointId: postId, data: { n: 1 } });
    expect(created.status, created.text).toBe(201);
    expectError(await call('PUT', `${base}/endpointdatas/${created.body.data._id}`, { ...editable(created.body.data), resourcePath: '/api/rawx/other' }), 400);
    expectError(await call('PUT', `${base}/endpointdatas/${created.body.data._id}`, { data: { n: 'two' } }), 400);
  });

  it('a record is created through a POST definition, with its schema and retention; a GET one is refused', async () => {
    const getId = await defineEndpoint('/api/rawx/kept', 'GET', {});
    const postId = await defineEndpoint('/api/rawx/kept', 'POST', { title: { type: 'string', required: true } }, { retentionDays: 1 });
    const viaGet = await call('POST', `${base}/endpointdatas`, { endpointId: getId, data: {} });
    expect(viaGet.status).toBe(400);
    expect(viaGet.body.error).toBe('Invalid document: endpointId must name a POST definition (or one with a handler): records of /api/rawx/kept are created through one, with its schema and retention');
    expectError(await call('POST', `${base}/endpointdatas`, { endpointId: postId, data: {} }), 400);
    const created = await call('POST', `${base}/endpointdatas`, { endpointId: postId, data: { title: 'kept a day' } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data.expiresAt).not.toBeNull();
    expect((await t.api('GET', '/api/rawx/kept')).body.meta.total).toBe(1);
  });

  it('a record whose definition was deleted is held to the schema of one still serving its path, or not edited at all', async () => {
    const postId = await defineEndpoint('/api/rawx/:tid/books', 'POST', { t: { type: 'string' } });
    await defineEndpoint('/api/rawx/:tid/books', 'GET', { t: { type: 'string' } });
    const created = await call('POST', `${base}/endpointdatas`, { endpointId: postId, resourcePath: '/api/rawx/abc/books', data: { t: 'x' } });
    expect(created.status, created.text).toBe(201);
    expect((await call('DELETE', `/api/endpoints/${postId}`)).status).toBe(200);
    const read = (await call('GET', `${base}/endpointdatas/${created.body.data._id}`)).body.data;
    // Forged members would be served by the GET definition beside the record's own fields.
    const forged = await call('PUT', `${base}/endpointdatas/${read._id}`, { ...editable(read), data: { $gt: 1, 'a.b': 2, _id: 'ffffffffffffffffffffffff', createdAt: '1970-01-01T00:00:00Z' } });
    expect(forged.status).toBe(400);
    expect((await t.api('GET', `/api/rawx/abc/books/${read._id}`)).body.data).toMatchObject({ _id: read._id, t: 'x' });
    const fair = await call('PUT', `${base}/endpointdatas/${read._id}`, { ...editable(read), data: { t: 'y' } });
    expect(fair.status, fair.text).toBe(200);
    expect((await t.api('GET', `/api/rawx/abc/books/${read._id}`)).body.data.t).toBe('y');
    // With no definition left on the path, nothing can check the data: it is not changed.
    const list = await call('GET', '/api/endpoints?search=/api/rawx/:tid/books');
    for (const endpoint of list.body.data) expect((await call('DELETE', `/api/endpoints/${endpoint._id}`)).status).toBe(200);
    const reread = (await call('GET', `${base}/endpointdatas/${read._id}`)).body.data;
    const orphan = await call('PUT', `${base}/endpointdatas/${read._id}`, { ...editable(reread), data: { t: 'z' } });
    expect(orphan.status).toBe(400);
    expect(orphan.body.error).toBe("Invalid document: no definition serves /api/rawx/abc/books any more, so nothing can check this record's data: delete the record instead");
    expect((await call('DELETE', `${base}/endpointdatas/${read._id}`)).status).toBe(200);
  });

  it('records are searched by resourcePath and by the name-like fields of their data', async () => {
    await defineEndpoint('/api/rawx/people', 'POST', { name: { type: 'string' }, email: { type: 'string' } });
    expect((await t.api('POST', '/api/rawx/people', { body: { name: 'Ada Lovelace', email: 'ada@example.com' } })).status).toBe(201);
    expect((await t.api('POST', '/api/rawx/people', { body: { name: 'Alan Turing' } })).status).toBe(201);
    const byPath = await call('GET', `${base}/endpointdatas?search=/api/rawx/people`);
    expect(byPath.body.meta.total).toBe(2);
    const byName = await call('GET', `${base}/endpointdatas?search=lovelace`);
    expect(byName.body.data.map((r: any) => r.data.name)).toEqual(['Ada Lovelace']);
    const byEmail = await call('GET', `${base}/endpointdatas?search=ada@example`);
    expect(byEmail.body.meta.total).toBe(1);
  });

  it('clearing endpointdatas empties every dynamic list and zeroes its total', async () => {
    await defineEndpoint('/api/rawx/cleared', 'POST', { n: { type: 'number' } });
    await defineEndpoint('/api/rawx/cleared', 'GET', {});
    for (const n of [1, 2, 3]) expect((await t.api('POST', '/api/rawx/cleared', { body: { n } })).status).toBe(201);
    const res = await call('DELETE', `${base}/endpointdatas`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.deleted).toBeGreaterThanOrEqual(3);
    const list = await t.api('GET', '/api/rawx/cleared');
    expect(list.body).toMatchObject({ data: [], meta: { total: 0 } });
  });
});

describe('what each collection allows', () => {
  it.each(['users', 'groups', 'endpoints', 'endpointgroups', 'systemsettings'])('clearing %s is refused with 405 and an Allow header', async (name) => {
    const res = await call('DELETE', `${base}/${name}`);
    expectError(res, 405, /cannot be cleared/);
    expect(res.headers.get('allow')).not.toContain('DELETE');
    expect((await call('GET', base)).body.data.find((c: any) => c.name === 'users').count).toBeGreaterThan(0);
  });

  it('a method no route takes is a 405 naming what this collection takes, and OPTIONS says the same', async () => {
    const users = await call('PATCH', `${base}/users`, {});
    expectError(users, 405, /Method PATCH is not allowed on \/api\/database\/collections\/users/);
    expect(users.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
    const logs = await call('PATCH', `${base}/logs`, {});
    expectError(logs, 405);
    expect(logs.headers.get('allow')).toBe('GET, HEAD, DELETE, OPTIONS');
    const [entry] = (await call('GET', `${base}/logs?limit=1`)).body.data;
    const doc = await call('POST', `${base}/logs/${entry._id}`, {});
    expectError(doc, 405);
    expect(doc.headers.get('allow')).toBe('GET, HEAD, DELETE, OPTIONS');
    const options = await call('OPTIONS', `${base}/users`);
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
    // HEAD, as Allow says, answers as GET would without a body.
    const head = await call('HEAD', `${base}/users`);
    expect(head.status).toBe(200);
    expectError(await call('PATCH', `${base}/nothing-here`, {}), 404);
  });

  it('logs are read, deleted and cleared, never created or edited (405)', async () => {
    const [entry] = (await call('GET', `${base}/logs?limit=1`)).body.data;
    expectError(await call('POST', `${base}/logs`, { action: 'forged', message: 'x' }), 405);
    expectError(await call('PUT', `${base}/logs/${entry._id}`, { ...editable(entry), message: 'rewritten' }), 405);
    expect((await call('DELETE', `${base}/logs/${entry._id}`)).status).toBe(200);
    expectError(await call('GET', `${base}/logs/${entry._id}`), 404);
  });

  it('settings: a replace validates and applies values; the document cannot be deleted', async () => {
    expect((await call('PUT', '/api/settings', { defaultPageSize: 25 })).status).toBe(200);
    const [doc] = (await call('GET', `${base}/systemsettings`)).body.data;
    expect(doc).toMatchObject({ key: 'global', values: { defaultPageSize: 25 } });
    expectError(await call('PUT', `${base}/systemsettings/${doc._id}`, { ...editable(doc), values: { ...doc.values, maxPageSize: 'lots' } }), 400);
    const res = await call('PUT', `${base}/systemsettings/${doc._id}`, { ...editable(doc), values: { ...doc.values, defaultPageSize: 30 } });
    expect(res.status, res.text).toBe(200);
    expect((await call('GET', '/api/settings')).body.data.defaultPageSize).toBe(30);
    expectError(await call('DELETE', `${base}/systemsettings/${doc._id}`), 405);
    expectError(await call('POST', `${base}/systemsettings`, { key: 'global', values: {} }), 409);
  });

  it('endpoint groups keep unique names', async () => {
    expect((await call('POST', `${base}/endpointgroups`, { name: 'Raw Shop' })).status).toBe(201);
    expectError(await call('POST', `${base}/endpointgroups`, { name: 'raw shop' }), 409);
  });
});

describe('audit', () => {
  it('each create, update, delete and clear is audited with the caller, without secrets', async () => {
    const created = await call('POST', `${base}/users`, { login: 'raw-audited', password: 'secret-password-9' });
    expect(created.status).toBe(201);
    const id = created.body.data._id;
    expect((await call('PUT', `${base}/users/${id}`, { ...editable(created.body.data), name: 'Audited' })).status).toBe(200);
    expect((await call('DELETE', `${base}/users/${id}`)).status).toBe(200);
    const adminId = (await call('GET', '/api/profile')).body.data._id;

    for (const action of ['database_document_created', 'database_document_updated', 'database_document_deleted']) {
      const entry = (await auditEntries(action)).find((e) => e.message.includes(id));
      expect(entry, action).toMatchObject({ source: 'database', userId: adminId });
      expect(entry?.message).toContain('raw-audited');
    }
    const logs = await call('GET', '/api/dashboard/logs?search=raw-audited&limit=100');
    expect(logs.text).not.toContain('secret-password-9');

    expect((await call('DELETE', `${base}/logs`)).status).toBe(200);
    const after = (await call('GET', `${base}/logs`)).body.data;
    // The audit log's own service notes the clearing too (logs_cleared), as it does for DELETE /api/settings/logs.
    expect(after.map((e: any) => e.action).sort()).toEqual(['database_collection_cleared', 'logs_cleared']);
  });

  it('a refused write is not audited as a change', async () => {
    const before = (await auditEntries('database_document_updated')).length;
    const adminDoc = (await call('GET', `${base}/users?search=admin`)).body.data.find((u: any) => u.login === 'admin');
    expectError(await call('PUT', `${base}/users/${adminDoc._id}`, { ...editable(adminDoc), password: ADMIN_PASSWORD }), 400);
    expect((await auditEntries('database_document_updated')).length).toBe(before);
  });
});
