import { validate } from '@readme/openapi-parser';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserWith, giveLegacyPath, startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * GET /api/openapi.json: the OpenAPI document of every enabled dynamic endpoint, checked with a
 * real validator (@readme/openapi-parser) and turned into types with openapi-typescript.
 */
let t: TestServer;
let admin: string;
let staffGroupId: string;
let shopGroupId: string;

async function define(body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: `${body.method} ${body.path}`, accessType: 'public', ...body } });
  if (res.status !== 201) throw new Error(`defining ${body.method} ${body.path} failed: ${res.status} ${res.text}`);
  return res.body.data;
}

async function openapi(query = '', token?: string): Promise<any> {
  const res = await t.api('GET', `/api/openapi.json${query}`, token ? { token } : {});
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const PRODUCT_SCHEMA = {
  title: { type: 'string', required: true, maxLength: 80, description: 'shown in lists' },
  price: { type: 'number', required: true, minimum: 0 },
  status: { type: 'string', enum: ['draft', 'live'], defaultValue: 'draft', required: true },
  tags: { type: 'array', items: { type: 'string' }, maxItems: 10 },
  size: { type: 'object', children: { width: { type: 'number', required: true }, unit: { type: 'string' } } },
  category: { type: 'reference', ref: '/api/shop/categories' },
  releasedAt: { type: 'datetime' },
  extra: { type: 'json' },
  active: { type: 'boolean' },
};

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  const shop = await t.api('POST', '/api/endpoints/groups', { token: admin, body: { name: 'Shop', description: 'The shop', icon: 'cart', color: '#336699' } });
  shopGroupId = shop.body.data._id;
  const staff = await t.api('POST', '/api/groups', { token: admin, body: { name: 'staff', permissions: [] } });
  staffGroupId = staff.body.data._id;

  for (const method of ['GET', 'POST']) await define({ method, path: '/api/shop/categories', groupId: shopGroupId, schema: { name: { type: 'string', required: true } } });
  for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
    await define({ method, path: '/api/shop/products', groupId: shopGroupId, apiVersion: 'v1', schema: PRODUCT_SCHEMA, description: `${method} products` });
  }
  await define({ method: 'GET', path: '/api/shops/:shopId/items', accessType: 'authenticated', schema: { label: { type: 'string' } } });
  await define({ method: 'GET', path: '/api/staff/notes', accessType: 'group', allowedGroupIds: [staffGroupId], schema: { text: { type: 'string' } } });
  await define({ method: 'POST', path: '/api/hooks/echo', schema: {}, handler: { enabled: true, code: 'async function handler(req) { return { status: 200, data: req.body }; }' } });
  await define({ method: 'GET', path: '/api/hidden/things', enabled: false, schema: {} });
});
afterAll(async () => {
  await t.close();
});

describe('the document', () => {
  it('passes the OpenAPI validator as 3.0.3 and, with ?version=3.1, as 3.1.0', async () => {
    for (const [query, version] of [['', '3.0.3'], ['?version=3.1', '3.1.0']]) {
      const doc = await openapi(query);
      expect(doc.openapi).toBe(version);
      const result = await validate(structuredClone(doc));
      expect(result.valid ? [] : result.errors, JSON.stringify(result)).toEqual([]);
    }
  });

  it('turns into TypeScript types with openapi-typescript', async () => {
    const types = astToString(await openapiTS(await openapi()));
    expect(types).toContain('"/api/shop/products/{id}"');
    expect(types).toContain('get_api_shop_products_record');
  });

  it('lists every enabled dynamic endpoint with {param} paths and versioned aliases, and nothing disabled', async () => {
    const doc = await openapi();
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/api/hooks/echo',
      '/api/hooks/echo/{id}',
      '/api/shop/categories',
      '/api/shop/categories/{id}',
      '/api/shop/products',
      '/api/shop/products/{id}',
      '/api/shops/{shopId}/items',
      '/api/shops/{shopId}/items/{id}',
      '/api/staff/notes',
      '/api/staff/notes/{id}',
      '/api/v1/shop/products',
      '/api/v1/shop/products/{id}',
    ]);
    expect(Object.keys(doc.paths['/api/shop/products'])).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/api/shop/products/{id}'])).toEqual(['get', 'put', 'patch', 'delete']);
    expect(doc.paths['/api/v1/shop/products/{id}'].patch.operationId).toBe('patch_api_shop_products_by_id_v1');
    expect(doc.paths['/api/shops/{shopId}/items'].get.parameters[0]).toEqual({ name: 'shopId', in: 'path', required: true, schema: { type: 'string' }, description: 'path parameter' });
  });

  it('describes list parameters: page, limit, sort, populate, search, total, one deepObject filter per field and object child, and the record fields', async () => {
    const list = (await openapi()).paths['/api/shop/products'].get;
    const byName = Object.fromEntries(list.parameters.map((p: any) => [p.name ?? p.$ref, p]));
    const fields = Object.keys(PRODUCT_SCHEMA).flatMap((name) => (name === 'size' ? ['size', 'size.width', 'size.unit'] : [name]));
    const records = ['_id', 'createdAt', 'updatedAt'].map((name) => `#/components/parameters/filter_${name}`);
    expect(Object.keys(byName)).toEqual(['page', 'limit', 'sort', 'populate', 'search', 'total', ...fields, ...records]);
    expect(byName.total.schema).toEqual({ type: 'string', enum: ['exact', 'estimate', 'none'], default: 'exact' });
    expect(byName.page.schema).toEqual({ type: 'integer', minimum: 1, default: 1 });
    expect(byName.populate.description).toContain('category');
    expect(byName.price).toMatchObject({ in: 'query', style: 'deepObject', explode: true, schema: { $ref: '#/components/schemas/Filter_number' } });
    const schemas = (await openapi()).components.schemas;
    expect(Object.keys(schemas.Filter_number.properties)).toEqual(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists']);
    expect(schemas.Filter_number.properties.gte).toEqual({ type: 'number' });
    expect(byName.tags.schema).toEqual({ $ref: '#/components/schemas/Filter_array_of_string' });
    expect(schemas.Filter_array_of_string.properties.has).toEqual({ type: 'string' });
  });

  it('the described filter works as documented against the live endpoint', async () => {
    const category = await t.api('POST', '/api/shop/categories', { body: { name: 'Tools' } });
    await t.api('POST', '/api/shop/products', { body: { title: 'Saw', price: 12, category: category.body.data._id } });
    await t.api('POST', '/api/shop/products', { body: { title: 'Nail', price: 1 } });
    const res = await t.api('GET', '/api/shop/products?price[gte]=5&price[eq]=12');
    expect(res.body.data.map((p: any) => p.title)).toEqual(['Saw']);
  });

  it('builds request bodies from the schema: required fields, defaults, enums, limits, nested children', async () => {
    const doc = await openapi();
    const post = doc.paths['/api/shop/products'].post;
    expect(post.requestBody).toEqual({ required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/post_api_shop_products_input' } } } });
    const input = doc.components.schemas.post_api_shop_products_input;
    expect(input.required).toEqual(['title', 'price']); // status has a default
    expect(input.additionalProperties).toBe(false);
    expect(input.properties.title).toEqual({ type: 'string', maxLength: 80, description: 'shown in lists' });
    expect(input.properties.status).toEqual({ type: 'string', maxLength: 1_000_000, enum: ['draft', 'live'], default: 'draft' });
    expect(input.properties.price).toEqual({ type: 'number', minimum: 0 });
    expect(input.properties.tags).toEqual({ type: 'array', items: { type: 'string', maxLength: 1_000_000 }, maxItems: 10 });
    expect(input.properties.size).toEqual({
      type: 'object',
      properties: { width: { type: 'number' }, unit: { type: 'string', maxLength: 1_000_000 } },
      additionalProperties: false,
      required: ['width'],
    });
    expect(doc.components.schemas.patch_api_shop_products_patch.required).toBeUndefined();
    // PUT replaces the data and applies no defaults: status is required there.
    expect(doc.components.schemas.put_api_shop_products_input.required).toEqual(['title', 'price', 'status']);
  });

  it('describes references as ids naming their target, and the populated shape in responses', async () => {
    const schemas = (await openapi()).components.schemas;
    expect(schemas.post_api_shop_products_input.properties.category).toEqual({
      type: 'string', pattern: '^[0-9a-f]{24}$', description: 'id of a record of /api/shop/categories', 'x-dyn-ref': '/api/shop/categories',
    });
    const output = schemas.get_api_shop_products_record.properties.category;
    expect(output['x-dyn-ref']).toBe('/api/shop/categories');
    expect(output.anyOf[1]).toEqual({ $ref: '#/components/schemas/get_api_shop_categories_populated' });
    expect(schemas.get_api_shop_categories_populated).toMatchObject({ properties: { id: { type: 'string' }, name: { type: 'string' } }, required: ['id'] });
  });

  it('describes the success envelope (with meta on lists) and the failure envelope with details', async () => {
    const doc = await openapi();
    const list = doc.paths['/api/shop/products'].get.responses;
    expect(list['200'].content['application/json'].schema).toEqual({
      type: 'object',
      properties: { success: { type: 'boolean', enum: [true] }, data: { type: 'array', items: { $ref: '#/components/schemas/get_api_shop_products_record' } }, meta: { $ref: '#/components/schemas/Meta' } },
      required: ['success', 'data', 'meta'],
    });
    expect(doc.paths['/api/shop/products'].post.responses['201']).toBeDefined();
    expect(doc.paths['/api/shop/products/{id}'].get.responses['404']).toEqual({ $ref: '#/components/responses/NotFound' });
    expect(doc.components.schemas.Failure.properties.details.items).toEqual({ $ref: '#/components/schemas/ErrorDetail' });
  });

  it('applies bearerAuth and apiKey per access type, and tags operations with their endpoint group', async () => {
    const doc = await openapi();
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    expect(doc.components.securitySchemes.apiKey.description).toContain('Authorization: ApiKey');
    expect(doc.paths['/api/shop/products'].get.security).toBeUndefined();
    expect(doc.paths['/api/shops/{shopId}/items'].get.security).toEqual([{ bearerAuth: [] }, { apiKey: [] }]);
    expect(doc.paths['/api/staff/notes'].get.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths['/api/shop/products'].get.tags).toEqual(['Shop']);
    expect(doc.paths['/api/staff/notes'].get.tags).toEqual(['Ungrouped']);
    expect(doc.tags).toEqual([{ name: 'Shop', description: 'The shop' }, { name: 'Ungrouped' }]);
  });

  it('follows definition changes on the next request and serves the same text while nothing changes', async () => {
    const first = await t.api('GET', '/api/openapi.json');
    const again = await t.api('GET', '/api/openapi.json');
    expect(again.text).toBe(first.text);
    const added = await define({ method: 'GET', path: '/api/later/things', schema: {} });
    expect(Object.keys((await openapi()).paths)).toContain('/api/later/things');
    await t.api('PUT', `/api/endpoints/${added._id}`, { token: admin, body: { enabled: false } });
    expect(Object.keys((await openapi()).paths)).not.toContain('/api/later/things');
    await t.api('PUT', `/api/endpoints/groups/${shopGroupId}`, { token: admin, body: { name: 'Store' } });
    expect((await openapi()).paths['/api/shop/products'].get.tags).toEqual(['Store']);
    await t.api('PUT', `/api/endpoints/groups/${shopGroupId}`, { token: admin, body: { name: 'Shop' } });
  });

  it.each([
    ['?version=2.0', 'Query parameter "version" must be 3.0 or 3.1'],
    ['?version=3.2', 'Query parameter "version" must be 3.0 or 3.1'],
    ['?format=yaml', 'Unknown query parameter "format"'],
  ])('refuses %s with 400', async (query, error) => {
    const res = await t.api('GET', `/api/openapi.json${query}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error });
  });
});

describe('with openApiPublic off', () => {
  beforeAll(async () => {
    expect((await t.api('PUT', '/api/settings', { token: admin, body: { openApiPublic: false } })).status).toBe(200);
  });
  afterAll(async () => {
    expect((await t.api('PUT', '/api/settings', { token: admin, body: { openApiPublic: true } })).status).toBe(200);
  });

  it('refuses anonymous callers with 401', async () => {
    const res = await t.api('GET', '/api/openapi.json');
    expect(res.status).toBe(401);
    expect(res.body.success).toBe(false);
  });

  it('lists for each caller only what it may call', async () => {
    const outsider = await createUserWith(t, []);
    const member = await createUserWith(t, []);
    await t.api('PUT', `/api/users/${member.userId}`, { token: admin, body: { groupIds: [staffGroupId] } });
    const memberToken = (await t.login(member.login, member.password)).accessToken;
    const key = await t.api('POST', '/api/api-keys', { token: admin, body: { name: 'docs-reader', permissions: [] } });
    expect(key.status, key.text).toBe(201);

    const outsiderPaths = Object.keys((await openapi('', outsider.token)).paths);
    expect(outsiderPaths).toContain('/api/shops/{shopId}/items');
    expect(outsiderPaths).not.toContain('/api/staff/notes');
    expect(Object.keys((await openapi('', memberToken)).paths)).toContain('/api/staff/notes');
    const viaKey = await t.api('GET', '/api/openapi.json', { apiKey: key.body.data.key });
    expect(viaKey.status).toBe(200);
    expect(Object.keys(viaKey.body.paths)).toContain('/api/shops/{shopId}/items');
    expect(Object.keys(viaKey.body.paths)).not.toContain('/api/staff/notes');
    const result = await validate(structuredClone(viaKey.body));
    expect(result.valid).toBe(true);
  });
});

describe('paths that differ only in parameter names (saved before the path-shape rule)', () => {
  beforeAll(async () => {
    await define({ method: 'GET', path: '/api/things', schema: {} });
    await define({ method: 'PUT', path: '/api/things', schema: {} });
    // Refused today (409: it takes GET /api/things's record routes); a store may hold it from before.
    const slug = await define({ method: 'GET', path: '/api/things-by/:slug', schema: {} });
    await giveLegacyPath(t, slug._id, '/api/things/:slug');
  });

  it('share one path, and of two operations with the same method the one the engine serves is described', async () => {
    const doc = await openapi();
    expect(doc.paths['/api/things/{id}']).toBeUndefined();
    const things = doc.paths['/api/things/{slug}'];
    // GET /api/things/x is the collection of /api/things/:slug (a collection beats an item).
    expect(things.get.operationId).toBe('get_api_things_slug');
    expect(things.put.operationId).toBe('put_api_things_by_id');
    expect(things.put.parameters).toEqual([expect.objectContaining({ name: 'slug', in: 'path', description: 'record id' })]);
    const result = await validate(structuredClone(doc));
    expect(result.valid ? [] : result.errors).toEqual([]);
    const served = await t.api('GET', '/api/things/anything');
    expect(served.status).toBe(200);
    expect(served.body.meta).toBeDefined(); // a list: the :slug collection answered
  });
});

describe('names that could meet', () => {
  beforeAll(async () => {
    await define({ method: 'GET', path: '/api/meet', schema: {} });
    await define({ method: 'GET', path: '/api/meet/by/id', schema: {} });
    const group = await t.api('POST', '/api/endpoints/groups', { token: admin, body: { name: 'Ungrouped', icon: 'x', color: '#000000' } });
    await define({ method: 'GET', path: '/api/grouped/things', groupId: group.body.data._id, schema: {} });
  });

  it('keeps operationIds and tag names unique, so the document stays valid', async () => {
    const doc = await openapi();
    const ids = Object.values(doc.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.paths['/api/meet/{id}'].get.operationId).toBe('get_api_meet_by_id_2');
    expect(doc.paths['/api/meet/by/id'].get.operationId).toBe('get_api_meet_by_id'); // its own name
    expect(doc.tags.filter((tag: any) => tag.name === 'Ungrouped')).toHaveLength(1);
    const result = await validate(structuredClone(doc));
    expect(result.valid ? [] : result.errors).toEqual([]);
  });
});

describe('datetime fields', () => {
  const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

  /** A validator of one schema of the document, found by JSON pointer, its $refs resolved in the document. */
  function schemaAt(doc: any, pointer: string) {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(doc, 'openapi.json');
    return ajv.compile({ $ref: `openapi.json#${pointer}` });
  }

  it.each(['2026-01-01', '2026-01-01T08:30', '2026-01-01T08:30:00.123+02:00', '2026-01-01T00:00:00.000Z'])(
    'describes %s so that the request and the response, which returns it as written, both validate',
    async (releasedAt) => {
      const created = await t.api('POST', '/api/shop/products', { body: { title: 'Dated', price: 1, releasedAt } });
      expect(created.status, created.text).toBe(201);
      const read = await t.api('GET', `/api/shop/products/${created.body.data._id}`);
      expect(read.body.data.releasedAt).toBe(releasedAt);
      for (const query of ['', '?version=3.1']) {
        const doc = await openapi(query);
        const request = schemaAt(doc, '/components/schemas/post_api_shop_products_input');
        expect(request({ title: 'Dated', price: 1, releasedAt }), JSON.stringify(request.errors)).toBe(true);
        const response = schemaAt(doc, `/paths/${encodeURIComponent('~1api~1shop~1products~1{id}')}/get/responses/200/content/application~1json/schema`);
        expect(response(read.body), JSON.stringify(response.errors)).toBe(true);
      }
    },
  );

  it('gives an example the server takes, so "Try it out" does not send text made up from the pattern', async () => {
    const doc = await openapi();
    const example = doc.components.schemas.post_api_shop_products_input.properties.releasedAt.example;
    expect(example).toBe('2026-01-01T00:00:00.000Z');
    const created = await t.api('POST', '/api/shop/products', { body: { title: 'Example', price: 1, releasedAt: example } });
    expect(created.status, created.text).toBe(201);
  });

  it('still refuses what the field refuses', async () => {
    const doc = await openapi();
    const request = schemaAt(doc, '/components/schemas/post_api_shop_products_input');
    for (const releasedAt of ['yesterday', '2026-1-1', '2026-01-01 08:30']) expect(request({ title: 'Dated', price: 1, releasedAt })).toBe(false);
  });
});

describe('records written under other rules', () => {
  /** A validator of one schema of the document, found by JSON pointer, its $refs resolved in the document. */
  function schemaAt(doc: any, pointer: string) {
    return new Ajv({ strict: false, allErrors: true }).addSchema(doc, 'openapi.json').compile({ $ref: `openapi.json#${pointer}` });
  }

  it('describes responses by type, so records from before a schema change still validate; requests keep the rules', async () => {
    const loose = [
      { name: 'a', type: 'string' },
      { name: 'o', type: 'object' },
    ];
    const reader = await define({ method: 'GET', path: '/api/evolving', schema: loose });
    await define({ method: 'POST', path: '/api/evolving', schema: loose });
    expect((await t.api('POST', '/api/evolving', { body: { a: 'hello world', o: { x: 1 } } })).status).toBe(201);
    const strict = [
      { name: 'a', type: 'string', maxLength: 3, enum: ['abc'] },
      { name: 'b', type: 'number', required: true, minimum: 0 },
      { name: 'o', type: 'object', children: [{ name: 'y', type: 'string', required: true }] },
    ];
    expect((await t.api('PUT', `/api/endpoints/${reader._id}`, { token: admin, body: { schema: strict } })).status).toBe(200);
    const list = await t.api('GET', '/api/evolving');
    expect(list.body.data[0]).toMatchObject({ a: 'hello world', o: { x: 1 } });
    for (const query of ['', '?version=3.1']) {
      const doc = await openapi(query);
      const response = schemaAt(doc, `/paths/${encodeURIComponent('~1api~1evolving')}/get/responses/200/content/application~1json/schema`);
      expect(response(list.body), JSON.stringify(response.errors)).toBe(true);
      const record = doc.components.schemas.get_api_evolving_record;
      expect(record.required).toEqual(['_id', 'createdAt', 'updatedAt']);
      expect(record.properties.a).toEqual({ type: 'string' });
      expect(record.description).toMatch(/rules .* are checked on writes/);
    }
  });

  it('keeps every operationId within 64 characters, an item route\'s `_by_id` included', async () => {
    await define({ method: 'GET', path: `/api/${'long-segment/'.repeat(8)}end`, schema: {} });
    const doc = await openapi();
    const ids = Object.values(doc.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId as string));
    expect(ids.filter((id) => id.length > 64)).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('leaves a pattern only RE2 reads out of the schemas, and says it in words', async () => {
    await define({ method: 'POST', path: '/api/re2', schema: [{ name: 'code', type: 'string', pattern: '(?i)^abc$' }, { name: 'plain', type: 'string', pattern: '^[a-z]+$' }] });
    expect((await t.api('POST', '/api/re2', { body: { code: 'ABC', plain: 'x' } })).status).toBe(201);
    for (const query of ['', '?version=3.1']) {
      const doc = await openapi(query);
      const input = doc.components.schemas.post_api_re2_input;
      expect(input.properties.code.pattern).toBeUndefined();
      expect(input.properties.code.description).toBe('matches the RE2 pattern (?i)^abc$ (checked by the server; not ECMA-262, so not in the schema)');
      expect(input.properties.plain.pattern).toBe('^[a-z]+$');
      const request = schemaAt(doc, '/components/schemas/post_api_re2_input');
      expect(request({ code: 'ABC', plain: 'x' }), JSON.stringify(request.errors)).toBe(true);
      expect(request({ code: 'ABC', plain: 'X' })).toBe(false);
    }
    const tools = await t.api('POST', '/api/mcp', { token: admin, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' } });
    const tool = tools.body.result.tools.find((x: { name: string }) => x.name === 'post_api_re2');
    expect(JSON.stringify(tool.inputSchema)).not.toContain('"pattern":"(?i)');
    expect(() => new Ajv({ strict: false }).compile(tool.inputSchema)).not.toThrow();
  });
});
