import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * Field filters on list requests: `?field=value` and `?field[op]=value`, read as the field's
 * type, combined with paging (the total counts the matches), sorting, the JSON-text read path
 * and populate. Bad filters are a 400 naming the parameter.
 */
let t: TestServer;
let admin: string;
const ids: Record<string, string> = {};

const PRODUCT = {
  title: { type: 'string', required: true },
  price: { type: 'number' },
  active: { type: 'boolean' },
  tags: { type: 'array', items: { type: 'string' } },
  sizes: { type: 'array', items: { type: 'number' } },
  releasedAt: { type: 'datetime' },
  meta: { type: 'object', children: { color: { type: 'string' }, weight: { type: 'number' } } },
  extra: { type: 'json' },
  maker: { type: 'reference', ref: '/api/lf/makers' },
};

async function define(path: string, methods: readonly string[], schema: Record<string, unknown>): Promise<void> {
  for (const method of methods) {
    const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: `${method} ${path}`, path, method, accessType: 'public', schema } });
    if (res.status !== 201) throw new Error(`defining ${method} ${path} failed: ${res.status} ${res.text}`);
  }
}

async function create(path: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.api('POST', path, { body });
  expect(res.status, res.text).toBe(201);
  return res.body.data._id;
}

/** Titles of the matching records, in list order, and the total the list reports. */
async function titles(query: string): Promise<{ titles: string[]; total: number }> {
  const res = await t.api('GET', `/api/lf/products?${query}`);
  expect(res.status, res.text).toBe(200);
  return { titles: res.body.data.map((r: { title: string }) => r.title), total: res.body.meta.total };
}

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  await define('/api/lf/makers', ['GET', 'POST'], { name: { type: 'string' } });
  await define('/api/lf/products', ['GET', 'POST'], PRODUCT);
  ids.acme = await create('/api/lf/makers', { name: 'Acme' });
  ids.zeta = await create('/api/lf/makers', { name: 'Zeta' });
  ids.a = await create('/api/lf/products', { title: 'A', price: 5, active: true, tags: ['new', 'sale'], sizes: [1, 2], releasedAt: '2026-01-10', meta: { color: 'red', weight: 1.5 }, extra: { x: 1 }, maker: ids.acme });
  ids.b = await create('/api/lf/products', { title: 'B', price: 15, active: false, tags: ['sale'], sizes: [3], releasedAt: '2026-03-01T12:00:00Z', meta: { color: 'blue' }, maker: ids.zeta });
  ids.c = await create('/api/lf/products', { title: 'C', price: 25, active: true, tags: [], releasedAt: '2026-06-30', meta: { color: 'red', weight: 3 } });
  ids.d = await create('/api/lf/products', { title: 'D' });
});
afterAll(async () => {
  await t.close();
});

describe('filters by field type', () => {
  it.each([
    ['title=B', ['B']],
    ['title[ne]=B', ['A', 'C', 'D']],
    ['title[in]=A,C,X', ['A', 'C']],
    ['title[nin]=A,C', ['B', 'D']],
    ['title[gte]=C', ['C', 'D']],
    ['price=15', ['B']],
    ['price[gt]=5', ['B', 'C']],
    ['price[gte]=5&price[lt]=25', ['A', 'B']],
    ['price[lte]=15', ['A', 'B']],
    ['price[in]=5,25', ['A', 'C']],
    ['price[exists]=false', ['D']],
    ['price[exists]=true', ['A', 'B', 'C']],
    ['active=true', ['A', 'C']],
    ['active=false', ['B']],
    ['active[ne]=true', ['B', 'D']],
    ['tags[has]=sale', ['A', 'B']],
    ['tags[has]=new', ['A']],
    ['sizes[has]=3', ['B']],
    ['releasedAt[gte]=2026-03-01', ['B', 'C']],
    ['releasedAt[lt]=2026-03-01', ['A']],
    ['meta.color=red', ['A', 'C']],
    ['meta.weight[gt]=2', ['C']],
    ['meta.color=red&meta.weight[lt]=2', ['A']],
    ['meta[exists]=false', ['D']],
    ['extra[exists]=true', ['A']],
  ])('%s', async (query, expected) => {
    const result = await titles(query);
    expect(result.titles).toEqual(expected);
    expect(result.total).toBe(expected.length);
  });

  it('filters references by id, and by _id and record dates', async () => {
    expect((await titles(`maker=${ids.acme}`)).titles).toEqual(['A']);
    expect((await titles(`maker[in]=${ids.acme},${ids.zeta}`)).titles).toEqual(['A', 'B']);
    expect((await titles('maker[exists]=false')).titles).toEqual(['C', 'D']);
    expect((await titles(`_id=${ids.c}`)).titles).toEqual(['C']);
    expect((await titles(`_id[nin]=${ids.a},${ids.b}`)).titles).toEqual(['C', 'D']);
    expect((await titles('createdAt[gte]=2000-01-01')).titles).toEqual(['A', 'B', 'C', 'D']);
    expect((await titles('createdAt[lt]=2000-01-01')).total).toBe(0);
  });

  it('pages, sorts and populates filtered lists; the total counts the matches', async () => {
    const page = await t.api('GET', '/api/lf/products?price[exists]=true&sort=-price&limit=2&page=1');
    expect(page.body.data.map((r: { title: string }) => r.title)).toEqual(['C', 'B']);
    expect(page.body.meta).toEqual({ page: 1, limit: 2, total: 3 });
    const next = await t.api('GET', '/api/lf/products?price[exists]=true&sort=-price&limit=2&page=2');
    expect(next.body.data.map((r: { title: string }) => r.title)).toEqual(['A']);
    const populated = await t.api('GET', `/api/lf/products?maker=${ids.zeta}&populate=maker`);
    expect(populated.body.data).toEqual([expect.objectContaining({ title: 'B', maker: { id: ids.zeta, name: 'Zeta' } })]);
  });
});

describe('search', () => {
  it('matches a case-insensitive substring of any string field, with filters, and counts the matches', async () => {
    expect(await titles('search=b')).toEqual({ titles: ['B'], total: 1 });
    expect(await titles('search=')).toEqual({ titles: ['A', 'B', 'C', 'D'], total: 4 });
    expect(await titles('search=a&price[gt]=1')).toEqual({ titles: ['A'], total: 1 });
    expect(await titles('search=zzz')).toEqual({ titles: [], total: 0 });
    const makers = await t.api('GET', '/api/lf/makers?search=ACM');
    expect(makers.body.data.map((m: { name: string }) => m.name)).toEqual(['Acme']);
  });

  it('is a 400 when too long or when the endpoint has no string field', async () => {
    const long = await t.api('GET', `/api/lf/products?search=${'x'.repeat(201)}`);
    expect(long.status).toBe(400);
    expect(long.body.error).toBe('Query parameter "search" must be at most 200 characters');
    expect(long.body.details).toEqual([{ field: 'search', message: 'must be at most 200 characters' }]);
    await define('/api/lf/numbers', ['GET'], { n: { type: 'number' } });
    const none = await t.api('GET', '/api/lf/numbers?search=1');
    expect(none.status).toBe(400);
    expect(none.body.error).toBe('search: this endpoint has no string fields to search');
  });
});

describe('bad filters', () => {
  it.each([
    ['colour=red', 'Unknown query parameter "colour"'],
    ['meta.size=1', 'Unknown query parameter "meta.size"'],
    ['title[$ne]=x', 'Unknown query parameter "title[$ne]"'],
    ['price[foo]=1', 'Query parameter "price[foo]": unknown operator "foo"; use one of eq, ne, gt, gte, lt, lte, in, nin, has, exists'],
    ['price=cheap', 'Query parameter "price" must be a number'],
    ['price[in]=1,x', 'Query parameter "price[in]" must be a number'],
    // Written as JSON writes numbers, or refused: Number() alone reads these as 16, 3, 3 and 3.
    ['price=0x10', 'Query parameter "price" must be a number'],
    ['price[gt]=0b11', 'Query parameter "price[gt]" must be a number'],
    ['price[lt]=%203%20', 'Query parameter "price[lt]" must be a number'],
    ['price[in]=1,+3', 'Query parameter "price[in]" must be a number'],
    ['price=1e999', 'Query parameter "price" must be a number'],
    ['active=yes', 'Query parameter "active" must be true or false'],
    ['active[gt]=true', 'Query parameter "active[gt]": active takes eq, ne, exists'],
    ['tags=sale', 'Query parameter "tags": tags takes has, exists'],
    ['price[exists]=maybe', 'Query parameter "price[exists]" must be true or false'],
    ['releasedAt[gt]=soon', 'Query parameter "releasedAt[gt]" must be an ISO 8601 date (2026-11-21) or date-time (2026-11-21T08:30:00Z)'],
    // Values are compared as the text they were written as: only that format can match the right records.
    ['releasedAt[gte]=Sep%201%202026', 'Query parameter "releasedAt[gte]" must be an ISO 8601 date (2026-11-21) or date-time (2026-11-21T08:30:00Z)'],
    ['releasedAt[gte]=2026-03-01t12:00:00z', 'Query parameter "releasedAt[gte]" must be an ISO 8601 date (2026-11-21) or date-time (2026-11-21T08:30:00Z)'],
    ['releasedAt[lt]=2026-02-29', 'Query parameter "releasedAt[lt]" must be an ISO 8601 date (2026-11-21) or date-time (2026-11-21T08:30:00Z)'],
    ['createdAt[gt]=Sep%201%202026', 'Query parameter "createdAt[gt]" must be an ISO 8601 date (2026-11-21) or date-time (2026-11-21T08:30:00Z)'],
    ['price=10&price[eq]=20', 'Query parameter "price[eq]": price[eq] is given twice (price=… is price[eq]=…)'],
    ['sort=title,-title', 'sort: "title" is given twice'],
    ['sort=nope', 'sort: "nope" is not a field of this endpoint'],
    ['populate=title', 'populate: "title" is not a reference field of this endpoint'],
    ['maker=abc', 'Query parameter "maker" must be a record id'],
    ['extra=1', 'Query parameter "extra": extra takes exists'],
    ['title=a&title=b', 'Query parameter "title" must be given once'],
    [`title[in]=${Array.from({ length: 101 }, (_, i) => i).join(',')}`, 'Query parameter "title[in]" takes at most 100 values'],
  ])('%s → 400', async (query, error) => {
    const res = await t.api('GET', `/api/lf/products?${query}`);
    expect(res.status, res.text).toBe(400);
    expect(res.body).toMatchObject({ success: false, error });
    // Each names the parameter in `details` too, as every validation failure does.
    expect(res.body.details?.length, res.text).toBeGreaterThan(0);
  });

  it('refuses more than 20 filters', async () => {
    const filters = ['title[ne]=x', 'title[gt]=a', 'title[lt]=z', 'title[gte]=a', 'title[lte]=z', 'price[ne]=1', 'price[gt]=0', 'price[lt]=9', 'price[gte]=0', 'price[lte]=99'];
    filters.push('active[ne]=true', 'tags[has]=q', 'sizes[has]=1', 'releasedAt[gt]=2000-01-01', 'meta.color[ne]=x', 'meta.weight[gt]=0', 'meta[exists]=true');
    filters.push('extra[exists]=true', 'maker[exists]=true', 'createdAt[gt]=2000-01-01', '_id[ne]=ffffffffffffffffffffffff');
    expect(filters).toHaveLength(21);
    const res = await t.api('GET', `/api/lf/products?${filters.join('&')}`);
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toBe('A list takes at most 20 filters');
    expect(res.body.details).toEqual([{ field: 'query', message: 'takes at most 20 filters' }]);
  });
});

describe('exists and null', () => {
  it('a field stored as null counts as absent', async () => {
    await define('/api/lf/nulls', ['GET', 'POST'], { title: { type: 'string' }, extra: { type: 'json' } });
    await create('/api/lf/nulls', { title: 'set', extra: { x: 1 } });
    await create('/api/lf/nulls', { title: 'null', extra: null });
    await create('/api/lf/nulls', { title: 'missing' });
    const list = async (query: string) => (await t.api('GET', `/api/lf/nulls?${query}&sort=createdAt`)).body.data.map((r: { title: string }) => r.title);
    expect(await list('extra[exists]=true')).toEqual(['set']);
    expect(await list('extra[exists]=false')).toEqual(['null', 'missing']);
  });
});
