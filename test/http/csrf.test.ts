import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

let t: TestServer;
let admin: string;
beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
});
afterAll(async () => {
  await t.close();
});

const CSRF_ERROR = 'Missing or invalid CSRF token: send the value of GET /api/csrf-token in X-CSRF-Token';

/** name → { value, attributes (lower-cased) } from a response's Set-Cookie headers. */
function setCookies(headers: Headers): Map<string, { value: string; attributes: string[] }> {
  const out = new Map<string, { value: string; attributes: string[] }>();
  for (const line of headers.getSetCookie()) {
    const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
    const at = pair.indexOf('=');
    out.set(pair.slice(0, at), { value: pair.slice(at + 1), attributes: attributes.map((a) => a.toLowerCase()) });
  }
  return out;
}

async function csrfToken(): Promise<{ token: string; cookie: string }> {
  const res = await t.api('GET', '/api/csrf-token');
  expect(res.status).toBe(200);
  const cookie = setCookies(res.headers).get('dyn_csrf');
  expect(cookie?.value).toBe(res.body.data.csrfToken);
  return { token: res.body.data.csrfToken, cookie: `dyn_csrf=${res.body.data.csrfToken}` };
}

async function cookieLogin(login = 'admin', password = ADMIN_PASSWORD): Promise<{ access: string; refresh: string }> {
  const res = await t.api('POST', '/api/auth/login', { body: { login, password, cookie: true } });
  expect(res.status).toBe(200);
  const cookies = setCookies(res.headers);
  return { access: `dyn_access=${cookies.get('dyn_access')?.value}`, refresh: `dyn_refresh=${cookies.get('dyn_refresh')?.value}` };
}

let seq = 0;
const groupBody = () => ({ name: `csrf-group-${Date.now().toString(36)}-${++seq}`, permissions: [] });

async function groupExists(name: string): Promise<boolean> {
  const res = await t.api('GET', `/api/groups?search=${encodeURIComponent(name)}`, { token: admin });
  return res.body.data.some((g: { name: string }) => g.name === name);
}

describe('issuing tokens and cookies', () => {
  it('GET /api/csrf-token returns a token and sets it as the readable dyn_csrf cookie', async () => {
    const res = await t.api('GET', '/api/csrf-token');
    expect(res.status).toBe(200);
    expect(res.body.data.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const cookie = setCookies(res.headers).get('dyn_csrf');
    expect(cookie?.value).toBe(res.body.data.csrfToken);
    expect(cookie?.attributes).toEqual(expect.arrayContaining(['path=/', 'samesite=strict']));
    expect(cookie?.attributes).not.toContain('httponly');
    expect((await t.api('GET', '/api/csrf-token')).body.data.csrfToken).not.toBe(res.body.data.csrfToken);
  });

  it('login with cookie: true sets httpOnly strict session cookies', async () => {
    const res = await t.api('POST', '/api/auth/login', { body: { login: 'admin', password: ADMIN_PASSWORD, cookie: true } });
    expect(res.status).toBe(200);
    const cookies = setCookies(res.headers);
    expect(cookies.get('dyn_access')?.value).toBe(res.body.data.accessToken);
    expect(cookies.get('dyn_access')?.attributes).toEqual(expect.arrayContaining(['httponly', 'samesite=strict', 'path=/']));
    expect(cookies.get('dyn_refresh')?.attributes).toEqual(expect.arrayContaining(['httponly', 'samesite=strict', 'path=/api/auth']));
  });

  it('marks the cookies Secure when a trusted proxy says the request came over HTTPS, and only then', async () => {
    const login = { login: 'admin', password: ADMIN_PASSWORD, cookie: true };
    // The test client is on loopback, which trustedProxies holds by default.
    const https = setCookies((await t.api('POST', '/api/auth/login', { body: login, headers: { 'x-forwarded-proto': 'https' } })).headers);
    expect(https.get('dyn_access')?.attributes).toContain('secure');
    expect(https.get('dyn_refresh')?.attributes).toContain('secure');
    expect(setCookies((await t.api('GET', '/api/csrf-token', { headers: { 'x-forwarded-proto': 'https' } })).headers).get('dyn_csrf')?.attributes).toContain('secure');
    const plain = setCookies((await t.api('POST', '/api/auth/login', { body: login })).headers);
    expect(plain.get('dyn_access')?.attributes).not.toContain('secure');
    const http = setCookies((await t.api('POST', '/api/auth/login', { body: login, headers: { 'x-forwarded-proto': 'http' } })).headers);
    expect(http.get('dyn_access')?.attributes).not.toContain('secure');
  });

  it('login without cookie sets no cookies', async () => {
    const res = await t.api('POST', '/api/auth/login', { body: { login: 'admin', password: ADMIN_PASSWORD } });
    expect(res.headers.getSetCookie()).toEqual([]);
  });
});

describe('a cookie session', () => {
  it('reads without a CSRF token', async () => {
    const { access } = await cookieLogin();
    const res = await t.api('GET', '/api/users', { headers: { cookie: access } });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
  });

  it.each([
    ['no token at all', () => ({})],
    ['the cookie but no header', (csrf: { token: string; cookie: string }) => ({ cookie: csrf.cookie })],
    ['the header but no cookie', (csrf: { token: string; cookie: string }) => ({ 'x-csrf-token': csrf.token })],
    ['a header that does not match the cookie', (csrf: { token: string; cookie: string }) => ({ cookie: csrf.cookie, 'x-csrf-token': csrf.token.slice(0, -1) + (csrf.token.endsWith('A') ? 'B' : 'A') })],
    ['an empty header and an empty cookie', () => ({ cookie: 'dyn_csrf=', 'x-csrf-token': '' })],
  ])('is refused a write (403) with %s, and nothing is written', async (_label, csrfHeaders) => {
    const { access } = await cookieLogin();
    const csrf = await csrfToken();
    const headers: Record<string, string> = csrfHeaders(csrf);
    headers.cookie = [access, headers.cookie].filter(Boolean).join('; ');
    const body = groupBody();
    const res = await t.api('POST', '/api/groups', { headers, body });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ success: false, error: CSRF_ERROR });
    expect(await groupExists(body.name)).toBe(false);
  });

  it('is refused (403, not a 500) a header of the same length in characters but not in bytes', async () => {
    const { access } = await cookieLogin();
    const res = await t.api('POST', '/api/groups', { headers: { cookie: `${access}; dyn_csrf=${'a'.repeat(43)}`, 'x-csrf-token': `${'a'.repeat(42)}\u00e9` }, body: groupBody() });
    expect(res.status, res.text).toBe(403);
    expect(res.body).toEqual({ success: false, error: CSRF_ERROR });
  });

  it('a password change in the profile keeps the browser session signed in with new cookies', async () => {
    const user = await createUserWith(t, ['view']);
    const { access } = await cookieLogin(user.login, user.password);
    const csrf = await csrfToken();
    const res = await t.api('PUT', '/api/profile', { headers: { cookie: `${access}; ${csrf.cookie}`, 'x-csrf-token': csrf.token }, body: { password: 'a-new-password-1', currentPassword: user.password } });
    expect(res.status, res.text).toBe(200);
    const renewed = setCookies(res.headers);
    expect(renewed.get('dyn_access')?.value).toBe(res.body.data.tokens.accessToken);
    expect(renewed.get('dyn_refresh')?.value).toBe(res.body.data.tokens.refreshToken);
    expect((await t.api('GET', '/api/profile', { headers: { cookie: access } })).status).toBe(401);
    expect((await t.api('GET', '/api/profile', { headers: { cookie: `dyn_access=${renewed.get('dyn_access')?.value}` } })).status).toBe(200);
  });

  it('writes (201) with the token in X-CSRF-Token matching the dyn_csrf cookie', async () => {
    const { access } = await cookieLogin();
    const csrf = await csrfToken();
    const body = groupBody();
    const res = await t.api('POST', '/api/groups', { headers: { cookie: `${access}; ${csrf.cookie}`, 'x-csrf-token': csrf.token }, body });
    expect(res.status).toBe(201);
    expect(res.body.data.name).toBe(body.name);
    expect(await groupExists(body.name)).toBe(true);
  });

  it('PUT and DELETE need the token too', async () => {
    const created = await t.api('POST', '/api/groups', { token: admin, body: groupBody() });
    const id = created.body.data._id;
    const { access } = await cookieLogin();
    const csrf = await csrfToken();
    expect((await t.api('PUT', `/api/groups/${id}`, { headers: { cookie: access }, body: { permissions: ['view'] } })).status).toBe(403);
    expect((await t.api('DELETE', `/api/groups/${id}`, { headers: { cookie: access } })).status).toBe(403);
    expect((await t.api('GET', `/api/groups/${id}`, { token: admin })).body.data.permissions).toEqual([]);
    const withToken = { cookie: `${access}; ${csrf.cookie}`, 'x-csrf-token': csrf.token };
    expect((await t.api('PUT', `/api/groups/${id}`, { headers: withToken, body: { permissions: ['view'] } })).status).toBe(200);
    expect((await t.api('DELETE', `/api/groups/${id}`, { headers: withToken })).status).toBe(200);
  });

  it('logout by cookie needs the token, and then clears the cookies', async () => {
    // Logout ends every session of the user, so not the admin whose token the other tests use.
    const user = await createUserWith(t, ['view']);
    const { access } = await cookieLogin(user.login, user.password);
    const csrf = await csrfToken();
    expect((await t.api('POST', '/api/auth/logout', { headers: { cookie: access } })).status).toBe(403);
    const res = await t.api('POST', '/api/auth/logout', { headers: { cookie: `${access}; ${csrf.cookie}`, 'x-csrf-token': csrf.token } });
    expect(res.status).toBe(200);
    const cleared = setCookies(res.headers);
    expect(cleared.get('dyn_access')?.value).toBe('');
    expect(cleared.get('dyn_refresh')?.value).toBe('');
    expect((await t.api('GET', '/api/users', { headers: { cookie: access } })).status).toBe(401);
  });

  it('refresh by cookie needs the token too', async () => {
    const { refresh } = await cookieLogin();
    const csrf = await csrfToken();
    const refused = await t.api('POST', '/api/auth/refresh', { headers: { cookie: refresh } });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ success: false, error: CSRF_ERROR });
    const res = await t.api('POST', '/api/auth/refresh', { headers: { cookie: `${refresh}; ${csrf.cookie}`, 'x-csrf-token': csrf.token } });
    expect(res.status).toBe(200);
    expect(setCookies(res.headers).get('dyn_access')?.value).toBe(res.body.data.accessToken);
  });
});

describe('header-authenticated requests', () => {
  it('a Bearer-authenticated write needs no CSRF token', async () => {
    const res = await t.api('POST', '/api/groups', { token: admin, body: groupBody() });
    expect(res.status).toBe(201);
  });

  it('an API-key-authenticated write needs no CSRF token', async () => {
    const key = await t.api('POST', '/api/api-keys', { token: admin, body: { name: 'csrf-key', permissions: ['manage_users'] } });
    expect(key.status).toBe(201);
    const res = await t.api('POST', '/api/groups', { apiKey: key.body.data.key, body: groupBody() });
    expect(res.status).toBe(201);
  });

  it('a Bearer header wins over a session cookie, so no CSRF token is needed', async () => {
    const { access } = await cookieLogin();
    const res = await t.api('POST', '/api/groups', { token: admin, headers: { cookie: access }, body: groupBody() });
    expect(res.status).toBe(201);
  });
});
