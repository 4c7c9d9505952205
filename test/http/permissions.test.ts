import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserWith, startTestServer, type RequestOptions, type TestServer } from '../helpers/test-server.ts';

/**
 * Who may do what on /api/users, /api/groups and /api/profile. Reads of users and groups need
 * `view` or `manage_users` (groups also `manage_api`, to pick an endpoint's allowed groups),
 * writes need `manage_users`; the profile needs a signed-in user of any
 * kind. No valid credentials → 401; valid but not permitted → 403.
 *
 * In URLs, `:user` and `:group` are an existing user and group; `:newUser` and `:newGroup` are
 * created (by the admin) just for that row, so destructive rows do not affect each other.
 */
type Who =
  | 'nobody'
  | 'garbage bearer'
  | 'revoked key'
  | 'admin'
  | 'viewer'
  | 'manager'
  | 'user without group'
  | 'logs-only user'
  | 'key with manage_users'
  | 'key with manage_users (ApiKey header)'
  | 'key with view'
  | 'key without manage_users';

interface Row {
  who: Who;
  method: string;
  url: string;
  body?: () => unknown;
  status: number;
}

let t: TestServer;
let admin: string;
const credentials = {} as Record<Who, RequestOptions>;
let userId: string;
let groupId: string;

let seq = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${(seq++).toString(36)}`;
const newUserBody = () => ({ login: unique('perm'), password: 'user-password-1' });
const newGroupBody = () => ({ name: unique('perm-group-') });
const rename = () => ({ name: unique('renamed-') });

async function createKey(permissions: string[]): Promise<{ key: string; id: string }> {
  const res = await t.api('POST', '/api/api-keys', { token: admin, body: { name: unique('key-'), permissions } });
  if (res.status !== 201) throw new Error(`api key create failed: ${res.text}`);
  return { key: res.body.data.key, id: res.body.data._id };
}

async function resolveUrl(url: string): Promise<string> {
  let out = url.replace(':user', userId).replace(':group', groupId);
  if (out.includes(':newUser')) {
    const res = await t.api('POST', '/api/users', { token: admin, body: newUserBody() });
    out = out.replace(':newUser', res.body.data._id);
  }
  if (out.includes(':newGroup')) {
    const res = await t.api('POST', '/api/groups', { token: admin, body: newGroupBody() });
    out = out.replace(':newGroup', res.body.data._id);
  }
  return out;
}

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  const target = await createUserWith(t, ['view']);
  userId = target.userId;
  groupId = target.groupId as string;

  const manageUsersKey = await createKey(['manage_users']);
  const revoked = await createKey(['manage_users', 'view']);
  const revoke = await t.api('DELETE', `/api/api-keys/${revoked.id}`, { token: admin });
  if (revoke.status !== 200) throw new Error(`api key revoke failed: ${revoke.text}`);

  Object.assign(credentials, {
    nobody: {},
    'garbage bearer': { token: 'this.is.not-a-jwt' },
    'revoked key': { apiKey: revoked.key },
    admin: { token: admin },
    viewer: { token: (await createUserWith(t, ['view'])).token },
    manager: { token: (await createUserWith(t, ['manage_users'])).token },
    'user without group': { token: (await createUserWith(t, [])).token },
    'logs-only user': { token: (await createUserWith(t, ['view_logs', 'manage_api'])).token },
    'key with manage_users': { apiKey: manageUsersKey.key },
    'key with manage_users (ApiKey header)': { headers: { authorization: `ApiKey ${manageUsersKey.key}` } },
    'key with view': { apiKey: (await createKey(['view'])).key },
    'key without manage_users': { apiKey: (await createKey(['view_logs', 'manage_api'])).key },
  } satisfies Record<Who, RequestOptions>);
});
afterAll(async () => {
  await t.close();
});

/** The ten user and group routes, with the status each kind of caller gets (groups are read with manage_api too). */
function usersAndGroups(who: Who, read: number, write: number, created = write, groupRead = read): Row[] {
  return [
    { who, method: 'GET', url: '/api/users', status: read },
    { who, method: 'GET', url: '/api/users/:user', status: read },
    { who, method: 'POST', url: '/api/users', body: newUserBody, status: created },
    { who, method: 'PUT', url: '/api/users/:newUser', body: rename, status: write },
    { who, method: 'DELETE', url: '/api/users/:newUser', status: write },
    { who, method: 'GET', url: '/api/groups', status: groupRead },
    { who, method: 'GET', url: '/api/groups/:group', status: groupRead },
    { who, method: 'POST', url: '/api/groups', body: newGroupBody, status: created },
    { who, method: 'PUT', url: '/api/groups/:newGroup', body: rename, status: write },
    { who, method: 'DELETE', url: '/api/groups/:newGroup', status: write },
  ];
}

function profile(who: Who, status: number): Row[] {
  return [
    { who, method: 'GET', url: '/api/profile', status },
    { who, method: 'PUT', url: '/api/profile', body: () => ({ name: 'Profile Name' }), status },
  ];
}

const table: Row[] = [
  // No valid credentials: 401 everywhere, the profile included.
  ...usersAndGroups('nobody', 401, 401),
  ...profile('nobody', 401),
  ...usersAndGroups('garbage bearer', 401, 401),
  ...profile('garbage bearer', 401),
  ...usersAndGroups('revoked key', 401, 401),
  ...profile('revoked key', 401),

  // Signed-in users.
  ...usersAndGroups('admin', 200, 200, 201),
  ...profile('admin', 200),
  ...usersAndGroups('manager', 200, 200, 201),
  ...profile('manager', 200),
  ...usersAndGroups('viewer', 200, 403),
  ...profile('viewer', 200),
  ...usersAndGroups('user without group', 403, 403),
  ...profile('user without group', 200),
  ...usersAndGroups('logs-only user', 403, 403, 403, 200),
  ...profile('logs-only user', 200),
  { who: 'user without group', method: 'GET', url: '/api/api-keys', status: 403 },
  { who: 'user without group', method: 'POST', url: '/api/api-keys', body: () => ({ name: 'k', permissions: [] }), status: 403 },
  { who: 'user without group', method: 'GET', url: '/api/dashboard/logs', status: 403 },
  { who: 'user without group', method: 'GET', url: '/api/settings', status: 403 },
  { who: 'viewer', method: 'GET', url: '/api/dashboard/logs', status: 403 },
  { who: 'viewer', method: 'GET', url: '/api/api-keys', status: 403 },

  // API keys: the permissions of the key; never the profile.
  ...usersAndGroups('key with manage_users', 200, 200, 201),
  ...profile('key with manage_users', 403),
  ...usersAndGroups('key with manage_users (ApiKey header)', 200, 200, 201),
  ...profile('key with manage_users (ApiKey header)', 403),
  ...usersAndGroups('key with view', 200, 403),
  ...profile('key with view', 403),
  ...usersAndGroups('key without manage_users', 403, 403, 403, 200),
  ...profile('key without manage_users', 403),
];

describe('permissions', () => {
  it.each(table)('$who: $method $url → $status', async ({ who, method, url, body, status }) => {
    const path = await resolveUrl(url);
    const res = await t.api(method, path, { ...credentials[who], ...(body ? { body: body() } : {}) });
    expect(res.status, res.text).toBe(status);
    if (status >= 400) {
      expect(res.body).toEqual({ success: false, error: expect.any(String) });
    } else {
      expect(res.body.success).toBe(true);
    }
  });

  it.each<[Who, string]>([
    ['nobody', 'Authentication required'],
    ['garbage bearer', 'Invalid access token'],
    ['revoked key', 'Invalid or expired API key'],
  ])('%s gets a 401 that says why', async (who, message) => {
    const res = await t.api('GET', '/api/users', credentials[who]);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, error: message });
  });

  it('a 403 names the permissions that would be needed', async () => {
    const read = await t.api('GET', '/api/users', credentials['user without group']);
    expect(read.body).toEqual({ success: false, error: 'Forbidden: requires view or manage_users' });
    const write = await t.api('POST', '/api/users', { ...credentials.viewer, body: newUserBody() });
    expect(write.body).toEqual({ success: false, error: 'Forbidden: requires manage_users' });
  });

  it('a refused write changes nothing', async () => {
    const before = (await t.api('GET', '/api/users', { token: admin })).body.meta.total;
    const target = await t.api('GET', `/api/users/${userId}`, { token: admin });
    for (const who of ['viewer', 'user without group', 'key with view', 'key without manage_users', 'nobody', 'revoked key'] as const) {
      expect((await t.api('POST', '/api/users', { ...credentials[who], body: newUserBody() })).status).toBeGreaterThanOrEqual(401);
      expect((await t.api('PUT', `/api/users/${userId}`, { ...credentials[who], body: { name: 'Hijacked' } })).status).toBeGreaterThanOrEqual(401);
      expect((await t.api('DELETE', `/api/users/${userId}`, credentials[who])).status).toBeGreaterThanOrEqual(401);
    }
    expect((await t.api('GET', '/api/users', { token: admin })).body.meta.total).toBe(before);
    expect((await t.api('GET', `/api/users/${userId}`, { token: admin })).body).toEqual(target.body);
  });

  it('a key revoked while in use stops working on the next request', async () => {
    const { key, id } = await createKey(['view']);
    expect((await t.api('GET', '/api/users', { apiKey: key })).status).toBe(200);
    expect((await t.api('DELETE', `/api/api-keys/${id}`, { token: admin })).status).toBe(200);
    const res = await t.api('GET', '/api/users', { apiKey: key });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, error: 'Invalid or expired API key' });
  });

  it('a user removed from their group loses its permissions on the next request', async () => {
    const user = await createUserWith(t, ['view']);
    expect((await t.api('GET', '/api/groups', { token: user.token })).status).toBe(200);
    expect((await t.api('PUT', `/api/users/${user.userId}`, { token: admin, body: { groupIds: [] } })).status).toBe(200);
    expect((await t.api('GET', '/api/groups', { token: user.token })).status).toBe(403);
    expect((await t.api('GET', '/api/profile', { token: user.token })).status).toBe(200);
  });
});
