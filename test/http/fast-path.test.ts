import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/http/app.ts';
import { dynamicFastPath } from '../../src/http/fast-path.ts';
import { RateLimiter } from '../../src/services/rate-limiter.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * Dynamic GET and HEAD requests are answered by the fast path (src/http/fast-path.ts) instead of
 * the Koa chain. Over the test server's services, two more servers: the fast path in front of Koa
 * (as the server runs them; it notes what it hands to Koa), and the Koa application alone, each
 * with a rate limiter of its own so both count from zero. Every request is sent to both as the
 * same bytes over a raw socket, and the answers must be the same bytes — status line, every
 * header in order, body — but for `Date`.
 */
let t: TestServer;
let koa: Server;
let koaPort: number;
let fast: Server;
let fastPort: number;
const handedToKoa: string[] = [];
let admin: string;
const ORIGIN = 'https://app.example.com';

interface Raw {
  method?: string;
  path: string;
  headers?: Record<string, string>;
}

/** Sends the request as written and returns the whole response, `Date` line removed. */
async function rawRequest(port: number, request: Raw): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const lines = [`${request.method ?? 'GET'} ${request.path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(request.headers ?? {}).map(([n, v]) => `${n}: ${v}`), 'Connection: close'];
  // Not end(): a client that half-closes may lose a slow answer; Connection: close ends it.
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r\nDate: [^\r]*/, '');
}

async function sameAnswer(request: Raw): Promise<string> {
  const quick = await rawRequest(fastPort, request);
  const slow = await rawRequest(koaPort, request);
  expect(quick, `${request.method ?? 'GET'} ${request.path}`).toBe(slow);
  return quick;
}

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

const statusOf = (raw: string): number => Number(raw.slice(9, 12));
const headerOf = (raw: string, name: string): string | undefined => new RegExp(`\r\n${name}: ([^\r]*)`, 'i').exec(raw)?.[1];
const bodyOf = (raw: string): string => raw.slice(raw.indexOf('\r\n\r\n') + 4);

async function define(body: Record<string, unknown>): Promise<string> {
  const res = await t.api('POST', '/api/endpoints', { token: admin, body: { accessType: 'public', schema: {}, ...body } });
  if (res.status !== 201) throw new Error(`endpoint create failed: ${res.status} ${res.text}`);
  return res.body.data._id as string;
}

let itemId: string;
let userToken: string;
let apiKey: string;
let cookie: string;

beforeAll(async () => {
  t = await startTestServer({ CORS_ORIGINS: ORIGIN });
  koa = createServer(createApp({ ...t.server.services, rateLimiter: new RateLimiter() }).callback());
  koaPort = await listen(koa);
  const services = { ...t.server.services, rateLimiter: new RateLimiter() };
  const koaBehind = createApp(services).callback();
  fast = createServer(
    dynamicFastPath(services, (req, res) => {
      handedToKoa.push(`${req.method} ${req.url}`);
      void koaBehind(req, res);
    }),
  );
  fastPort = await listen(fast);
  admin = await t.adminToken();

  await define({ name: 'fast items read', path: '/api/fast/items', method: 'GET', schema: { title: { type: 'string', required: true }, n: { type: 'number' } } });
  await define({ name: 'fast items write', path: '/api/fast/items', method: 'POST', schema: { title: { type: 'string', required: true }, n: { type: 'number' } } });
  await define({ name: 'fast inbox', path: '/api/fast/inbox', method: 'POST' });
  await define({ name: 'fast members', path: '/api/fast/members', method: 'GET', accessType: 'authenticated' });
  const group = await t.api('POST', '/api/groups', { token: admin, body: { name: 'fast-readers', permissions: [] } });
  await define({ name: 'fast staff', path: '/api/fast/staff', method: 'GET', accessType: 'group', allowedGroupIds: [group.body.data._id] });
  await define({ name: 'fast intranet', path: '/api/fast/intranet', method: 'GET', networkAccess: { enabled: true, allowedIpRanges: ['203.0.113.9'] } });
  await define({ name: 'fast handler', path: '/api/fast/hello', method: 'GET', handler: { enabled: true, code: `async function handler(req) { return { status: Number(req.query.status ?? 200), data: { hello: req.query.name ?? 'world' } }; }` } });

  const created = await t.api('POST', '/api/fast/items', { body: { title: 'Grüße, "quoted" ✓', n: 1.5 } });
  itemId = created.body.data._id;
  for (let i = 0; i < 3; i++) await t.api('POST', '/api/fast/items', { body: { title: `more ${i}`, n: i } });

  await t.api('POST', '/api/users', { token: admin, body: { login: 'fastuser', password: 'user-password-1', groupIds: [] } });
  userToken = (await t.login('fastuser', 'user-password-1')).accessToken;
  apiKey = (await t.api('POST', '/api/api-keys', { token: admin, body: { name: 'fast key', permissions: [] } })).body.data.key;
  const cookieLogin = await t.api('POST', '/api/auth/login', { body: { login: 'admin', password: 'admin-password-1', cookie: true } });
  cookie = /dyn_access=[^;]+/.exec(cookieLogin.headers.getSetCookie().join('\n'))?.[0] ?? '';
});

afterAll(async () => {
  await new Promise<void>((resolve) => koa.close(() => resolve()));
  await new Promise<void>((resolve) => fast.close(() => resolve()));
  await t.close();
});

describe('the fast path answers dynamic reads exactly as the Koa chain does', () => {
  it.each([
    ['a record by id', { path: '/api/fast/items/ITEM' }, 200],
    ['HEAD of a record: headers and length, no body', { method: 'HEAD', path: '/api/fast/items/ITEM' }, 200],
    ['a record that does not exist', { path: '/api/fast/items/0123456789abcdef01234567' }, 404],
    ['an id that is not an id', { path: '/api/fast/items/nope' }, 404],
    ['a path nothing serves', { path: '/api/fast/nothing-here' }, 404],
    ['a path outside /api nothing serves', { path: '/favicon.ico' }, 404],
    ['GET on a path served only by POST', { path: '/api/fast/inbox' }, 405],
    ['HEAD on a path served only by POST', { method: 'HEAD', path: '/api/fast/inbox' }, 405],
    ['the list', { path: '/api/fast/items' }, 200],
    ['a page of the list', { path: '/api/fast/items?limit=2&page=2&sort=-n' }, 200],
    ['a list filtered by a field', { path: '/api/fast/items?n=1.5' }, 200],
    ['an unknown query parameter', { path: '/api/fast/items/ITEM?bogus=1' }, 400],
    ['a bad page size', { path: '/api/fast/items?limit=abc' }, 400],
    ['a repeated query parameter', { path: '/api/fast/items?limit=1&limit=2' }, 400],
    ['a percent-encoded path', { path: '/api/fast/%69tems/ITEM' }, 200],
    ['malformed percent-encoding', { path: '/api/fast/items/%E0%A4%A' }, 404],
    ['an allowed origin gets CORS headers', { path: '/api/fast/items/ITEM', headers: { Origin: ORIGIN } }, 200],
    ['an origin not allowed gets none', { path: '/api/fast/items/ITEM', headers: { Origin: 'https://elsewhere.example' } }, 200],
    ['an authenticated endpoint without credentials', { path: '/api/fast/members' }, 401],
    ['an authenticated endpoint with a bad token', { path: '/api/fast/members', headers: { Authorization: 'Bearer not.a.jwt' } }, 401],
    ['an authenticated endpoint with an unsupported scheme', { path: '/api/fast/members', headers: { Authorization: 'Basic YTpi' } }, 401],
    ['an authenticated endpoint with a bad API key', { path: '/api/fast/members', headers: { 'X-API-Key': 'dyn_000000000000_nope' } }, 401],
    ['an authenticated endpoint with a good token', { path: '/api/fast/members', headers: { Authorization: 'Bearer USER' } }, 200],
    ['an authenticated endpoint with an API key', { path: '/api/fast/members', headers: { 'X-API-Key': 'APIKEY' } }, 200],
    ['an authenticated endpoint with an API key as Authorization', { path: '/api/fast/members', headers: { Authorization: 'ApiKey APIKEY' } }, 200],
    ['an authenticated endpoint with the session cookie', { path: '/api/fast/members', headers: { Cookie: 'COOKIE' } }, 200],
    ['a public endpoint with a bad token', { path: '/api/fast/items/ITEM', headers: { Authorization: 'Bearer not.a.jwt' } }, 200],
    ['a group endpoint for a user outside the group', { path: '/api/fast/staff', headers: { Authorization: 'Bearer USER' } }, 403],
    ['a group endpoint for an API key', { path: '/api/fast/staff', headers: { 'X-API-Key': 'APIKEY' } }, 403],
    ['a network rule that denies the caller', { path: '/api/fast/intranet' }, 403],
    ['a network rule that allows the forwarded caller', { path: '/api/fast/intranet', headers: { 'X-Forwarded-For': '203.0.113.9' } }, 200],
    ['a record of an authenticated endpoint without credentials', { path: '/api/fast/members/0123456789abcdef01234567' }, 401],
    ['a record of an authenticated endpoint with a good token', { path: '/api/fast/members/0123456789abcdef01234567', headers: { Authorization: 'Bearer USER' } }, 404],
    ['a record of a group endpoint for a user outside the group', { path: '/api/fast/staff/0123456789abcdef01234567', headers: { Authorization: 'Bearer USER' } }, 403],
    ['a record behind a network rule that denies the caller', { path: '/api/fast/intranet/0123456789abcdef01234567' }, 403],
    ['a record with populate off', { path: '/api/fast/items/ITEM?populate=false' }, 200],
    ['a record with populate of a field that is no reference', { path: '/api/fast/items/ITEM?populate=title' }, 400],
    ['a handler', { path: '/api/fast/hello?name=fast' }, 200],
    ['a handler answering 204', { path: '/api/fast/hello?status=204' }, 204],
    ['a handler answering 418', { path: '/api/fast/hello?status=418' }, 418],
    ['OPTIONS (handed to Koa)', { method: 'OPTIONS', path: '/api/fast/items' }, 204],
    ['a CORS preflight (handed to Koa)', { method: 'OPTIONS', path: '/api/fast/items', headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'POST' } }, 204],
    ['a management route (handed to Koa)', { path: '/api/users' }, 401],
    ['the admin (handed to Koa)', { method: 'HEAD', path: '/admin/assets/none.js' }, 404],
    ['DELETE without an id (handed to Koa)', { method: 'DELETE', path: '/api/fast/items' }, 405],
  ] as const)('%s', async (_name, request, status) => {
    const fill = (text: string): string => text.replace('ITEM', itemId).replace('USER', userToken).replace('APIKEY', apiKey).replace('COOKIE', cookie);
    const method = 'method' in request ? request.method : 'GET';
    const path = fill(request.path);
    const answer = await sameAnswer({ method, path, headers: Object.fromEntries(Object.entries('headers' in request ? request.headers : {}).map(([n, v]) => [n, fill(v)])) });
    expect(statusOf(answer), answer).toBe(status);
    const handedOff = handedToKoa.includes(`${method} ${path}`);
    expect(handedOff).toBe(_name.includes('(handed to Koa)'));
  });

  it('sends the stored record in the API envelope with the security headers, once', async () => {
    const answer = await sameAnswer({ path: `/api/fast/items/${itemId}` });
    expect(JSON.parse(bodyOf(answer))).toMatchObject({ success: true, data: { _id: itemId, title: 'Grüße, "quoted" ✓', n: 1.5 } });
    expect(headerOf(answer, 'Content-Type')).toBe('application/json; charset=utf-8');
    expect(Number(headerOf(answer, 'Content-Length'))).toBe(Buffer.byteLength(bodyOf(answer)));
    expect(headerOf(answer, 'X-Content-Type-Options')).toBe('nosniff');
    expect(headerOf(answer, 'Content-Security-Policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(answer.match(/\r\nX-Frame-Options:/g)).toHaveLength(1);
  });

  it('a HEAD answer has the GET answer’s length and no body', async () => {
    const get = await sameAnswer({ path: `/api/fast/items/${itemId}` });
    const head = await sameAnswer({ method: 'HEAD', path: `/api/fast/items/${itemId}` });
    expect(headerOf(head, 'Content-Length')).toBe(headerOf(get, 'Content-Length'));
    expect(bodyOf(head)).toBe('');
  });

  it('a rate-limited client gets the same 429 with Retry-After', async () => {
    const on = await t.api('PUT', '/api/settings', { token: admin, body: { rateLimitEnabled: true, rateLimitMax: 2, rateLimitWindowSeconds: 60 } });
    expect(on.status).toBe(200);
    try {
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await sameAnswer({ path: `/api/fast/items/${itemId}`, headers: { 'X-Forwarded-For': '198.51.100.77' } }));
      expect(answers.map(statusOf)).toEqual([200, 200, 429]);
      expect(headerOf(answers[2]!, 'Retry-After')).toMatch(/^\d+$/);
      expect(headerOf(answers[1]!, 'RateLimit-Remaining')).toBe('0');
    } finally {
      await t.api('PUT', '/api/settings', { token: admin, headers: { 'X-Forwarded-For': '198.51.100.1' }, body: { rateLimitEnabled: false } });
    }
  });
});

describe('what the fast path still does', () => {
  it('counts the calls and audits them', async () => {
    const id = await define({ name: 'fast counted', path: '/api/fast/counted', method: 'GET' });
    await define({ name: 'fast counted write', path: '/api/fast/counted', method: 'POST' });
    const record = (await t.api('POST', '/api/fast/counted', { body: {} })).body.data._id as string;
    for (let i = 0; i < 2; i++) expect((await t.api('GET', '/api/fast/counted')).status).toBe(200);
    expect((await t.api('GET', `/api/fast/counted/${record}`)).status).toBe(200);
    expect((await t.api('GET', '/api/fast/counted/0123456789abcdef01234567')).status).toBe(404);
    const deadline = Date.now() + 5000;
    let count = 0;
    let calls: unknown[] = [];
    let errors: unknown[] = [];
    while (Date.now() < deadline) {
      count = (await t.api('GET', `/api/endpoints/${id}`, { token: admin })).body.data.callCount;
      calls = (await t.api('GET', '/api/dashboard/logs?action=api_call&search=%2Fapi%2Ffast%2Fcounted&limit=100', { token: admin })).body.data;
      errors = (await t.api('GET', '/api/dashboard/logs?action=error&search=%2Fapi%2Ffast%2Fcounted&limit=100', { token: admin })).body.data;
      if (count >= 4 && calls.length >= 4 && errors.length >= 1) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(count).toBe(4);
    expect(calls.map((c) => (c as { method: string }).method).sort()).toEqual(['GET', 'GET', 'GET', 'POST']);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ method: 'GET', statusCode: 404, source: 'endpoint' });
  });

  it('a bad token gets the same 401 as on any route', async () => {
    const dynamic = await t.api('GET', '/api/fast/members', { token: 'not.a.jwt' });
    const management = await t.api('GET', '/api/users', { token: 'not.a.jwt' });
    expect(dynamic.status).toBe(401);
    expect(management.status).toBe(401);
    expect(dynamic.body).toEqual(management.body);
  });

  it('serves a definition saved a moment ago, and stops serving a deleted one', async () => {
    const id = await define({ name: 'fast fresh', path: '/api/fast/fresh', method: 'GET' });
    expect((await t.api('GET', '/api/fast/fresh')).status).toBe(200);
    expect((await t.api('DELETE', `/api/endpoints/${id}`, { token: admin })).status).toBe(200);
    expect((await t.api('GET', '/api/fast/fresh')).status).toBe(404);
  });
});
