import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, startTestServer, type ApiResponse, type TestServer } from '../helpers/test-server.ts';

/**
 * Malformed, oversized and hostile input, across routes: every case is a 4xx in the error
 * shape, and none of them writes anything.
 */
let t: TestServer;
let admin: string;
beforeAll(async () => {
  t = await startTestServer({ BODY_LIMIT: '1kb' });
  admin = await t.adminToken();
});
afterAll(async () => {
  await t.close();
});

function expectClientError(res: ApiResponse, status: number, error?: string | RegExp): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body.success).toBe(false);
  expect(typeof res.body.error).toBe('string');
  if (typeof error === 'string') expect(res.body.error).toBe(error);
  else if (error) expect(res.body.error).toMatch(error);
}

/** Everything a bad write could have touched, to compare before and after. */
async function snapshot() {
  const get = async (path: string) => {
    const res = await t.api('GET', path, { token: admin });
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  };
  const { logsCount: _logs, ...settings } = await get('/api/settings');
  return {
    settings,
    groups: await get('/api/groups?limit=100'),
    users: await get('/api/users?limit=100'),
    apiKeys: await get('/api/api-keys?limit=100'),
    profile: await get('/api/profile'),
  };
}

/** One representative write per route family; `raw` is the whole body text. */
const WRITES: Array<[string, string, string, boolean]> = [
  ['POST', '/api/auth/login', 'login', false],
  ['POST', '/api/groups', 'group create', true],
  ['POST', '/api/users', 'user create', true],
  ['POST', '/api/api-keys', 'API key create', true],
  ['PUT', '/api/settings', 'settings update', true],
  ['PUT', '/api/profile', 'profile update', true],
];

const nested = (levels: number, inner = '1') => '{"a":'.repeat(levels) + inner + '}'.repeat(levels);
const nestedArrays = (levels: number) => '['.repeat(levels) + '1' + ']'.repeat(levels);

describe('bodies that cannot be parsed', () => {
  it.each(WRITES)('%s %s: a body over BODY_LIMIT is a 413', async (method, path, _label, auth) => {
    const before = await snapshot();
    const res = await t.api(method, path, { ...(auth ? { token: admin } : {}), body: { name: 'x'.repeat(1100), login: 'admin', password: ADMIN_PASSWORD } });
    expectClientError(res, 413, 'Request body is larger than the limit of 1024 bytes');
    expect(await snapshot()).toEqual(before);
  });

  it('a body just under the limit is parsed', async () => {
    const res = await t.api('POST', '/api/groups', { token: admin, body: { name: 'under-limit', description: 'x'.repeat(900), permissions: [] } });
    expect(res.status, res.text).toBe(201);
  });

  it.each(WRITES)('%s %s: malformed JSON is a 400', async (method, path, _label, auth) => {
    const before = await snapshot();
    for (const raw of ['{"name": ', '{name: "x"}', "{'name': 'x'}", '{"name": "x",}', '{"a":1}{"b":2}']) {
      const res = await t.api(method, path, { ...(auth ? { token: admin } : {}), rawBody: raw });
      expectClientError(res, 400, 'Malformed JSON body');
    }
    for (const raw of ['"admin"', '42', 'null', 'true']) {
      const res = await t.api(method, path, { ...(auth ? { token: admin } : {}), rawBody: raw });
      expectClientError(res, 400, 'Malformed JSON body: expected an object or an array');
    }
    expect(await snapshot()).toEqual(before);
  });
});

describe('requests Node refuses before the API sees them', () => {
  /** Sends raw bytes and reads the whole answer until the server closes the connection. */
  const raw = (bytes: string) =>
    new Promise<string>((resolve, reject) => {
      const url = new URL(t.url);
      const socket = connect(Number(url.port), url.hostname, () => socket.end(bytes));
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
      socket.on('close', () => resolve(answer));
      // The server closes as soon as it has answered, while a long request is still being sent: a reset after the answer.
      socket.on('error', (error) => (answer ? resolve(answer) : reject(error)));
    });

  it.each([
    ['a request line over 16 kB', `GET /api/x/${'a'.repeat(17_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, '431 Request Header Fields Too Large', 'Request header fields too large: the request line and headers must fit in 16 kB'],
    ['bytes that are not HTTP', 'HELLO THERE\r\n\r\n', '400 Bad Request', 'Malformed HTTP request'],
  ])('answers %s with the API error shape', async (_label, bytes, status, error) => {
    const answer = await raw(bytes);
    expect(answer.startsWith(`HTTP/1.1 ${status}\r\n`), answer.slice(0, 200)).toBe(true);
    expect(answer).toContain('Content-Type: application/json; charset=utf-8');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ success: false, error });
  });
});

describe('hostile keys and shapes', () => {
  const FORBIDDEN = /forbidden key/;

  it.each([
    ['a top-level __proto__ key', '{"name":"p1","permissions":[],"__proto__":{"isSystem":true}}'],
    ['a nested __proto__ key', '{"name":"p2","permissions":[],"description":{"x":{"__proto__":{"a":1}}}}'],
    ['a __proto__ key inside an array', '{"name":"p3","permissions":[{"__proto__":{"a":1}}]}'],
    ['a top-level constructor key', '{"name":"p4","permissions":[],"constructor":1}'],
    ['a constructor.prototype pair', '{"name":"p5","permissions":[],"constructor":{"prototype":{"a":1}}}'],
    ['a nested prototype key', '{"name":"p6","permissions":[],"x":[{"y":{"prototype":true}}]}'],
  ])('a body with %s is a 400 that names the problem', async (_label, raw) => {
    const before = await snapshot();
    for (const [method, path, , auth] of WRITES) {
      const res = await t.api(method, path, { ...(auth ? { token: admin } : {}), rawBody: raw });
      expectClientError(res, 400, FORBIDDEN);
    }
    expect(await snapshot()).toEqual(before);
    expect(({} as Record<string, unknown>).isSystem).toBeUndefined();
  });

  it('a forbidden key names where it was found', async () => {
    const res = await t.api('PUT', '/api/settings', { token: admin, rawBody: '{"trustedProxies":[{"constructor":1}]}' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      error: 'Request body contains the forbidden key "constructor"',
      details: [{ field: 'trustedProxies[0].constructor', message: 'is a forbidden key' }],
    });
  });

  it.each([
    ['objects', nested(33)],
    ['arrays', nestedArrays(40)],
    ['objects and arrays mixed', nested(20, nestedArrays(20))],
  ])('nesting deeper than 32 levels of %s is a 400', async (_label, deep) => {
    const before = await snapshot();
    for (const [method, path, , auth] of WRITES) {
      const res = await t.api(method, path, { ...(auth ? { token: admin } : {}), rawBody: `{"name":"deep","x":${deep}}` });
      expectClientError(res, 400, 'Request body is nested more than 32 levels deep');
    }
    expect(await snapshot()).toEqual(before);
  });

  it('nesting within the limit reaches validation instead', async () => {
    const res = await t.api('POST', '/api/groups', { token: admin, rawBody: `{"name":"shallow","permissions":[],"x":${nested(31)}}` });
    expectClientError(res, 400, 'Invalid request body: x is not an allowed field');
  });

  it.each([
    ['an operator as login', { login: { $ne: null }, password: 'whatever' }],
    ['an operator as password', { login: 'admin', password: { $gt: '' } }],
    ['a regex-shaped login', { login: { $regex: '.*' }, password: ADMIN_PASSWORD }],
    ['an array as login', { login: ['admin'], password: ADMIN_PASSWORD }],
  ])('login with %s is a 400, never a sign-in', async (_label, body) => {
    const res = await t.api('POST', '/api/auth/login', { body });
    expectClientError(res, 400, /^Invalid request body: /);
    expect(res.text).not.toMatch(/accessToken/);
  });

  it.each([
    ['POST', '/api/groups', { name: { $ne: null }, permissions: [] }],
    ['POST', '/api/api-keys', { name: 'k', permissions: { $in: ['manage_users'] } }],
    ['PUT', '/api/settings', { lockoutThreshold: { $gt: 0 } }],
    ['POST', '/api/users', { login: { $ne: 'x' }, password: 'user-password-1' }],
  ])('%s %s with operator-shaped values is a 400', async (method, path, body) => {
    const before = await snapshot();
    expectClientError(await t.api(method, path, { token: admin, body }), 400, /^Invalid (request body|settings): /);
    expect(await snapshot()).toEqual(before);
  });
});

describe('query parameters of list routes', () => {
  const LISTS = ['/api/users', '/api/groups', '/api/api-keys', '/api/dashboard/logs'];

  it.each(LISTS)('%s refuses an operator-shaped parameter as unknown', async (path) => {
    for (const query of ['search[$ne]=x', 'search[$regex]=.*', 'page[$gt]=1']) {
      const res = await t.api('GET', `${path}?${query}`, { token: admin });
      expectClientError(res, 400, `Unknown query parameter "${decodeURIComponent(query.split('=')[0] as string)}"`);
    }
  });

  it.each(LISTS)('%s refuses an unknown parameter', async (path) => {
    expectClientError(await t.api('GET', `${path}?sort=-name`, { token: admin }), 400, 'Unknown query parameter "sort"');
  });

  it.each(LISTS)('%s searches for an operator-shaped term literally', async (path) => {
    for (const term of ['$ne', '{"$ne":null}', '.*']) {
      const res = await t.api('GET', `${path}?search=${encodeURIComponent(term)}`, { token: admin });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([]);
      expect(res.body.meta.total).toBe(0);
    }
  });

  it.each(LISTS)('%s refuses a repeated parameter', async (path) => {
    for (const query of ['page=1&page=2', 'limit=5&limit=5', 'search=a&search=b']) {
      const name = query.split('=')[0];
      expectClientError(await t.api('GET', `${path}?${query}`, { token: admin }), 400, `Query parameter "${name}" must be given once`);
    }
  });

  it.each([
    ['limit=abc', 'limit'],
    ['limit=0', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=1e2', 'limit'],
    ['page=0', 'page'],
    ['page=-3', 'page'],
    ['page=two', 'page'],
  ])('?%s is a 400', async (query, name) => {
    for (const path of LISTS) {
      expectClientError(await t.api('GET', `${path}?${query}`, { token: admin }), 400, `Query parameter "${name}" must be a positive integer`);
    }
  });

  it.each([['page=9999999999', 'page'], ['limit=12345678901', 'limit']])('?%s is a 400 saying how large it may be', async (query, name) => {
    for (const path of LISTS) {
      expectClientError(await t.api('GET', `${path}?${query}`, { token: admin }), 400, `Query parameter "${name}" must be at most 999999999`);
    }
  });

  it.each(LISTS)('%s clamps a huge limit to maxPageSize in meta', async (path) => {
    const res = await t.api('GET', `${path}?limit=100000`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.meta.limit).toBe(100);
  });

  it('an overlong parameter value is a 400', async () => {
    expectClientError(await t.api('GET', `/api/users?search=${'x'.repeat(201)}`, { token: admin }), 400, 'Query parameter "search" is too long');
  });
});
