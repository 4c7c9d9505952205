import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

let t: TestServer;
let admin: string;
let adminId: string;
let administratorsId: string;

const SECRETS = /password|tokenVersion|refreshToken|\$2[aby]\$/i;
const PUBLIC_USER_KEYS = ['_id', 'createdAt', 'email', 'groupIds', 'lastLoginAt', 'login', 'name', 'status', 'updatedAt'];

let seq = 0;
const uniqueLogin = (prefix = 'u') => `${prefix}${Date.now().toString(36)}${(seq++).toString(36)}`;

async function createUser(body: Record<string, unknown> = {}) {
  const login = uniqueLogin();
  const res = await t.api('POST', '/api/users', { token: admin, body: { login, password: 'user-password-1', ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

async function userTotal(): Promise<number> {
  const res = await t.api('GET', '/api/users', { token: admin });
  expect(res.status).toBe(200);
  return res.body.meta.total;
}

async function getUser(id: string) {
  return (await t.api('GET', `/api/users/${id}`, { token: admin })).body.data;
}

async function auditEntries(action: string, search: string) {
  const res = await t.api('GET', `/api/dashboard/logs?action=${action}&search=${encodeURIComponent(search)}`, { token: admin });
  expect(res.status).toBe(200);
  return res.body.data as Array<{ action: string; message: string; userId: string | null }>;
}

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  const me = await t.api('GET', '/api/profile', { token: admin });
  adminId = me.body.data._id;
  const groups = await t.api('GET', '/api/groups?search=Administrators', { token: admin });
  administratorsId = groups.body.data.find((g: { name: string }) => g.name === 'Administrators')._id;
});
afterAll(async () => {
  await t.close();
});

describe('listing users', () => {
  it('GET /api/users answers page 1 with limit 20 by default, and the total', async () => {
    const res = await t.api('GET', '/api/users', { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.meta).toEqual({ page: 1, limit: 20, total: expect.any(Number) });
    expect(res.body.data.length).toBe(Math.min(20, res.body.meta.total));
    expect(res.body.data.some((u: { login: string }) => u.login === 'admin')).toBe(true);
  });

  it('a limit above maxPageSize (100) is clamped, and meta.limit shows the value used', async () => {
    const res = await t.api('GET', '/api/users?limit=1000', { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.meta.limit).toBe(100);
  });

  it('pages through results with page and limit', async () => {
    const tag = uniqueLogin('pg');
    for (let i = 0; i < 3; i++) await createUser({ name: `${tag} ${i}` });
    const first = await t.api('GET', `/api/users?search=${tag}&limit=2`, { token: admin });
    expect(first.body.meta).toEqual({ page: 1, limit: 2, total: 3 });
    expect(first.body.data).toHaveLength(2);
    const second = await t.api('GET', `/api/users?search=${tag}&limit=2&page=2`, { token: admin });
    expect(second.body.meta).toEqual({ page: 2, limit: 2, total: 3 });
    expect(second.body.data).toHaveLength(1);
    const names = [...first.body.data, ...second.body.data].map((u: { name: string }) => u.name).sort();
    expect(names).toEqual([`${tag} 0`, `${tag} 1`, `${tag} 2`]);
    const beyond = await t.api('GET', `/api/users?search=${tag}&limit=2&page=5`, { token: admin });
    expect(beyond.status).toBe(200);
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.meta.total).toBe(3);
  });

  it.each([
    ['name', (tag: string) => ({ name: `Zed ${tag} Person` })],
    ['login', (tag: string) => ({ login: `l${tag}x` })],
    ['email', (tag: string) => ({ email: `m${tag}@example.com` })],
  ])('search matches the %s', async (_field, fields) => {
    const tag = uniqueLogin('s');
    const user = await createUser(fields(tag));
    const res = await t.api('GET', `/api/users?search=${tag}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data.map((u: { _id: string }) => u._id)).toEqual([user._id]);
    expect(res.body.meta.total).toBe(1);
  });

  it('search matches the status', async () => {
    const user = await createUser({ status: 'disabled' });
    const res = await t.api('GET', '/api/users?search=disabled&limit=100', { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data.map((u: { _id: string }) => u._id)).toContain(user._id);
    expect(res.body.data.some((u: { login: string }) => u.login === 'admin')).toBe(false);
  });

  it.each([
    ['%', '%25'],
    ['_', '_'],
  ])('search treats %s literally, not as a wildcard', async (_char, term) => {
    const res = await t.api('GET', `/api/users?search=${term}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.meta.total).toBe(0);
  });

  it('a blank search lists everyone', async () => {
    const all = await t.api('GET', '/api/users', { token: admin });
    const blank = await t.api('GET', '/api/users?search=%20%20', { token: admin });
    expect(blank.status).toBe(200);
    expect(blank.body.meta.total).toBe(all.body.meta.total);
  });

  it.each([
    ['an unknown parameter', '?sort=login'],
    ['a repeated parameter', '?page=1&page=2'],
    ['an operator-shaped parameter', '?search[$ne]=x'],
    ['a non-numeric page', '?page=two'],
    ['a zero limit', '?limit=0'],
    ['a negative page', '?page=-1'],
    // SQLite reads a bound text up to a NUL: this search would match everyone.
    ['a NUL character in the search', '?search=%00zzz'],
  ])('refuses %s with 400', async (_name, query) => {
    const res = await t.api('GET', `/api/users${query}`, { token: admin });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: expect.any(String) });
  });
});

describe('a user as the API shows it, sent back', () => {
  it('a PUT of the object a GET returned changes only what the client changed; its _id cannot change', async () => {
    const user = await createUser({ name: 'Round Trip' });
    const read = await getUser(user._id);
    const back = await t.api('PUT', `/api/users/${user._id}`, { token: admin, body: { ...read, name: 'Round Tripped', lastLoginAt: '2000-01-01T00:00:00.000Z' } });
    expect(back.status, back.text).toBe(200);
    expect(back.body.data).toMatchObject({ _id: user._id, name: 'Round Tripped', lastLoginAt: null, createdAt: read.createdAt });
    const moved = await t.api('PUT', `/api/users/${user._id}`, { token: admin, body: { ...read, _id: 'ffffffffffffffffffffffff' } });
    expect(moved.status).toBe(400);
    expect(moved.body.error).toBe('Invalid request body: _id cannot be changed');
    expect((await getUser(user._id)).name).toBe('Round Tripped');
    const withId = await t.api('POST', '/api/users', { token: admin, body: { _id: 'ffffffffffffffffffffffff', login: `rt-${Date.now().toString(36)}`, password: 'round-trip-pass-1' } });
    expect(withId.body.error).toBe('Invalid request body: _id is assigned by the service');
  });

  it('a POST of a shown user without its _id creates a copy, `email: null` (no email) included', async () => {
    const user = await createUser({ name: 'No Mail' });
    const { _id, ...shown } = await getUser(user._id);
    expect(shown.email).toBeNull();
    const copy = await t.api('POST', '/api/users', { token: admin, body: { ...shown, login: uniqueLogin('copy'), password: 'copy-password-1' } });
    expect(copy.status, copy.text).toBe(201);
    expect(copy.body.data).toMatchObject({ name: 'No Mail', email: null });
    // An empty email means none too, on create as on update.
    const blank = await t.api('POST', '/api/users', { token: admin, body: { login: uniqueLogin('blank'), password: 'copy-password-1', email: '' } });
    expect(blank.status, blank.text).toBe(201);
    expect(blank.body.data.email).toBeNull();
  });

  it('a bad email is one error, named as such, on create and update', async () => {
    const user = await createUser();
    for (const [method, url] of [['POST', '/api/users'], ['PUT', `/api/users/${user._id}`]] as const) {
      const res = await t.api(method, url, { token: admin, body: { ...(method === 'POST' ? { login: uniqueLogin('bad'), password: 'user-password-1' } : {}), email: 'bad' } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, error: 'Invalid request body: email must match format "email"', details: [{ field: 'email', message: 'must match format "email"' }] });
    }
  });
});

describe('reading one user', () => {
  it('GET /api/users/:id answers the public shape of the user', async () => {
    const user = await createUser({ name: 'Reader Example', email: 'reader@example.com' });
    const res = await t.api('GET', `/api/users/${user._id}`, { token: admin });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data).sort()).toEqual(PUBLIC_USER_KEYS);
    expect(res.body.data).toMatchObject({ _id: user._id, name: 'Reader Example', email: 'reader@example.com', status: 'active', groupIds: [], lastLoginAt: null });
    expect(res.text).not.toMatch(SECRETS);
  });

  it.each([
    ['a malformed id', 'not-an-id'],
    ['an unknown id', 'aaaaaaaaaaaaaaaaaaaaaaaa'],
    ['an operator-looking id', '%7B%22%24ne%22%3Anull%7D'],
  ])('answers 404 for %s', async (_name, id) => {
    const res = await t.api('GET', `/api/users/${id}`, { token: admin });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: 'User not found' });
  });
});

describe('creating users', () => {
  it('POST /api/users creates an active user with a trimmed login, without secrets, who can sign in', async () => {
    const login = uniqueLogin('new');
    const group = await t.api('POST', '/api/groups', { token: admin, body: { name: uniqueLogin('grp'), permissions: ['view'] } });
    const groupId = group.body.data._id;
    const res = await t.api('POST', '/api/users', {
      token: admin,
      body: { login: `  ${login} `, password: 'user-password-1', name: ' New Person ', email: `${login}@example.com`, groupIds: [groupId] },
    });
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    expect(Object.keys(res.body.data).sort()).toEqual(PUBLIC_USER_KEYS);
    expect(res.body.data).toMatchObject({ login, name: 'New Person', email: `${login}@example.com`, groupIds: [groupId], status: 'active' });
    expect(res.text).not.toMatch(SECRETS);
    const session = await t.login(login, 'user-password-1');
    expect(session.user._id).toBe(res.body.data._id);
  });

  it('logins compare case-insensitively and trimmed: `Alice` then ` alice ` is a 409', async () => {
    const suffix = uniqueLogin('');
    await createUser({ login: `Alice${suffix}` });
    const before = await userTotal();
    const res = await t.api('POST', '/api/users', { token: admin, body: { login: ` alice${suffix} `, password: 'user-password-1' } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ success: false, error: 'A user with this login already exists' });
    expect(await userTotal()).toBe(before);
  });

  it('a duplicate email (in any case) is a 409', async () => {
    const email = `${uniqueLogin('dup')}@example.com`;
    await createUser({ email });
    const before = await userTotal();
    const res = await t.api('POST', '/api/users', { token: admin, body: { login: uniqueLogin(), password: 'user-password-1', email: email.toUpperCase() } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ success: false, error: 'A user with this email already exists' });
    expect(await userTotal()).toBe(before);
  });

  const valid = () => ({ login: uniqueLogin('bad'), password: 'user-password-1' });
  it.each<[string, () => unknown]>([
    ['a missing login', () => ({ password: 'user-password-1' })],
    ['a missing password', () => ({ login: uniqueLogin() })],
    ['a too short password', () => ({ ...valid(), password: 'short' })],
    ['a password over 72 bytes', () => ({ ...valid(), password: 'é'.repeat(40) })],
    ['a login with spaces inside', () => ({ ...valid(), login: 'two words' })],
    ['a too short login', () => ({ ...valid(), login: 'ab' })],
    ['a numeric login', () => ({ ...valid(), login: 12345 })],
    ['an operator-shaped login', () => ({ ...valid(), login: { $ne: null } })],
    ['an operator-shaped password', () => ({ ...valid(), password: { $gt: '' } })],
    ['an invalid email', () => ({ ...valid(), email: 'not-an-email' })],
    ['an unknown status', () => ({ ...valid(), status: 'banned' })],
    ['groupIds that is not an array', () => ({ ...valid(), groupIds: 'x' })],
    ['an operator-shaped group id', () => ({ ...valid(), groupIds: [{ $ne: null }] })],
    ['an unknown group id', () => ({ ...valid(), groupIds: ['aaaaaaaaaaaaaaaaaaaaaaaa'] })],
    ['a malformed group id', () => ({ ...valid(), groupIds: ['not-an-id'] })],
    ['an unknown field', () => ({ ...valid(), isAdmin: true })],
    ['a tokenVersion field', () => ({ ...valid(), tokenVersion: 5 })],
    ['a passwordHash field', () => ({ ...valid(), passwordHash: '$2a$04$abcdefghijklmnopqrstuv' })],
    ['an array body', () => [valid()]],
  ])('refuses %s with 400 and writes nothing', async (_name, body) => {
    const before = await userTotal();
    const res = await t.api('POST', '/api/users', { token: admin, body: body() });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: expect.any(String) });
    expect(await userTotal()).toBe(before);
  });

  it.each([
    ['__proto__', (login: string) => `{"login":"${login}","password":"user-password-1","__proto__":{"status":"disabled"}}`],
    ['constructor', (login: string) => `{"login":"${login}","password":"user-password-1","constructor":{"prototype":{"x":1}}}`],
    ['nested __proto__', (login: string) => `{"login":"${login}","password":"user-password-1","groupIds":[],"name":"n","x":{"__proto__":{}}}`],
  ])('refuses a body with a %s key with 400 and writes nothing', async (_name, raw) => {
    const before = await userTotal();
    const login = uniqueLogin('proto');
    const res = await t.api('POST', '/api/users', { token: admin, rawBody: raw(login) });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: expect.any(String) });
    expect(await userTotal()).toBe(before);
    expect((await t.api('GET', `/api/users?search=${login}`, { token: admin })).body.meta.total).toBe(0);
  });
});

describe('updating users', () => {
  it('PUT /api/users/:id changes name, email, groups and status and answers the updated user', async () => {
    const user = await createUser();
    const group = await t.api('POST', '/api/groups', { token: admin, body: { name: uniqueLogin('grp'), permissions: ['view'] } });
    const email = `${uniqueLogin('upd')}@example.com`;
    const res = await t.api('PUT', `/api/users/${user._id}`, {
      token: admin,
      body: { name: 'Renamed', email, groupIds: [group.body.data._id], status: 'disabled' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ _id: user._id, login: user.login, name: 'Renamed', email, groupIds: [group.body.data._id], status: 'disabled' });
    expect(res.text).not.toMatch(SECRETS);
    expect(await getUser(user._id)).toEqual(res.body.data);
  });

  it('renaming a login onto an existing one (any case, padded) is a 409 and changes nothing', async () => {
    const taken = await createUser();
    const user = await createUser();
    const res = await t.api('PUT', `/api/users/${user._id}`, { token: admin, body: { login: ` ${taken.login.toUpperCase()} ` } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ success: false, error: 'A user with this login already exists' });
    expect(await getUser(user._id)).toEqual(user);
  });

  it('changing the email onto an existing one is a 409 and changes nothing', async () => {
    const taken = await createUser({ email: `${uniqueLogin('taken')}@example.com` });
    const user = await createUser();
    const res = await t.api('PUT', `/api/users/${user._id}`, { token: admin, body: { email: taken.email } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ success: false, error: 'A user with this email already exists' });
    expect(await getUser(user._id)).toEqual(user);
  });

  it.each<[string, string | Record<string, unknown>]>([
    ['an unknown field', { role: 'admin' }],
    ['a wrong type', { name: 42 }],
    ['an operator-shaped value', { status: { $ne: 'active' } }],
    ['an unknown group id', { groupIds: ['aaaaaaaaaaaaaaaaaaaaaaaa'] }],
    ['a malformed group id', { groupIds: ['nope'] }],
    ['a too short password', { password: 'short' }],
    ['a __proto__ key', '{"name":"x","__proto__":{"status":"disabled"}}'],
    ['a constructor key', '{"constructor":{"name":"x"}}'],
  ])('refuses %s with 400 and leaves the user as it was', async (_name, body) => {
    const user = await createUser({ name: 'Unchanged' });
    const res = await t.api('PUT', `/api/users/${user._id}`, { token: admin, ...(typeof body === 'string' ? { rawBody: body } : { body }) });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: expect.any(String) });
    expect(await getUser(user._id)).toEqual(user);
  });

  it.each([
    ['a malformed id', 'not-an-id'],
    ['an unknown id', 'bbbbbbbbbbbbbbbbbbbbbbbb'],
  ])('answers 404 for %s', async (_name, id) => {
    const res = await t.api('PUT', `/api/users/${id}`, { token: admin, body: { name: 'x' } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: 'User not found' });
  });
});

describe('disabling users and ending sessions', () => {
  it('a disabled user cannot sign in (same message as a wrong password), refresh, or use their access token', async () => {
    const user = await createUserWith(t, ['view']);
    const session = await t.login(user.login, user.password);
    expect((await t.api('GET', '/api/users', { token: session.accessToken })).status).toBe(200);

    const res = await t.api('PUT', `/api/users/${user.userId}`, { token: admin, body: { status: 'disabled' } });
    expect(res.status).toBe(200);

    const access = await t.api('GET', '/api/users', { token: session.accessToken });
    expect(access.status).toBe(401);
    expect(access.body).toEqual({ success: false, error: 'Session has ended; sign in again' });
    const refresh = await t.api('POST', '/api/auth/refresh', { body: { refreshToken: session.refreshToken } });
    expect(refresh.status).toBe(401);
    const login = await t.api('POST', '/api/auth/login', { body: { login: user.login, password: user.password } });
    expect(login.status).toBe(401);
    expect(login.body).toEqual({ success: false, error: 'Invalid login or password' });
  });

  it('a re-enabled user can sign in again', async () => {
    const user = await createUser({ status: 'disabled' });
    expect((await t.api('POST', '/api/auth/login', { body: { login: user.login, password: 'user-password-1' } })).status).toBe(401);
    expect((await t.api('PUT', `/api/users/${user._id}`, { token: admin, body: { status: 'active' } })).status).toBe(200);
    expect((await t.api('POST', '/api/auth/login', { body: { login: user.login, password: 'user-password-1' } })).status).toBe(200);
  });

  it('changing a user’s password ends their sessions and only the new password signs in', async () => {
    const user = await createUserWith(t, ['view']);
    const session = await t.login(user.login, user.password);
    const res = await t.api('PUT', `/api/users/${user.userId}`, { token: admin, body: { password: 'brand-new-password' } });
    expect(res.status).toBe(200);
    expect(res.text).not.toMatch(SECRETS);
    expect((await t.api('POST', '/api/auth/refresh', { body: { refreshToken: session.refreshToken } })).status).toBe(401);
    expect((await t.api('GET', '/api/users', { token: session.accessToken })).status).toBe(401);
    expect((await t.api('GET', '/api/users', { token: user.token })).status).toBe(401);
    expect((await t.api('POST', '/api/auth/login', { body: { login: user.login, password: user.password } })).status).toBe(401);
    expect((await t.api('POST', '/api/auth/login', { body: { login: user.login, password: 'brand-new-password' } })).status).toBe(200);
  });

  it('changing only a user’s name does not end their sessions', async () => {
    const user = await createUserWith(t, ['view']);
    expect((await t.api('PUT', `/api/users/${user.userId}`, { token: admin, body: { name: 'Still Signed In' } })).status).toBe(200);
    expect((await t.api('GET', '/api/users', { token: user.token })).status).toBe(200);
  });
});

describe('deleting users', () => {
  it('DELETE /api/users/:id removes the user, ends their sessions and answers the deleted user', async () => {
    const user = await createUserWith(t, ['view']);
    const session = await t.login(user.login, user.password);
    const before = await userTotal();
    const res = await t.api('DELETE', `/api/users/${user.userId}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ _id: user.userId, login: user.login });
    expect(res.text).not.toMatch(SECRETS);
    expect(await userTotal()).toBe(before - 1);
    expect((await t.api('GET', `/api/users/${user.userId}`, { token: admin })).status).toBe(404);
    expect((await t.api('POST', '/api/auth/refresh', { body: { refreshToken: session.refreshToken } })).status).toBe(401);
    expect((await t.api('GET', '/api/users', { token: user.token })).status).toBe(401);
    expect((await t.api('POST', '/api/auth/login', { body: { login: user.login, password: user.password } })).status).toBe(401);
  });

  it('a deleted login can be created again', async () => {
    const user = await createUser();
    expect((await t.api('DELETE', `/api/users/${user._id}`, { token: admin })).status).toBe(200);
    expect((await t.api('POST', '/api/users', { token: admin, body: { login: user.login, password: 'user-password-1' } })).status).toBe(201);
  });

  it("your own password is not changed here (403) but in the profile, which asks for the current one", async () => {
    const manager = await createUserWith(t, ['manage_users']);
    const res = await t.api('PUT', `/api/users/${manager.userId}`, { token: manager.token, body: { password: 'taken-over-1234' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ success: false, error: 'Forbidden: change your own password with PUT /api/profile, which asks for currentPassword' });
    expect((await t.api('GET', '/api/profile', { token: manager.token })).status).toBe(200); // sessions not ended
    expect((await t.api('POST', '/api/auth/login', { body: { login: manager.login, password: 'taken-over-1234' } })).status).toBe(401);
    expect((await t.api('POST', '/api/auth/login', { body: { login: manager.login, password: manager.password } })).status).toBe(200);
    // Another user's password is still set here.
    const other = await createUserWith(t, []);
    expect((await t.api('PUT', `/api/users/${other.userId}`, { token: manager.token, body: { password: 'reset-by-manager-1' } })).status).toBe(200);
  });

  it('you cannot disable yourself (400): it would end this session and lock you out', async () => {
    const manager = await createUserWith(t, ['manage_users']);
    const res = await t.api('PUT', `/api/users/${manager.userId}`, { token: manager.token, body: { status: 'disabled' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: 'You cannot disable your own account', details: [{ field: 'status', message: 'cannot disable your own account' }] });
    expect((await t.api('GET', `/api/users/${manager.userId}`, { token: admin })).body.data.status).toBe('active');
    expect((await t.api('GET', '/api/profile', { token: manager.token })).status).toBe(200);
  });

  it('an unlock takes no body fields (400), as an action with none', async () => {
    const user = await createUser();
    const res = await t.api('POST', `/api/users/${user._id}/unlock`, { token: admin, body: { force: true } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: 'Invalid request body: force is not an allowed field (this route takes no body)', details: [{ field: 'force', message: 'is not an allowed field' }] });
    expect((await t.api('POST', `/api/users/${user._id}/unlock`, { token: admin })).status).toBe(200);
    expect((await t.api('POST', `/api/users/${user._id}/unlock`, { token: admin, body: {} })).status).toBe(200);
  });

  it('you cannot delete yourself (400)', async () => {
    const manager = await createUserWith(t, ['manage_users']);
    const res = await t.api('DELETE', `/api/users/${manager.userId}`, { token: manager.token });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: 'You cannot delete your own account' });
    expect((await t.api('GET', `/api/users/${manager.userId}`, { token: admin })).status).toBe(200);
  });

  it.each([
    ['a malformed id', 'not-an-id'],
    ['an unknown id', 'cccccccccccccccccccccccc'],
  ])('answers 404 for %s', async (_name, id) => {
    const before = await userTotal();
    const res = await t.api('DELETE', `/api/users/${id}`, { token: admin });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: 'User not found' });
    expect(await userTotal()).toBe(before);
  });
});

describe('the last active administrator', () => {
  const LAST_ADMIN = 'This is the last active member of Administrators; add another administrator first';
  let manager: string;
  beforeAll(async () => {
    // Managing an administrator needs every permission they hold (see "privilege" below).
    manager = (await createUserWith(t, ['manage_users', 'manage_api', 'view', 'view_logs'])).token;
  });

  it.each<[string, string, Record<string, unknown> | undefined]>([
    ['disabled', 'PUT', { status: 'disabled' }],
    ['removed from Administrators', 'PUT', { groupIds: [] }],
    ['deleted', 'DELETE', undefined],
  ])('cannot be %s (409) and stays as it was', async (_name, method, body) => {
    const before = await getUser(adminId);
    const res = await t.api(method, `/api/users/${adminId}`, { token: manager, ...(body ? { body } : {}) });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ success: false, error: LAST_ADMIN });
    expect(await getUser(adminId)).toEqual(before);
    expect((await t.api('GET', '/api/users', { token: admin })).status).toBe(200);
  });

  it('with a second active administrator, one can be disabled; then the other is the last again', async () => {
    const second = await createUser({ groupIds: [administratorsId] });
    const res = await t.api('PUT', `/api/users/${second._id}`, { token: manager, body: { status: 'disabled' } });
    expect(res.status).toBe(200);
    // A disabled member of Administrators does not count.
    expect((await t.api('PUT', `/api/users/${adminId}`, { token: manager, body: { groupIds: [] } })).status).toBe(409);
    expect((await t.api('DELETE', `/api/users/${adminId}`, { token: manager })).status).toBe(409);
  });

  it('with a second active administrator, the other one can be deleted', async () => {
    const second = await createUser({ groupIds: [administratorsId] });
    expect((await t.api('DELETE', `/api/users/${second._id}`, { token: manager })).status).toBe(200);
    expect((await t.api('DELETE', `/api/users/${adminId}`, { token: manager })).status).toBe(409);
  });
});

describe('privilege: manage_users alone never reaches other permissions', () => {
  let usersOnly: string;
  beforeAll(async () => {
    usersOnly = (await createUserWith(t, ['manage_users'])).token;
  });

  it.each<[string, string, () => string, Record<string, unknown> | undefined]>([
    ['change an administrator\'s password', 'PUT', () => `/api/users/${adminId}`, { password: 'taken-over-1' }],
    ['disable an administrator', 'PUT', () => `/api/users/${adminId}`, { status: 'disabled' }],
    ['delete an administrator', 'DELETE', () => `/api/users/${adminId}`, undefined],
    // Else manage_users alone could lift the lockout on an administrator's login and go on guessing.
    ['unlock an administrator', 'POST', () => `/api/users/${adminId}/unlock`, undefined],
  ])('cannot %s (403) and nothing changes', async (_name, method, url, body) => {
    const before = await getUser(adminId);
    const res = await t.api(method, url(), { token: usersOnly, ...(body ? { body } : {}) });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatch(/^You cannot manage a user holding permissions you do not have: /);
    expect(await getUser(adminId)).toEqual(before);
  });

  it('cannot put a user into Administrators, on create or update (403)', async () => {
    const created = await t.api('POST', '/api/users', { token: usersOnly, body: { login: uniqueLogin('esc'), password: 'user-password-1', groupIds: [administratorsId] } });
    expect(created.status).toBe(403);
    const plain = await t.api('POST', '/api/users', { token: usersOnly, body: { login: uniqueLogin('esc'), password: 'user-password-1' } });
    expect(plain.status).toBe(201);
    const promoted = await t.api('PUT', `/api/users/${plain.body.data._id}`, { token: usersOnly, body: { groupIds: [administratorsId] } });
    expect(promoted.status).toBe(403);
    expect(promoted.body.error).toMatch(/manage_api/);
  });

  it('cannot create or widen a group beyond its own permissions (403)', async () => {
    const res = await t.api('POST', '/api/groups', { token: usersOnly, body: { name: `wide-${uniqueLogin('g')}`, permissions: ['manage_api'] } });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('You cannot grant permissions you do not have: manage_api');
    const narrow = await t.api('POST', '/api/groups', { token: usersOnly, body: { name: `narrow-${uniqueLogin('g')}`, permissions: ['manage_users'] } });
    expect(narrow.status).toBe(201);
    const widen = await t.api('PUT', `/api/groups/${narrow.body.data._id}`, { token: usersOnly, body: { permissions: ['manage_users', 'view_logs'] } });
    expect(widen.status).toBe(403);
  });

  it('cannot change or delete a group holding a permission it lacks, even an empty one (403)', async () => {
    const strong = await t.api('POST', '/api/groups', { token: admin, body: { name: `strong-${uniqueLogin('g')}`, permissions: ['manage_api'] } });
    expect(strong.status).toBe(201);
    const id = strong.body.data._id;
    const narrowed = await t.api('PUT', `/api/groups/${id}`, { token: usersOnly, body: { permissions: [] } });
    expect(narrowed.status).toBe(403);
    expect(narrowed.body.error).toBe('You cannot change a group holding permissions you do not have: manage_api');
    const deleted = await t.api('DELETE', `/api/groups/${id}`, { token: usersOnly });
    expect(deleted.status).toBe(403);
    expect(deleted.body.error).toBe('You cannot delete a group holding permissions you do not have: manage_api');
    expect((await t.api('GET', `/api/groups/${id}`, { token: admin })).body.data.permissions).toEqual(['manage_api']);
  });
});

describe('audit log', () => {
  it('creating, updating and deleting a user each leave an audit entry naming the user and the actor', async () => {
    const login = uniqueLogin('aud');
    const created = await t.api('POST', '/api/users', { token: admin, body: { login, password: 'user-password-1' } });
    expect(created.status).toBe(201);
    expect((await t.api('PUT', `/api/users/${created.body.data._id}`, { token: admin, body: { name: 'Audited' } })).status).toBe(200);
    expect((await t.api('DELETE', `/api/users/${created.body.data._id}`, { token: admin })).status).toBe(200);

    for (const [action, verb] of [['user_created', 'created'], ['user_updated', 'updated'], ['user_deleted', 'deleted']]) {
      const entries = await auditEntries(action as string, login);
      expect(entries, action).toHaveLength(1);
      expect(entries[0]).toMatchObject({ action, message: `User ${login} ${verb}`, userId: adminId });
    }
  });

  it('a refused write leaves no audit entry', async () => {
    const login = uniqueLogin('noaud');
    expect((await t.api('POST', '/api/users', { token: admin, body: { login, password: 'short' } })).status).toBe(400);
    expect(await auditEntries('user_created', login)).toEqual([]);
  });
});
