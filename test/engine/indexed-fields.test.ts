import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * Schema fields marked `indexed` / `unique`: an index per (path, field) over the records of the
 * path, kept in step with the definitions (checked in sqlite_schema), unique values enforced on
 * every write with a 409 naming the field, list results the same with or without an index, and
 * `?total=` on lists. Real HTTP, real embedded store.
 */
let t: TestServer;
let admin: string;

const PRODUCTS = '/api/ix/products';

/** The field indexes of a path, as `field` or `field!` for unique ones (sqlite_schema, read on a connection of its own). */
function indexesOf(server: TestServer, path: string): string[] {
  const db = new DatabaseSync(join(server.dataDir, 'dyn.db'), { readOnly: true });
  try {
    return db
      .prepare("SELECT sql FROM sqlite_schema WHERE type = 'index' AND name GLOB 'endpointdatas__fx_*'")
      .all()
      .map((row) => JSON.parse(/dyn-field-index (\{.*?\}) \*\//.exec(String(row.sql))?.[1] ?? '{}') as { scope: string; field: string; unique: boolean })
      .filter((index) => index.scope === path)
      .map((index) => `${index.field.replace(/^data\./, '')}${index.unique ? '!' : ''}`)
      .sort();
  } finally {
    db.close();
  }
}

async function define(server: TestServer, token: string, path: string, method: string, schema: unknown): Promise<string> {
  const res = await server.api('POST', '/api/endpoints', { token, body: { name: `${method} ${path}`, path, method, accessType: 'public', schema } });
  expect(res.status, res.text).toBe(201);
  return res.body.data._id;
}

async function update(id: string, body: Record<string, unknown>): Promise<{ status: number; body: any; text: string }> {
  return t.api('PUT', `/api/endpoints/${id}`, { token: admin, body });
}

const ids: Record<string, string> = {};

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  // The array form (as the spec writes schemas) on GET, the map form on POST/PUT/PATCH.
  ids.get = await define(t, admin, PRODUCTS, 'GET', [
    { name: 'sku', type: 'string', unique: true },
    { name: 'price', type: 'number', indexed: true },
    { name: 'cost', type: 'number' },
    { name: 'title', type: 'string' },
  ]);
  const writable = { sku: { type: 'string', unique: true }, price: { type: 'number' }, cost: { type: 'number' }, title: { type: 'string' } };
  for (const method of ['POST', 'PUT', 'PATCH']) ids[method.toLowerCase()] = await define(t, admin, PRODUCTS, method, writable);
  for (let n = 0; n < 30; n++) {
    // price and cost hold the same values: one indexed, one not.
    const value = (n * 7) % 13;
    const res = await t.api('POST', PRODUCTS, { body: { sku: `S-${n}`, price: value, cost: value, title: `t${n}` } });
    expect(res.status, res.text).toBe(201);
  }
});

afterAll(async () => {
  await t.close();
});

describe('indexed and unique fields in definitions', () => {
  it('are read back in the array form, as written', async () => {
    const res = await t.api('GET', `/api/endpoints/${ids.get}`, { token: admin });
    const fields = Object.fromEntries(res.body.data.schema.map((field: { name: string }) => [field.name, field]));
    expect(fields.sku).toMatchObject({ type: 'string', unique: true });
    expect(fields.price).toMatchObject({ type: 'number', indexed: true });
    expect(fields.cost).not.toHaveProperty('indexed');
  });

  it('give the path one index per field, the union over its definitions (unique where any says so)', () => {
    expect(indexesOf(t, PRODUCTS)).toEqual(['price', 'sku!']);
  });

  const refused: Array<[string, string, unknown, RegExp]> = [
    ['an array field', '/api/ix/bad1', { tags: { type: 'array', indexed: true } }, /^Invalid schema: schema\.tags\.indexed cannot be set on a array field: only scalar fields can be indexed/],
    ['an object field', '/api/ix/bad2', { meta: { type: 'object', unique: true } }, /^Invalid schema: schema\.meta\.unique cannot be set on a object field/],
    ['a json field', '/api/ix/bad3', [{ name: 'extra', type: 'json', indexed: true }], /^Invalid schema: schema\.extra\.indexed cannot be set on a json field/],
    ['a nested field', '/api/ix/bad4', { meta: { type: 'object', children: { color: { type: 'string', indexed: true } } } }, /^Invalid schema: schema\.meta\.children\.color\.indexed can only be set on top-level fields/],
    ['array items', '/api/ix/bad5', { tags: { type: 'array', items: { type: 'string', indexed: true } } }, /^Invalid schema: schema\.tags\.items\.indexed can only be set on top-level fields/],
    ['unique with indexed: false', '/api/ix/bad6', { sku: { type: 'string', unique: true, indexed: false } }, /^Invalid schema: schema\.sku\.indexed cannot be false on a unique field/],
    ['a path with a parameter', '/api/ix/:shop/bad7', { sku: { type: 'string', unique: true } }, /^Invalid schema: schema\.sku\.unique cannot be set on a path with :parameters/],
    ['a field name a filter cannot name', '/api/ix/bad8', { 'my-sku': { type: 'string', indexed: true } }, /^Invalid schema: schema\.my-sku\.indexed needs a field name of letters, digits and _/],
    ['a non-boolean', '/api/ix/bad9', { sku: { type: 'string', indexed: 'yes' } }, /^Invalid schema: schema\.sku\.indexed must be (a )?boolean/],
  ];
  for (const [what, path, schema, message] of refused) {
    it(`are refused on ${what} (400 naming the field), and nothing is saved`, async () => {
      const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'bad', path, method: 'GET', accessType: 'public', schema } });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error).toMatch(message);
      expect(indexesOf(t, path)).toEqual([]);
    });
  }

  it('an index follows definition changes: added, dropped when no definition asks for it, moved with the path, dropped with the last definition', async () => {
    const path = '/api/ix/moving';
    const get = await define(t, admin, path, 'GET', { code: { type: 'string' }, n: { type: 'number' } });
    expect(indexesOf(t, path)).toEqual([]);
    const post = await define(t, admin, path, 'POST', { code: { type: 'string', indexed: true }, n: { type: 'number' } });
    expect(indexesOf(t, path)).toEqual(['code']);
    expect((await update(get, { schema: { code: { type: 'string' }, n: { type: 'number', indexed: true } } })).status).toBe(200);
    expect(indexesOf(t, path)).toEqual(['code', 'n']);
    expect((await update(post, { schema: { code: { type: 'string' }, n: { type: 'number' } } })).status).toBe(200);
    expect(indexesOf(t, path)).toEqual(['n']);
    expect((await update(get, { path: '/api/ix/moved' })).status).toBe(200);
    expect(indexesOf(t, path)).toEqual([]);
    expect(indexesOf(t, '/api/ix/moved')).toEqual(['n']);
    expect((await t.api('DELETE', `/api/endpoints/${get}`, { token: admin })).status).toBe(200);
    expect(indexesOf(t, '/api/ix/moved')).toEqual([]);
  });
});

describe('unique fields', () => {
  const conflict = /^sku must be unique: another record of \/api\/ix\/products has "S-1"$/;

  it('POST repeating a value is a 409 naming the field and the value, and nothing is written', async () => {
    const before = (await t.api('GET', `${PRODUCTS}?limit=1`)).body.meta.total;
    const res = await t.api('POST', PRODUCTS, { body: { sku: 'S-1', price: 1, title: 'copy' } });
    expect(res.status, res.text).toBe(409);
    expect(res.body).toMatchObject({ success: false, error: expect.stringMatching(conflict) });
    expect(res.text).not.toContain('t1'); // nothing of the other record
    expect((await t.api('GET', `${PRODUCTS}?limit=1`)).body.meta.total).toBe(before);
    expect((await t.api('GET', `${PRODUCTS}?title=copy`)).body.data).toEqual([]);
  });

  it('PUT and PATCH repeating a value are 409s and leave the record as it was', async () => {
    const target = (await t.api('GET', `${PRODUCTS}?sku=S-2`)).body.data[0];
    const put = await t.api('PUT', `${PRODUCTS}/${target._id}`, { body: { sku: 'S-1', price: 1, title: 'replaced' } });
    expect(put.status, put.text).toBe(409);
    expect(put.body.error).toMatch(conflict);
    const patch = await t.api('PATCH', `${PRODUCTS}/${target._id}`, { body: { sku: 'S-1' } });
    expect(patch.status, patch.text).toBe(409);
    expect(patch.body.error).toMatch(conflict);
    expect((await t.api('GET', `${PRODUCTS}/${target._id}`)).body.data).toEqual(target);
  });

  it('records without the field, and the same value on another path, are no duplicates', async () => {
    expect((await t.api('POST', PRODUCTS, { body: { title: 'no sku 1' } })).status).toBe(201);
    expect((await t.api('POST', PRODUCTS, { body: { title: 'no sku 2' } })).status).toBe(201);
    await define(t, admin, '/api/ix/others', 'POST', { sku: { type: 'string', unique: true } });
    expect((await t.api('POST', '/api/ix/others', { body: { sku: 'S-1' } })).status).toBe(201);
  });

  it('made unique over values records already repeat: 409 naming the field and the value, and nothing changes', async () => {
    const path = '/api/ix/dups';
    const post = await define(t, admin, path, 'POST', { code: { type: 'string' }, n: { type: 'number', indexed: true } });
    for (const code of ['A-1', 'B-2', 'A-1']) expect((await t.api('POST', path, { body: { code } })).status).toBe(201);
    const res = await update(post, { schema: { code: { type: 'string', unique: true }, n: { type: 'number' } } });
    expect(res.status, res.text).toBe(409);
    expect(res.body.error).toBe('Invalid schema: schema.code.unique cannot be unique: records of /api/ix/dups already share the value "A-1"');
    expect(res.body.details).toEqual([{ field: 'schema.code.unique', message: 'cannot be unique: records of /api/ix/dups already share the value "A-1"' }]);
    const stored = await t.api('GET', `/api/endpoints/${post}`, { token: admin });
    expect(stored.body.data.schema.map((f: Record<string, unknown>) => [f.name, f.unique ?? false, f.indexed ?? false])).toEqual([['code', false, false], ['n', false, true]]);
    expect(indexesOf(t, path)).toEqual(['n']);
  });

  it('a path change whose records would repeat a unique value at the new path is a 409 saying so, and nothing moves', async () => {
    await define(t, admin, '/api/ix/birds', 'GET', { name: { type: 'string', unique: true } });
    await define(t, admin, '/api/ix/birds', 'POST', { name: { type: 'string', unique: true } });
    const mover = await define(t, admin, '/api/ix/movers', 'POST', { name: { type: 'string', unique: true } });
    expect((await t.api('POST', '/api/ix/birds', { body: { name: 'Tom' } })).status).toBe(201);
    expect((await t.api('POST', '/api/ix/movers', { body: { name: 'Tom' } })).status).toBe(201);
    const res = await update(mover, { path: '/api/ix/birds', method: 'PUT' });
    expect(res.status, res.text).toBe(409);
    expect(res.body.error).toBe("This endpoint's records cannot move to /api/ix/birds: name is unique there, and a moving record repeats the name of another record (one already there or another moving record)");
    expect((await t.api('GET', `/api/endpoints/${mover}`, { token: admin })).body.data.path).toBe('/api/ix/movers');
    expect((await t.api('GET', '/api/ix/birds?name=Tom')).body.meta.total).toBe(1);
  });
});

describe('lists over indexed fields', () => {
  const list = async (query: string) => {
    const res = await t.api('GET', `${PRODUCTS}?${query}`);
    expect(res.status, res.text).toBe(200);
    return { skus: res.body.data.map((r: { sku?: string; title: string }) => r.sku ?? r.title), meta: res.body.meta };
  };

  const queries = ['{f}[gte]=6', '{f}[lt]=4&sort=-createdAt', '{f}=5', '{f}[in]=1,2,3&sort=-{f}', 'sort=-{f}&limit=7&page=2', 'sort={f},title', '{f}[gte]=2&{f}[lte]=9&sort=-{f}&limit=5&page=2'];
  for (const query of queries) {
    it(`the same records and total through the index as without: ${query}`, async () => {
      const indexed = await list(query.replaceAll('{f}', 'price'));
      const plain = await list(query.replaceAll('{f}', 'cost'));
      expect(indexed).toEqual(plain);
      expect(indexed.skus.length).toBeGreaterThan(0);
    });
  }

  it('?total=exact (the default) answers the spec shape {page, limit, total}', async () => {
    expect((await list('price[gte]=6&limit=5')).meta).toEqual({ page: 1, limit: 5, total: (await list('price[gte]=6&limit=100&total=exact')).skus.length });
  });

  it('?total=estimate counts at most 10,000 matches past the page and says whether the count is exact', async () => {
    const exact = (await list('price[gte]=6')).meta.total;
    expect((await list('price[gte]=6&limit=5&total=estimate')).meta).toEqual({ page: 1, limit: 5, total: exact, totalExact: true });
    expect((await list('limit=5&total=estimate')).meta).toMatchObject({ total: (await list('limit=5')).meta.total, totalExact: true });
    // A page past the last one: the total is still the count, not the rows skipped.
    expect((await list('price[gte]=6&limit=5&page=50&total=estimate')).meta).toEqual({ page: 50, limit: 5, total: exact, totalExact: true });
  });

  it('?total=none counts nothing: total is null and hasMore says whether a next page has records', async () => {
    const all = (await list('price[gte]=6&limit=100')).skus.length;
    expect((await list(`price[gte]=6&limit=${all - 1}&total=none`)).meta).toEqual({ page: 1, limit: all - 1, total: null, hasMore: true });
    const last = await list(`price[gte]=6&limit=${all}&total=none`);
    expect(last.meta).toEqual({ page: 1, limit: all, total: null, hasMore: false });
    expect(last.skus).toEqual((await list('price[gte]=6&limit=100')).skus);
  });

  it('?total with another value is a 400 naming the parameter', async () => {
    const res = await t.api('GET', `${PRODUCTS}?total=some`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Query parameter "total" must be one of exact, estimate, none');
  });
});

describe('docs of indexed fields', () => {
  it('OpenAPI marks indexed and unique fields, offers total=, and lists the 409 of writes', async () => {
    const res = await t.api('GET', '/api/openapi.json', { token: admin });
    expect(res.status).toBe(200);
    const schemas = Object.values(res.body.components.schemas as Record<string, { properties?: Record<string, Record<string, unknown>> }>);
    const record = schemas.find((schema) => schema.properties?.sku && schema.properties?.cost);
    expect(record?.properties?.sku).toMatchObject({ 'x-dyn-unique': true, 'x-dyn-indexed': true, description: expect.stringContaining('unique') });
    expect(record?.properties?.price).toMatchObject({ 'x-dyn-indexed': true });
    expect(record?.properties?.cost).not.toHaveProperty('x-dyn-indexed');
    const list = res.body.paths[PRODUCTS].get;
    expect(list.parameters.find((p: { name: string }) => p.name === 'total').schema.enum).toEqual(['exact', 'estimate', 'none']);
    expect(res.body.paths[PRODUCTS].post.responses['409'].description).toContain('sku');
  });

  it('the endpoint docs say which fields are indexed and unique', async () => {
    const res = await t.api('GET', `/api/endpoints/${ids.get}/docs`, { token: admin });
    const fields = Object.fromEntries(res.body.data.fields.map((field: { name: string }) => [field.name, field]));
    expect(fields.sku).toMatchObject({ indexed: true, unique: true });
    expect(fields.price).toMatchObject({ indexed: true, unique: false });
    expect(fields.cost).toMatchObject({ indexed: false, unique: false });
  });
});

describe('project files keep indexed and unique', () => {
  it('an export holds them, and importing it elsewhere defines the same indexes', async () => {
    const exported = await t.api('GET', '/api/project/export', { token: admin });
    expect(exported.status).toBe(200);
    expect(exported.text).toMatch(/sku:\n\s+type: string\n\s+unique: true/);
    expect(exported.text).toMatch(/price:\n\s+type: number\n\s+indexed: true/);
    const target = await startTestServer();
    try {
      const res = await target.api('POST', '/api/project/import?mode=replace', { token: await target.adminToken(), rawBody: exported.text, headers: { 'content-type': 'application/yaml' } });
      expect(res.status, res.text).toBe(200);
      expect(indexesOf(target, PRODUCTS)).toEqual(['price', 'sku!']);
      const again = await target.api('GET', '/api/project/export', { token: await target.adminToken() });
      expect(again.text).toBe(exported.text);
    } finally {
      await target.close();
    }
  });
});

describe('at start', () => {
  it('an index a definition asks for but the store lacks (an interrupted build, an older store) is built while the server serves', async () => {
    const first = await startTestServer();
    const dir = first.dataDir;
    try {
      await define(first, await first.adminToken(), '/api/ix/start', 'POST', { code: { type: 'string', unique: true } });
      expect(indexesOf(first, '/api/ix/start')).toEqual(['code!']);
    } finally {
      await first.server.close();
    }
    const db = new DatabaseSync(join(dir, 'dyn.db'));
    for (const row of db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND name GLOB 'endpointdatas__fx_*'").all()) db.exec(`DROP INDEX "${String(row.name)}"`);
    db.close();
    const again = await startTestServer({}, dir);
    try {
      expect((await again.api('GET', '/api/health')).status).toBe(200);
      // Built in the background: wait for it (no time limit asserted, only that it comes).
      for (let tries = 0; tries < 200 && indexesOf(again, '/api/ix/start').length === 0; tries++) await new Promise((done) => setTimeout(done, 50));
      expect(indexesOf(again, '/api/ix/start')).toEqual(['code!']);
    } finally {
      await again.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
