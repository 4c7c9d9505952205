import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

let t: TestServer;
let admin: string;
beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
});
afterAll(async () => {
  await t.close();
});

type Entry = { _id: string; action: string; message: string; source: string; ip: string | null; userId: string | null; method: string | null; path: string | null; statusCode: number | null; createdAt: string };

async function logs(query = '') {
  const res = await t.api('GET', `/api/dashboard/logs${query}`, { token: admin });
  expect(res.status, res.text).toBe(200);
  return res.body as { success: true; data: Entry[]; meta: { page: number; limit: number; total: number } };
}

async function failLogin(login: string, headers: Record<string, string> = {}) {
  const res = await t.api('POST', '/api/auth/login', { body: { login, password: 'wrong-password' }, headers });
  expect(res.status).toBe(401);
}

describe('what is recorded', () => {
  it('login, login_failed and logout carry the client ip, method, path and user', async () => {
    const user = await createUserWith(t, ['view']);
    await failLogin(user.login);
    const session = await t.login(user.login, user.password);
    expect((await t.api('POST', '/api/auth/logout', { token: session.accessToken })).status).toBe(200);

    const entries = (await logs(`?search=${user.login}&limit=100`)).data.filter((e) => e.userId === user.userId);
    const byAction = (action: string) => entries.filter((e) => e.action === action);
    expect(byAction('login_failed')[0]).toMatchObject({
      message: `Failed login for "${user.login}"`,
      source: 'auth',
      ip: '127.0.0.1',
      method: 'POST',
      path: '/api/auth/login',
      statusCode: 401,
    });
    expect(byAction('login')[0]).toMatchObject({ message: `User ${user.login} signed in`, ip: '127.0.0.1', method: 'POST', path: '/api/auth/login', statusCode: 200 });
    const logout = await logs('?action=logout&limit=100');
    expect(logout.data.find((e) => e.userId === user.userId)).toMatchObject({ source: 'auth', ip: '127.0.0.1', method: 'POST', path: '/api/auth/logout', statusCode: 200 });
  });

  it('a failed login for an unknown login is recorded without a user', async () => {
    await failLogin('ghost-login-1');
    const [entry] = (await logs('?search=ghost-login-1')).data;
    expect(entry).toMatchObject({ action: 'login_failed', userId: null, ip: '127.0.0.1' });
  });

  it('lists newest first with createdAt as a timestamp', async () => {
    for (const n of [1, 2, 3]) await failLogin(`order-probe-${n}`);
    const { data } = await logs('?search=order-probe');
    expect(data.map((e) => e.message)).toEqual(['Failed login for "order-probe-3"', 'Failed login for "order-probe-2"', 'Failed login for "order-probe-1"']);
    const times = data.map((e) => Date.parse(e.createdAt));
    expect(times.every((time) => Number.isFinite(time))).toBe(true);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });
});

describe('querying', () => {
  it('pages with page and limit, reporting them and the total in meta', async () => {
    for (const n of [1, 2, 3, 4, 5]) await failLogin(`page-probe-${n}`);
    const first = await logs('?search=page-probe&limit=2');
    expect(first.meta).toEqual({ page: 1, limit: 2, total: 5 });
    expect(first.data.map((e) => e.message)).toEqual(['Failed login for "page-probe-5"', 'Failed login for "page-probe-4"']);
    const third = await logs('?search=page-probe&limit=2&page=3');
    expect(third.meta).toEqual({ page: 3, limit: 2, total: 5 });
    expect(third.data.map((e) => e.message)).toEqual(['Failed login for "page-probe-1"']);
    const beyond = await logs('?search=page-probe&limit=2&page=9');
    expect(beyond.data).toEqual([]);
    expect(beyond.meta.total).toBe(5);
  });

  it('filters by exact action', async () => {
    const { data, meta } = await logs('?action=login&limit=100');
    expect(meta.total).toBeGreaterThan(0);
    expect(data.every((e) => e.action === 'login')).toBe(true);
    expect((await logs('?action=log')).meta.total).toBe(0);
  });

  it.each([
    ['message', 'search-msg-probe', (e: Entry) => e.message.includes('search-msg-probe')],
    ['action', 'login_fail', (e: Entry) => e.action === 'login_failed'],
    ['source', 'auth', (e: Entry) => [e.message, e.action, e.source, e.ip].some((v) => v?.toLowerCase().includes('auth'))],
    ['ip', '127.0.0', (e: Entry) => [e.message, e.ip].some((v) => v?.includes('127.0.0'))],
  ])('searches over %s, case-insensitively', async (_field, term, matches) => {
    await failLogin('search-msg-probe');
    const { data, meta } = await logs(`?search=${encodeURIComponent(term.toUpperCase())}&limit=100`);
    expect(meta.total).toBeGreaterThan(0);
    expect(data.every(matches)).toBe(true);
  });

  it('combines action and search', async () => {
    await failLogin('combo-probe');
    const { data } = await logs('?action=login_failed&search=combo-probe');
    expect(data).toHaveLength(1);
    expect((await logs('?action=login&search=combo-probe')).data).toEqual([]);
  });

  it.each([
    ['$ne', 'dollar$ne-probe'],
    ['.*', 'dot.*star-probe'],
    ['(', 'paren(-probe'],
  ])('searches for %s literally, not as an operator or pattern', async (term, login) => {
    await failLogin(login);
    const { data } = await logs(`?search=${encodeURIComponent(term)}&limit=100`);
    expect(data.map((e) => e.message)).toEqual([`Failed login for "${login}"`]);
  });

  it.each([
    ['an unknown parameter', '?sort=asc', 'Unknown query parameter "sort"'],
    ['an operator-shaped parameter', '?search[$ne]=x', 'Unknown query parameter "search[$ne]"'],
    ['a repeated parameter', '?action=login&action=logout', 'Query parameter "action" must be given once'],
    ['a non-numeric limit', '?limit=ten', 'Query parameter "limit" must be a positive integer'],
    ['page 0', '?page=0', 'Query parameter "page" must be a positive integer'],
  ])('refuses %s with 400', async (_label, query, error) => {
    const res = await t.api('GET', `/api/dashboard/logs${query}`, { token: admin });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error });
  });
});

describe('access', () => {
  it.each([
    ['view_logs', 200],
    ['view', 403],
    ['manage_users', 403],
  ] as const)('a user with %s gets %i', async (permission, status) => {
    const user = await createUserWith(t, [permission]);
    const res = await t.api('GET', '/api/dashboard/logs', { token: user.token });
    expect(res.status).toBe(status);
    if (status === 403) expect(res.body).toEqual({ success: false, error: 'Forbidden: requires view_logs' });
  });

  it('without credentials is a 401', async () => {
    expect((await t.api('GET', '/api/dashboard/logs')).status).toBe(401);
  });
});

describe('client ip behind a proxy', () => {
  it('takes the first X-Forwarded-For hop from a trusted peer, and ignores the header once the peer is not trusted', async () => {
    const xff = { 'x-forwarded-for': '203.0.113.7, 10.0.0.1' };
    await failLogin('xff-probe-trusted', xff);
    expect((await logs('?search=xff-probe-trusted')).data[0]?.ip).toBe('203.0.113.7');
    expect((await logs('?search=203.0.113.7')).data.map((e) => e.message)).toEqual(['Failed login for "xff-probe-trusted"']);

    await failLogin('xff-probe-garbage', { 'x-forwarded-for': 'not-an-address' });
    expect((await logs('?search=xff-probe-garbage')).data[0]?.ip).toBe('127.0.0.1');

    const put = await t.api('PUT', '/api/settings', { token: admin, body: { trustedProxies: ['10.9.9.9'] } });
    expect(put.status).toBe(200);
    try {
      await failLogin('xff-probe-untrusted', xff);
      expect((await logs('?search=xff-probe-untrusted')).data[0]?.ip).toBe('127.0.0.1');
    } finally {
      await t.api('PUT', '/api/settings', { token: admin, body: { trustedProxies: ['127.0.0.0/8', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '::1', 'fc00::/7'] } });
    }
  });
});
