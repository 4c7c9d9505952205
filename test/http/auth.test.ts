import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

describe('health and conventions', () => {
  it('GET /api/health answers ok with a timestamp', async () => {
    const res = await t.api('GET', '/api/health');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, status: 'ok' });
    expect(new Date(res.body.timestamp).toISOString()).toBe(res.body.timestamp);
  });

  it('an unknown /api route is a 404 in the error shape', async () => {
    const res = await t.api('GET', '/api/does-not-exist');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: 'No route for GET /api/does-not-exist' });
  });

  it('sends security headers on every response, errors included', async () => {
    for (const path of ['/api/health', '/api/nope']) {
      const res = await t.api('GET', path);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    }
  });

  it('malformed JSON is a 400 that says so', async () => {
    const res = await t.api('POST', '/api/auth/login', { rawBody: '{"login": ' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: 'Malformed JSON body' });
  });
});

describe('login', () => {
  it('returns an access token, a refresh token and the user without secrets', async () => {
    const res = await t.api('POST', '/api/auth/login', { body: { login: 'admin', password: ADMIN_PASSWORD } });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.data.accessToken).toMatch(/^ey/);
    expect(res.body.data.refreshToken).toMatch(/^ey/);
    expect(res.body.data.user).toMatchObject({ login: 'admin', status: 'active' });
    expect(res.text).not.toMatch(/passwordHash|tokenVersion|\$2[aby]\$/);
    // The user as of this sign-in, as a read right after shows it.
    const read = await t.api('GET', '/api/profile', { token: res.body.data.accessToken });
    expect(res.body.data.user.lastLoginAt).toBe(read.body.data.lastLoginAt);
    expect(Date.now() - Date.parse(res.body.data.user.lastLoginAt)).toBeLessThan(60_000);
  });

  it.each([
    ['wrong password', { login: 'admin', password: 'nope-nope' }],
    ['unknown login', { login: 'nobody-here', password: 'nope-nope' }],
  ])('answers 401 with the same message for a %s', async (_name, body) => {
    const res = await t.api('POST', '/api/auth/login', { body });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, error: 'Invalid login or password' });
  });

  it.each([
    ['operator-shaped login', { login: { $ne: null }, password: 'x' }],
    ['operator-shaped password', { login: 'admin', password: { $gt: '' } }],
    ['missing password', { login: 'admin' }],
    ['unknown field', { login: 'admin', password: 'x', extra: 1 }],
    ['array body', [1, 2]],
  ])('refuses a %s with 400', async (_name, body) => {
    const res = await t.api('POST', '/api/auth/login', { body });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(typeof res.body.error).toBe('string');
  });

  it('a password longer than bcrypt reads (72 bytes) never matches, though it starts with the right one', async () => {
    const user = await createUserWith(t, ['view']);
    const exact = 'a'.repeat(72);
    expect((await t.api('PUT', `/api/users/${user.userId}`, { token: await t.adminToken(), body: { password: exact } })).status).toBe(200);
    expect((await t.api('POST', '/api/auth/login', { body: { login: user.login, password: exact } })).status).toBe(200);
    const longer = await t.api('POST', '/api/auth/login', { body: { login: user.login, password: `${exact}b` } });
    expect(longer.status).toBe(401);
    expect(longer.body).toEqual({ success: false, error: 'Invalid login or password' });
  });

  it('a refresh token is not accepted as an access token, nor the reverse', async () => {
    const session = await t.login();
    expect((await t.api('GET', '/api/users', { token: session.refreshToken })).status).toBe(401);
    expect((await t.api('POST', '/api/auth/refresh', { body: { refreshToken: session.accessToken } })).status).toBe(401);
  });
});

describe('refresh rotation and logout', () => {
  it('refresh returns a new pair and the used refresh token stops working', async () => {
    const session = await t.login();
    const first = await t.api('POST', '/api/auth/refresh', { body: { refreshToken: session.refreshToken } });
    expect(first.status).toBe(200);
    expect(first.body.data.refreshToken).not.toBe(session.refreshToken);
    const again = await t.api('POST', '/api/auth/refresh', { body: { refreshToken: session.refreshToken } });
    expect(again.status).toBe(401);
    expect(again.body.error).toBe('Invalid or expired refresh token');
    const next = await t.api('POST', '/api/auth/refresh', { body: { refreshToken: first.body.data.refreshToken } });
    expect(next.status).toBe(200);
  });

  it('logout ends the refresh token at once and the access token on the next request', async () => {
    const user = await createUserWith(t, ['view']);
    const session = await t.login(user.login, user.password);
    expect((await t.api('GET', '/api/users', { token: session.accessToken })).status).toBe(200);
    const out = await t.api('POST', '/api/auth/logout', { token: session.accessToken });
    expect(out.status).toBe(200);
    expect((await t.api('POST', '/api/auth/refresh', { body: { refreshToken: session.refreshToken } })).status).toBe(401);
    const after = await t.api('GET', '/api/users', { token: session.accessToken });
    expect(after.status).toBe(401);
    expect(after.body.error).toBe('Session has ended; sign in again');
  });

  it('a 401 names the schemes that authenticate in WWW-Authenticate, on management and dynamic routes', async () => {
    const admin = (await t.login()).accessToken;
    const path = `/api/challenge${Date.now().toString(36)}/items`;
    const defined = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'challenge', path, method: 'GET', accessType: 'authenticated', schema: {} } });
    expect(defined.status, defined.text).toBe(201);
    for (const [method, url, body] of [['GET', '/api/users'], ['GET', path], ['GET', `${path}/000000000000000000000000`], ['POST', '/api/auth/login', { login: 'admin', password: 'wrong-password' }]] as const) {
      const res = await t.api(method, url, body ? { body } : {});
      expect(res.status, url).toBe(401);
      expect(res.headers.get('www-authenticate'), url).toBe('Bearer realm="dyn", ApiKey realm="dyn"');
    }
    expect((await t.api('GET', '/api/users', { token: admin })).headers.get('www-authenticate')).toBeNull();
  });

  it('logout without credentials is a 401; with an API key (valid, but no session) a 403', async () => {
    expect((await t.api('POST', '/api/auth/logout')).status).toBe(401);
    const admin = (await t.login()).accessToken;
    const key = await t.api('POST', '/api/api-keys', { token: admin, body: { name: `logout-probe-${Date.now()}`, permissions: [] } });
    const res = await t.api('POST', '/api/auth/logout', { apiKey: key.body.data.key });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ success: false, error: 'This route needs a signed-in user, not an API key' });
  });

  it('refresh without a refresh token (none in the body, no cookie) is a 400 naming it', async () => {
    const res = await t.api('POST', '/api/auth/refresh', { body: {} });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: 'Invalid request body: refreshToken is required', details: [{ field: 'refreshToken', message: 'is required' }] });
  });

  it('logout with the access token of one session and the refresh token of another is a 400 that ends neither', async () => {
    const user = await createUserWith(t, ['view']);
    const one = await t.login(user.login, user.password);
    const two = await t.login(user.login, user.password);
    const res = await t.api('POST', '/api/auth/logout', { token: one.accessToken, body: { refreshToken: two.refreshToken } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('The refreshToken belongs to another session than the access token; log out of each on its own');
    expect((await t.api('GET', '/api/profile', { token: one.accessToken })).status).toBe(200);
    expect((await t.api('POST', '/api/auth/refresh', { body: { refreshToken: two.refreshToken } })).status).toBe(200);
    // Its own session's refresh token sent along (as dynctl does) is fine.
    expect((await t.api('POST', '/api/auth/logout', { token: one.accessToken, body: { refreshToken: one.refreshToken } })).status).toBe(200);
  });
});
