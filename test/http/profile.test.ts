import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

let t: TestServer;
let admin: string;

const SECRETS = /passwordHash|tokenVersion|initialPassword|currentPassword|\$2[aby]\$/;
const PROFILE_KEYS = ['_id', 'createdAt', 'email', 'groupIds', 'lastLoginAt', 'login', 'name', 'permissions', 'status', 'updatedAt'];

const profileOf = async (token: string) => (await t.api('GET', '/api/profile', { token })).body.data;

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
});
afterAll(async () => {
  await t.close();
});

describe('reading the profile', () => {
  it('GET /api/profile answers the signed-in user with their permissions and no secrets', async () => {
    const user = await createUserWith(t, ['view', 'view_logs']);
    const res = await t.api('GET', '/api/profile', { token: user.token });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data).sort()).toEqual(PROFILE_KEYS);
    expect(res.body.data).toMatchObject({ _id: user.userId, login: user.login, groupIds: [user.groupId], status: 'active' });
    expect([...res.body.data.permissions].sort()).toEqual(['view', 'view_logs']);
    expect(res.text).not.toMatch(SECRETS);
  });

  it('a user in no group has a profile with no permissions', async () => {
    const user = await createUserWith(t, []);
    const res = await t.api('GET', '/api/profile', { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ login: user.login, groupIds: [], permissions: [] });
  });

  it('without credentials is a 401', async () => {
    const res = await t.api('GET', '/api/profile');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, error: 'Authentication required' });
  });

  it.each([
    ['X-API-Key', (key: string) => ({ apiKey: key })],
    ['Authorization: ApiKey', (key: string) => ({ headers: { authorization: `ApiKey ${key}` } })],
  ])('an API key (sent as %s) cannot use /api/profile (403)', async (_how, credentials) => {
    const created = await t.api('POST', '/api/api-keys', { token: admin, body: { name: `profile-key-${Math.random()}`, permissions: ['manage_users', 'view'] } });
    expect(created.status).toBe(201);
    const key = created.body.data.key as string;
    const read = await t.api('GET', '/api/profile', credentials(key));
    expect(read.status).toBe(403);
    expect(read.body).toEqual({ success: false, error: 'This route needs a signed-in user, not an API key' });
    const write = await t.api('PUT', '/api/profile', { ...credentials(key), body: { name: 'Key Holder' } });
    expect(write.status).toBe(403);
    expect(write.body.success).toBe(false);
  });
});

describe('updating name and email', () => {
  it('PUT /api/profile changes the own name and email', async () => {
    const user = await createUserWith(t, []);
    const email = `${user.login}@example.com`;
    const res = await t.api('PUT', '/api/profile', { token: user.token, body: { name: ' My Name ', email } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ _id: user.userId, name: 'My Name', email, permissions: [] });
    expect(res.body.data.tokens).toBeUndefined();
    expect(res.text).not.toMatch(SECRETS);
    expect(await profileOf(user.token)).toMatchObject({ name: 'My Name', email });
    const asAdmin = await t.api('GET', `/api/users/${user.userId}`, { token: admin });
    expect(asAdmin.body.data).toMatchObject({ name: 'My Name', email });
  });

  it('an empty email removes it', async () => {
    const user = await createUserWith(t, []);
    expect((await t.api('PUT', '/api/profile', { token: user.token, body: { email: `${user.login}@example.com` } })).status).toBe(200);
    const res = await t.api('PUT', '/api/profile', { token: user.token, body: { email: '' } });
    expect(res.status).toBe(200);
    expect(res.body.data.email).toBeNull();
  });

  it('an email another user has is a 409 and changes nothing', async () => {
    const other = await createUserWith(t, []);
    const otherEmail = `${other.login}@example.com`;
    expect((await t.api('PUT', '/api/profile', { token: other.token, body: { email: otherEmail } })).status).toBe(200);
    const user = await createUserWith(t, []);
    const before = await profileOf(user.token);
    const res = await t.api('PUT', '/api/profile', { token: user.token, body: { email: otherEmail.toUpperCase(), name: 'Should Not Stick' } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ success: false, error: 'A user with this email already exists' });
    expect(await profileOf(user.token)).toEqual(before);
  });

  it.each<[string, Record<string, unknown>]>([
    ['groupIds', { groupIds: [] }],
    ['status', { status: 'disabled' }],
    ['login', { login: 'new-login' }],
    ['permissions', { permissions: ['manage_users'] }],
  ])('refuses a change of %s, which the profile shows but cannot change, with 400 and changes nothing', async (field, body) => {
    const user = await createUserWith(t, ['view']);
    const before = await profileOf(user.token);
    const res = await t.api('PUT', '/api/profile', { token: user.token, body: { ...body, name: 'Not Applied' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: `Invalid request body: ${field} cannot be changed` });
    expect(await profileOf(user.token)).toEqual(before);
  });

  it('takes back the profile a GET returned, changed where the client changed it', async () => {
    const user = await createUserWith(t, ['view']);
    const before = await profileOf(user.token);
    const back = await t.api('PUT', '/api/profile', { token: user.token, body: { ...before, name: 'Sent Back', lastLoginAt: null } });
    expect(back.status, back.text).toBe(200);
    expect(await profileOf(user.token)).toEqual({ ...before, name: 'Sent Back', updatedAt: expect.any(String) });
    const unchanged = await t.api('PUT', '/api/profile', { token: user.token, body: { status: before.status, groupIds: before.groupIds } });
    expect(unchanged.status, unchanged.text).toBe(200);
  });

  it.each<[string, string | Record<string, unknown>]>([
    ['tokenVersion', { tokenVersion: 0 }],
    ['an unknown field next to a valid one', { name: 'ok', role: 'admin' }],
  ])('refuses %s (unknown field) with 400 and changes nothing', async (_name, body) => {
    const user = await createUserWith(t, ['view']);
    const before = await profileOf(user.token);
    const res = await t.api('PUT', '/api/profile', { token: user.token, body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: expect.stringContaining('is not an allowed field') });
    expect(await profileOf(user.token)).toEqual(before);
  });

  it.each<[string, unknown]>([
    ['an empty body', {}],
    ['only members the service keeps', { lastLoginAt: '2000-01-01T00:00:00Z', updatedAt: '2000-01-01T00:00:00Z' }],
  ])('takes %s as no change (200, the profile as it is), as PUT /api/users/:id does', async (_name, body) => {
    const user = await createUserWith(t, ['view']);
    const before = await profileOf(user.token);
    const res = await t.api('PUT', '/api/profile', { token: user.token, body });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual(before);
    expect(await profileOf(user.token)).toEqual(before);
  });

  it.each<[string, string | unknown]>([
    ['a wrong type', { name: 5 }],
    ['an invalid email', { email: 'nope' }],
    ['an operator-shaped value', { email: { $ne: null } }],
    ['an array body', [{ name: 'x' }]],
    ['a __proto__ key', '{"name":"x","__proto__":{"groupIds":[]}}'],
    ['a constructor key', '{"constructor":{"prototype":{"status":"disabled"}}}'],
  ])('refuses %s with 400 and changes nothing', async (_name, body) => {
    const user = await createUserWith(t, ['view']);
    const before = await profileOf(user.token);
    const res = await t.api('PUT', '/api/profile', { token: user.token, ...(typeof body === 'string' ? { rawBody: body } : { body }) });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: expect.any(String) });
    expect(await profileOf(user.token)).toEqual(before);
  });

  it('without credentials is a 401', async () => {
    expect((await t.api('PUT', '/api/profile', { body: { name: 'x' } })).status).toBe(401);
  });
});

describe('changing the own password', () => {
  it('needs currentPassword (400) and changes nothing without it', async () => {
    const user = await createUserWith(t, []);
    const res = await t.api('PUT', '/api/profile', { token: user.token, body: { password: 'another-password-1' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: 'Invalid request body: currentPassword is required to change the password' });
    expect((await t.api('GET', '/api/profile', { token: user.token })).status).toBe(200);
    expect((await t.api('POST', '/api/auth/login', { body: { login: user.login, password: user.password } })).status).toBe(200);
  });

  it('refuses a wrong currentPassword, keeps the old password and the session', async () => {
    const user = await createUserWith(t, []);
    const res = await t.api('PUT', '/api/profile', { token: user.token, body: { password: 'another-password-1', currentPassword: 'not-my-password' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: 'Invalid request body: currentPassword is wrong' });
    expect((await t.api('GET', '/api/profile', { token: user.token })).status).toBe(200);
    expect((await t.api('POST', '/api/auth/login', { body: { login: user.login, password: 'another-password-1' } })).status).toBe(401);
    expect((await t.api('POST', '/api/auth/login', { body: { login: user.login, password: user.password } })).status).toBe(200);
  });

  it('refuses currentPassword without a new password with 400', async () => {
    const user = await createUserWith(t, []);
    const res = await t.api('PUT', '/api/profile', { token: user.token, body: { currentPassword: user.password } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Invalid request body: currentPassword is only used together with password');
  });

  it('refuses a too short new password with 400', async () => {
    const user = await createUserWith(t, []);
    const res = await t.api('PUT', '/api/profile', { token: user.token, body: { password: 'short', currentPassword: user.password } });
    expect(res.status).toBe(400);
    expect((await t.api('POST', '/api/auth/login', { body: { login: user.login, password: user.password } })).status).toBe(200);
  });

  it('returns fresh tokens in data.tokens; the old access and refresh tokens stop working', async () => {
    const user = await createUserWith(t, ['view']);
    const other = await t.login(user.login, user.password); // a second device
    const res = await t.api('PUT', '/api/profile', { token: user.token, body: { password: 'another-password-1', currentPassword: user.password } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ _id: user.userId, login: user.login });
    expect(res.body.data.tokens).toMatchObject({ accessToken: expect.stringMatching(/^ey/), refreshToken: expect.stringMatching(/^ey/) });
    expect(res.text).not.toMatch(SECRETS);
    const { accessToken, refreshToken } = res.body.data.tokens;

    const old = await t.api('GET', '/api/profile', { token: user.token });
    expect(old.status).toBe(401);
    expect(old.body).toEqual({ success: false, error: 'Session has ended; sign in again' });
    expect((await t.api('GET', '/api/users', { token: other.accessToken })).status).toBe(401);
    expect((await t.api('POST', '/api/auth/refresh', { body: { refreshToken: other.refreshToken } })).status).toBe(401);

    expect((await t.api('GET', '/api/profile', { token: accessToken })).status).toBe(200);
    expect((await t.api('GET', '/api/users', { token: accessToken })).status).toBe(200);
    expect((await t.api('POST', '/api/auth/refresh', { body: { refreshToken } })).status).toBe(200);

    expect((await t.api('POST', '/api/auth/login', { body: { login: user.login, password: user.password } })).status).toBe(401);
    expect((await t.api('POST', '/api/auth/login', { body: { login: user.login, password: 'another-password-1' } })).status).toBe(200);
  });

  it('a name change alone returns no tokens and keeps the session', async () => {
    const user = await createUserWith(t, []);
    const res = await t.api('PUT', '/api/profile', { token: user.token, body: { name: 'Same Session' } });
    expect(res.status).toBe(200);
    expect(res.body.data.tokens).toBeUndefined();
    expect((await t.api('GET', '/api/profile', { token: user.token })).status).toBe(200);
  });
});

describe('audit log', () => {
  it('a profile change leaves a user_updated entry by the user', async () => {
    const user = await createUserWith(t, []);
    expect((await t.api('PUT', '/api/profile', { token: user.token, body: { name: 'Audited' } })).status).toBe(200);
    const res = await t.api('GET', `/api/dashboard/logs?action=user_updated&search=${user.login}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0]).toMatchObject({ action: 'user_updated', message: `User ${user.login} updated their profile`, userId: user.userId });
  });

  it('a refused profile change leaves no entry', async () => {
    const user = await createUserWith(t, []);
    expect((await t.api('PUT', '/api/profile', { token: user.token, body: { status: 'disabled' } })).status).toBe(400);
    const res = await t.api('GET', `/api/dashboard/logs?action=user_updated&search=${user.login}`, { token: admin });
    expect(res.body.data).toEqual([]);
  });
});
