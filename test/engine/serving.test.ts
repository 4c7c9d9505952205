import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type ApiResponse, type TestServer } from '../helpers/test-server.ts';

/**
 * Serving defined endpoints over HTTP: a definition `M P` serves list/read/create/replace/merge/
 * delete on P and P/:id, records are shared by every definition with the same path, nested
 * `:param` paths keep their records apart, and list totals come from the per-path counter.
 */
let t: TestServer;
let admin: string;

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const NO_SUCH_ID = 'ffffffffffffffffffffffff';

async function define(path: string, methods: readonly string[], schema: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<void> {
  for (const method of methods) {
    const res = await t.api('POST', '/api/endpoints', {
      token: admin,
      body: { name: `${method} ${path}`, path, method, accessType: 'public', schema, ...extra },
    });
    if (res.status !== 201) throw new Error(`defining ${method} ${path} failed: ${res.status} ${res.text}`);
  }
}

function expectError(res: ApiResponse, status: number, error?: string | RegExp): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body.success).toBe(false);
  expect(typeof res.body.error).toBe('string');
  if (typeof error === 'string') expect(res.body.error).toBe(error);
  else if (error) expect(res.body.error).toMatch(error);
}

async function create(path: string, body: unknown): Promise<Record<string, any>> {
  const res = await t.api('POST', path, { body });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

async function total(path: string): Promise<number> {
  const res = await t.api('GET', `${path}?limit=1`);
  expect(res.status, res.text).toBe(200);
  return res.body.meta.total;
}

const BOOK = { title: { type: 'string', required: true }, pages: { type: 'number' }, note: { type: 'string' } };

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  await define('/api/books', METHODS, BOOK);
  await define('/api/paged', ['GET', 'POST'], { n: { type: 'number' }, label: { type: 'string' } });
  await define('/api/counted', ['GET', 'POST', 'DELETE'], { n: { type: 'number' } });
  await define('/api/shops/:shopId/items', ['GET', 'POST'], { name: { type: 'string' } });
  await define('/api/readonly', ['GET'], { name: { type: 'string' } });
  await define('/api/switched-off', ['GET', 'POST'], { name: { type: 'string' } }, { enabled: false });
  // 25 records, created one after the other: n = 1..25, label in reverse alphabetical order.
  for (let n = 1; n <= 25; n++) await create('/api/paged', { n, label: String.fromCharCode(122 - n) });
});
afterAll(async () => {
  await t.close();
});

describe('create and read', () => {
  it('POST creates a record and answers 201 with the flat record', async () => {
    const res = await t.api('POST', '/api/books', { body: { title: 'Dune', pages: 412 } });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      success: true,
      data: { _id: expect.stringMatching(/^[0-9a-f]{24}$/), title: 'Dune', pages: 412, createdAt: expect.any(String), updatedAt: expect.any(String) },
    });
    expect(new Date(res.body.data.createdAt).getTime()).not.toBeNaN();
    expect(res.body.data.updatedAt).toBe(res.body.data.createdAt);
  });

  it('GET /:id returns the same flat record', async () => {
    const created = await create('/api/books', { title: 'Emma', note: 'Austen' });
    const res = await t.api('GET', `/api/books/${created._id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, data: created });
  });

  it('records are shared by every definition on the same path: GET lists what POST created', async () => {
    const created = await create('/api/books', { title: 'Shared' });
    const list = await t.api('GET', '/api/books?limit=100');
    expect(list.body.data).toContainEqual(created);
  });
});

describe('list', () => {
  it('defaults to page 1 with 20 records and reports page, limit and total', async () => {
    const res = await t.api('GET', '/api/paged');
    expect(res.status, res.text).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.meta).toEqual({ page: 1, limit: 20, total: 25 });
    expect(res.body.data.map((r: any) => r.n)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('returns the next page and an empty page beyond the end, with the right total', async () => {
    const second = await t.api('GET', '/api/paged?page=2');
    expect(second.body.meta).toEqual({ page: 2, limit: 20, total: 25 });
    expect(second.body.data.map((r: any) => r.n)).toEqual([21, 22, 23, 24, 25]);
    const beyond = await t.api('GET', '/api/paged?page=7&limit=10');
    expect(beyond.status).toBe(200);
    expect(beyond.body).toEqual({ success: true, data: [], meta: { page: 7, limit: 10, total: 25 } });
  });

  it.each([
    ['limit=5', 5, 5],
    ['limit=100', 100, 25],
    ['limit=101', 100, 25],
    ['limit=100000', 100, 25],
  ])('?%s uses limit %i (clamped to maxPageSize 100)', async (query, limit, count) => {
    const res = await t.api('GET', `/api/paged?${query}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.meta).toEqual({ page: 1, limit, total: 25 });
    expect(res.body.data).toHaveLength(count);
  });

  it.each([
    ['n', 'ascending', (ns: number[]) => [...ns].sort((a, b) => a - b)],
    ['-n', 'descending', (ns: number[]) => [...ns].sort((a, b) => b - a)],
    ['label', 'by label (n descending)', (ns: number[]) => [...ns].sort((a, b) => b - a)],
  ])('sort=%s orders %s', async (sort, _label, expected) => {
    const res = await t.api('GET', `/api/paged?sort=${sort}&limit=100`);
    expect(res.status, res.text).toBe(200);
    const ns = res.body.data.map((r: any) => r.n);
    expect(ns).toEqual(expected(ns));
    expect(ns).toHaveLength(25);
  });

  it('sort=-createdAt lists the newest first', async () => {
    const res = await t.api('GET', '/api/paged?sort=-createdAt&limit=100');
    expect(res.status, res.text).toBe(200);
    const times = res.body.data.map((r: any) => Date.parse(r.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(times).toHaveLength(25);
  });

  it('sort by an unknown field is a 400 naming it', async () => {
    expectError(await t.api('GET', '/api/paged?sort=price'), 400, /sort: "price" is not a field/);
    expectError(await t.api('GET', '/api/paged?sort=-price'), 400, /"price"/);
  });

  it('an unknown query parameter is a 400', async () => {
    expectError(await t.api('GET', '/api/paged?colour=red'), 400, 'Unknown query parameter "colour"');
  });
});

describe('replace, merge and delete', () => {
  it('PUT replaces the whole data: omitted optional fields disappear', async () => {
    const created = await create('/api/books', { title: 'Draft', pages: 10, note: 'first' });
    const res = await t.api('PUT', `/api/books/${created._id}`, { body: { title: 'Final' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({ _id: created._id, title: 'Final', createdAt: created.createdAt, updatedAt: expect.any(String) });
    expect((await t.api('GET', `/api/books/${created._id}`)).body.data).toEqual(res.body.data);
  });

  it('PUT without a required field is a 400 and changes nothing', async () => {
    const created = await create('/api/books', { title: 'Kept', pages: 3 });
    expectError(await t.api('PUT', `/api/books/${created._id}`, { body: { pages: 4 } }), 400, 'Invalid record: title is required');
    expect((await t.api('GET', `/api/books/${created._id}`)).body.data).toEqual(created);
  });

  it('PATCH merges the body into the record', async () => {
    const created = await create('/api/books', { title: 'Merge me', pages: 10, note: 'keep' });
    const res = await t.api('PATCH', `/api/books/${created._id}`, { body: { pages: 11 } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({ ...created, pages: 11, updatedAt: expect.any(String) });
    expect((await t.api('GET', `/api/books/${created._id}`)).body.data).toEqual(res.body.data);
  });

  it('PATCH with an invalid value is a 400 and changes nothing', async () => {
    const created = await create('/api/books', { title: 'Stable', pages: 1 });
    expectError(await t.api('PATCH', `/api/books/${created._id}`, { body: { pages: 'many' } }), 400, 'Invalid record: pages must be a number');
    expect((await t.api('GET', `/api/books/${created._id}`)).body.data).toEqual(created);
  });

  it('DELETE returns the deleted record, which is then gone', async () => {
    const created = await create('/api/books', { title: 'Doomed' });
    const res = await t.api('DELETE', `/api/books/${created._id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, data: created });
    expectError(await t.api('GET', `/api/books/${created._id}`), 404, 'Record not found');
    expectError(await t.api('DELETE', `/api/books/${created._id}`), 404, 'Record not found');
  });
});

describe('ids and methods', () => {
  it.each([
    ['GET', undefined],
    ['PUT', { title: 'x' }],
    ['PATCH', { title: 'x' }],
    ['DELETE', undefined],
  ])('%s of an unknown or malformed id is a 404', async (method, body) => {
    for (const id of [NO_SUCH_ID, 'not-an-id', '123', 'FFFFFFFFFFFFFFFFFFFFFFFF']) {
      expectError(await t.api(method, `/api/books/${id}`, body ? { body } : {}), 404, 'Record not found');
    }
  });

  it.each(['PUT', 'PATCH', 'DELETE'])('%s without an id is a 405', async (method) => {
    const before = await total('/api/books');
    expectError(await t.api(method, '/api/books', { body: { title: 'x' } }), 405, new RegExp(`^${method} needs a record id`));
    expect(await total('/api/books')).toBe(before);
  });

  it('POST with an id is a 405 and creates nothing', async () => {
    const before = await total('/api/books');
    expectError(await t.api('POST', `/api/books/${NO_SUCH_ID}`, { body: { title: 'x' } }), 405, /^POST creates records on \/api\/books, without an id/);
    expect(await total('/api/books')).toBe(before);
  });

  it('a GET definition serves only GET: POST to it is a 405 naming the allowed methods', async () => {
    expect((await t.api('GET', '/api/readonly')).status).toBe(200);
    const post = await t.api('POST', '/api/readonly', { body: { name: 'x' } });
    expectError(post, 405, 'Method POST is not allowed on /api/readonly');
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(await total('/api/readonly')).toBe(0);
  });

  it('disabled definitions are not served', async () => {
    expectError(await t.api('GET', '/api/switched-off'), 404, 'No route for GET /api/switched-off');
    expectError(await t.api('POST', '/api/switched-off', { body: { name: 'x' } }), 404, 'No route for POST /api/switched-off');
    expectError(await t.api('GET', `/api/switched-off/${NO_SUCH_ID}`), 404);
  });
});

describe('nested resources', () => {
  it('records created under one parameter value are listed under that value only', async () => {
    const a = await create('/api/shops/shop-a/items', { name: 'apple' });
    await create('/api/shops/shop-a/items', { name: 'apricot' });
    const b = await create('/api/shops/shop-b/items', { name: 'banana' });

    const underA = await t.api('GET', '/api/shops/shop-a/items');
    expect(underA.body.meta.total).toBe(2);
    expect(underA.body.data.map((r: any) => r.name)).toEqual(['apple', 'apricot']);
    const underB = await t.api('GET', '/api/shops/shop-b/items');
    expect(underB.body.meta.total).toBe(1);
    expect(underB.body.data).toEqual([b]);
    expect((await t.api('GET', '/api/shops/shop-c/items')).body).toEqual({ success: true, data: [], meta: { page: 1, limit: 20, total: 0 } });
    expect((await t.api('GET', '/api/shops/shop-c/items?page=3')).body).toEqual({ success: true, data: [], meta: { page: 3, limit: 20, total: 0 } });
    expect((await t.api('GET', '/api/shops/shop-b/items?page=2&limit=1')).body).toEqual({ success: true, data: [], meta: { page: 2, limit: 1, total: 1 } });

    expect((await t.api('GET', `/api/shops/shop-a/items/${a._id}`)).body.data).toEqual(a);
    expectError(await t.api('GET', `/api/shops/shop-b/items/${a._id}`), 404, 'Record not found');
  });
});

describe('totals', () => {
  it('stay right after creates and deletes', async () => {
    expect(await total('/api/counted')).toBe(0);
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) ids.push((await create('/api/counted', { n }))._id);
    expect(await total('/api/counted')).toBe(5);
    for (const id of ids.slice(0, 2)) expect((await t.api('DELETE', `/api/counted/${id}`)).status).toBe(200);
    expect(await total('/api/counted')).toBe(3);
    // Deleting a record twice, or one that never existed, does not move the counter.
    expect((await t.api('DELETE', `/api/counted/${ids[0]}`)).status).toBe(404);
    expect((await t.api('DELETE', `/api/counted/${NO_SUCH_ID}`)).status).toBe(404);
    expect(await total('/api/counted')).toBe(3);
    const list = await t.api('GET', '/api/counted');
    expect(list.body.data.map((r: any) => r.n)).toEqual([2, 3, 4]);
    expect(list.body.meta).toEqual({ page: 1, limit: 20, total: 3 });
  });

  it('a failed create does not count', async () => {
    const before = await total('/api/counted');
    expect((await t.api('POST', '/api/counted', { body: { n: 'x' } })).status).toBe(400);
    expect(await total('/api/counted')).toBe(before);
  });
});
