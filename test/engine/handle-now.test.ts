import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineRequest } from '../../src/runtime/engine.ts';
import { JsonText } from '../../src/runtime/json-text.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * engine.handleNow answers the reads it can without a promise (a record by id on a CRUD endpoint,
 * from the embedded store) and leaves everything else to engine.handle, before counting anything.
 * What it answers is what handle answers for the same request; test/http/fast-path.test.ts checks
 * the same over HTTP, byte for byte.
 */
let t: TestServer;
let admin: string;
let recordId: string;
let define: (body: Record<string, unknown>) => Promise<string>;
const PATH = '/api/now/items';

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  define = async (body: Record<string, unknown>): Promise<string> => {
    const res = await t.api('POST', '/api/endpoints', { token: admin, body: { accessType: 'public', schema: { title: { type: 'string' }, other: { type: 'reference', ref: PATH } }, ...body } });
    if (res.status !== 201) throw new Error(`endpoint create failed: ${res.status} ${res.text}`);
    return res.body.data._id as string;
  };
  await define({ name: 'now read', path: PATH, method: 'GET' });
  await define({ name: 'now write', path: PATH, method: 'POST' });
  await define({ name: 'now members', path: '/api/now/members', method: 'GET', accessType: 'authenticated' });
  await define({ name: 'now handler', path: '/api/now/hello', method: 'GET', handler: { enabled: true, code: 'async function handler() { return { status: 200, data: "hi" }; }' } });
  recordId = (await t.api('POST', PATH, { body: { title: 'now' } })).body.data._id as string;
});
afterAll(async () => {
  await t.close();
});

const engine = () => t.server.services.engine;
const request = (method: string, path: string, query: Record<string, string> = {}): EngineRequest => ({
  method,
  path,
  headers: { host: '127.0.0.1' },
  query,
  body: undefined,
  ip: '127.0.0.1',
  acceptsJsonText: true,
  source: 'http',
});
const text = (body: unknown): string => (body instanceof JsonText ? body.text : JSON.stringify(body));

describe('engine.handleNow', () => {
  it.each([
    ['a record', 'GET', (): string => `${PATH}/${recordId}`, {}, 200],
    ['HEAD of a record', 'HEAD', (): string => `${PATH}/${recordId}`, {}, 200],
    ['a record that does not exist', 'GET', (): string => `${PATH}/0123456789abcdef01234567`, {}, 404],
    ['an id that is not an id', 'GET', (): string => `${PATH}/nope`, {}, 404],
    ['an unknown query parameter', 'GET', (): string => `${PATH}/${recordId}`, { bogus: '1' }, 400],
    ['a record of an endpoint that wants credentials', 'GET', (): string => '/api/now/members/0123456789abcdef01234567', {}, 401],
  ] as const)('answers %s at once, as handle does', async (_name, method, path, query, status) => {
    const now = engine().handleNow(request(method, path(), query));
    const later = await engine().handle(request(method, path(), query));
    expect(now).not.toBeNull();
    expect(now?.status).toBe(status);
    expect(later.status).toBe(status);
    expect(text(now?.body)).toBe(text(later.body));
    expect(now?.headers).toEqual(later.headers);
  });

  it.each([
    ['the list', 'GET', PATH, {}],
    ['a record with populate', 'GET', `${PATH}/RECORD`, { populate: 'true' }],
    ['a handler', 'GET', '/api/now/hello', {}],
    ['a write', 'POST', PATH, {}],
    ['a path nothing serves', 'GET', '/api/now/none/0123456789abcdef01234567', {}],
  ] as const)('leaves %s to handle', (_name, method, path, query) => {
    expect(engine().handleNow(request(method, path.replace('RECORD', recordId), query))).toBeNull();
  });

  it('counts what it answers once, and what it leaves to handle only there', async () => {
    const path = '/api/now/counted';
    const id = await define({ name: 'now counted', path, method: 'GET' });
    await define({ name: 'now counted write', path, method: 'POST' });
    const record = (await t.api('POST', path, { body: {} })).body.data._id as string;
    for (let i = 0; i < 3; i++) expect(engine().handleNow(request('GET', `${path}/${record}`))?.status).toBe(200);
    expect(engine().handleNow(request('GET', path))).toBeNull();
    expect((await engine().handle(request('GET', path))).status).toBe(200);
    await expect.poll(async () => (await t.api('GET', `/api/endpoints/${id}`, { token: admin })).body.data.callCount, { timeout: 5000, interval: 100 }).toBe(4);
    // Still 4 a moment later: nothing was counted twice.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect((await t.api('GET', `/api/endpoints/${id}`, { token: admin })).body.data.callCount).toBe(4);
  });
});
