import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * The schema on the management API is the spec's array of fields
 * `{name, type, required, order, defaultValue, children, refEndpointId}` (plus dyn's options).
 * A client written against the spec alone works unchanged; the map form is accepted as input;
 * project bundles keep the map form and accept the array.
 */
let t: TestServer;
let admin: string;

let seq = 0;
const freshBase = () => `/api/w${Date.now().toString(36)}${(seq++).toString(36)}`;

async function define(body: Record<string, unknown>): Promise<any> {
  const res = await t.api('POST', '/api/endpoints', { token: admin, body: { accessType: 'public', ...body } });
  if (res.status !== 201) throw new Error(`endpoint create failed: ${res.text}`);
  return res.body.data;
}

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
});
afterAll(async () => {
  await t.close();
});

describe('a client that knows only the spec', () => {
  it('creates an endpoint with schema [] and reads it back as []', async () => {
    const created = await define({ name: 'Empty', path: `${freshBase()}/things`, method: 'GET', schema: [] });
    expect(created.schema).toEqual([]);
    expect((await t.api('GET', `/api/endpoints/${created._id}`, { token: admin })).body.data.schema).toEqual([]);
  });

  it('defines fields as an array, with children and refEndpointId, and they are served', async () => {
    const base = freshBase();
    const categoriesGet = await define({ name: 'Categories', path: `${base}/categories`, method: 'GET', schema: [{ name: 'title', type: 'string', required: true }] });
    await define({ name: 'Add category', path: `${base}/categories`, method: 'POST', schema: [{ name: 'title', type: 'string', required: true }] });
    const schema = [
      { name: 'title', type: 'string', required: true, order: 0, maxLength: 200 },
      { name: 'price', type: 'number', required: false, order: 1, defaultValue: 0, minimum: 0 },
      { name: 'category', type: 'reference', required: false, order: 2, refEndpointId: categoriesGet._id },
      { name: 'size', type: 'object', required: false, order: 3, children: [{ name: 'width', type: 'number', required: true, order: 0 }, { name: 'unit', type: 'string', required: false, order: 1, defaultValue: 'cm' }] },
    ];
    const products = await define({ name: 'Add product', path: `${base}/products`, method: 'POST', schema });
    expect(products.schema).toEqual([
      { name: 'title', type: 'string', required: true, order: 0, maxLength: 200 },
      { name: 'price', type: 'number', required: false, order: 1, defaultValue: 0, minimum: 0 },
      { name: 'category', type: 'reference', required: false, order: 2, refEndpointId: categoriesGet._id, ref: `${base}/categories` },
      { name: 'size', type: 'object', required: false, order: 3, children: [{ name: 'width', type: 'number', required: true, order: 0 }, { name: 'unit', type: 'string', required: false, order: 1, defaultValue: 'cm' }] },
    ]);
    const list = await t.api('GET', `/api/endpoints?search=${encodeURIComponent('Add product')}&limit=100`, { token: admin });
    expect(list.body.data.find((e: any) => e._id === products._id).schema).toEqual(products.schema);

    const category = await t.api('POST', `${base}/categories`, { body: { title: 'Books' } });
    expect(category.status, category.text).toBe(201);
    const product = await t.api('POST', `${base}/products`, { body: { title: 'Dune', category: category.body.data._id, size: { width: 12 } } });
    expect(product.status, product.text).toBe(201);
    expect(product.body.data).toMatchObject({ title: 'Dune', price: 0, category: category.body.data._id, size: { width: 12, unit: 'cm' } });
    const missing = await t.api('POST', `${base}/products`, { body: { title: 'Dune', size: {} } });
    expect(missing.status).toBe(400);
    expect(missing.body.details).toContainEqual({ field: 'size.width', message: 'is required' });
    const unknown = await t.api('POST', `${base}/products`, { body: { title: 'Dune', category: '0123456789abcdef01234567' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details.map((d: any) => d.field)).toEqual(['category']);
  });

  it('keeps fields in `order` (array position when omitted) and numbers them 0, 1, 2 on output', async () => {
    const created = await define({
      name: 'Ordered',
      path: `${freshBase()}/ordered`,
      method: 'POST',
      schema: [{ name: 'c', type: 'string', order: 30 }, { name: 'a', type: 'string', order: 10 }, { name: 'b', type: 'string', order: 20 }],
    });
    expect(created.schema.map((f: any) => [f.name, f.order])).toEqual([['a', 0], ['b', 1], ['c', 2]]);
    const unordered = await define({ name: 'Positional', path: `${freshBase()}/positional`, method: 'POST', schema: [{ name: 'z', type: 'string' }, { name: 'y', type: 'string' }] });
    expect(unordered.schema.map((f: any) => [f.name, f.order, f.required])).toEqual([['z', 0, false], ['y', 1, false]]);
  });

  it('a GET → PUT round trip of the whole definition changes nothing, nested items and children included', async () => {
    const base = freshBase();
    const tags = await define({ name: 'Tags', path: `${base}/tags`, method: 'GET', schema: [] });
    const created = await define({
      name: 'Round trip',
      path: `${base}/posts`,
      method: 'POST',
      schema: [
        { name: 'lines', type: 'array', items: { type: 'object', children: [{ name: 'sku', type: 'string', required: true }, { name: 'qty', type: 'number', integer: true }] }, maxItems: 5 },
        { name: 'tags', type: 'array', refEndpointId: tags._id },
        { name: 'meta', type: 'json', description: 'free form' },
      ],
    });
    expect(created.schema[0]).toEqual({
      name: 'lines', type: 'array', required: false, order: 0, maxItems: 5,
      items: { type: 'object', children: [{ name: 'sku', type: 'string', required: true, order: 0 }, { name: 'qty', type: 'number', required: false, order: 1, integer: true }] },
    });
    expect(created.schema[1]).toEqual({ name: 'tags', type: 'array', required: false, order: 1, refEndpointId: tags._id, items: { type: 'reference', refEndpointId: tags._id, ref: `${base}/tags` } });
    const { _id, isSystem: _s, callCount: _c, createdAt: _ca, updatedAt: _ua, ...writable } = created;
    const put = await t.api('PUT', `/api/endpoints/${_id}`, { token: admin, body: writable });
    expect(put.status, put.text).toBe(200);
    expect(put.body.data.schema).toEqual(created.schema);
    const exported = await t.api('GET', '/api/project/export?format=json', { token: admin });
    const inBundle = exported.body.data.endpoints.find((e: any) => e.path === `${base}/posts`);
    expect(inBundle.schema).toEqual({
      lines: { type: 'array', items: { type: 'object', children: { sku: { type: 'string', required: true }, qty: { type: 'number', integer: true } } }, maxItems: 5 },
      tags: { type: 'array', items: { type: 'reference', ref: `${base}/tags` } },
      meta: { type: 'json', description: 'free form' },
    });
  });

  it.each([
    { name: 'an unknown refEndpointId', schema: [{ name: 'category', type: 'reference', refEndpointId: '0123456789abcdef01234567' }], field: 'schema.category.refEndpointId' },
    { name: 'an unknown refEndpointId in children', schema: [{ name: 'a', type: 'object', children: [{ name: 'b', type: 'reference', refEndpointId: 'nope' }] }], field: 'schema.a.children.b.refEndpointId' },
    { name: 'a field without name', schema: [{ type: 'string' }], field: 'schema.0.name' },
    { name: 'a repeated name', schema: [{ name: 'a', type: 'string' }, { name: 'a', type: 'number' }], field: 'schema.1.name' },
    { name: 'an order that is not a number', schema: [{ name: 'a', type: 'string', order: 'first' }], field: 'schema.a.order' },
    { name: 'refEndpointId on a string field', schema: [{ name: 'a', type: 'string', refEndpointId: null }, { name: 'b', type: 'string', refEndpointId: 'x' }], field: 'schema.b.refEndpointId' },
    { name: 'an unknown type', schema: [{ name: 'a', type: 'text' }], field: 'schema.a.type' },
    { name: 'a reserved name', schema: [{ name: '_id', type: 'string' }], field: 'schema._id' },
  ])('$name is a 400 naming $field, and nothing is created', async ({ schema, field }) => {
    const path = `${freshBase()}/refused`;
    const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'Refused', path, method: 'POST', accessType: 'public', schema } });
    expect(res.status, res.text).toBe(400);
    expect(res.body.details.map((d: any) => d.field)).toContain(field);
    const list = await t.api('GET', `/api/endpoints?search=${encodeURIComponent(path)}`, { token: admin });
    expect(list.body.data).toEqual([]);
  });

  it('refEndpointId names the GET collection endpoint of the target path, else its POST', async () => {
    const base = freshBase();
    const post = await define({ name: 'Add', path: `${base}/targets`, method: 'POST', schema: [] });
    const pointing = await define({ name: 'Pointing', path: `${base}/pointing`, method: 'POST', schema: [{ name: 'target', type: 'reference', refEndpointId: post._id }] });
    expect(pointing.schema[0].refEndpointId).toBe(post._id);
    const get = await define({ name: 'List', path: `${base}/targets`, method: 'GET', schema: [] });
    expect((await t.api('GET', `/api/endpoints/${pointing._id}`, { token: admin })).body.data.schema[0]).toMatchObject({ refEndpointId: get._id, ref: `${base}/targets` });
  });

  it('a reference follows the path: when its target endpoint moves, refEndpointId names what serves the old path (null when nothing does)', async () => {
    const base = freshBase();
    const target = await define({ name: 'Target', path: `${base}/old`, method: 'GET', schema: [] });
    const pointing = await define({ name: 'Pointing', path: `${base}/pointing`, method: 'POST', schema: [{ name: 'target', type: 'reference', refEndpointId: target._id }] });
    const moved = await t.api('PUT', `/api/endpoints/${target._id}`, { token: admin, body: { path: `${base}/new` } });
    expect(moved.status, moved.text).toBe(200);
    expect((await t.api('GET', `/api/endpoints/${pointing._id}`, { token: admin })).body.data.schema[0]).toMatchObject({ refEndpointId: null, ref: `${base}/old` });
  });

  it('the map form is still accepted as input, and read back as the array', async () => {
    const created = await define({ name: 'Map', path: `${freshBase()}/map`, method: 'POST', schema: { title: { type: 'string', required: true }, tags: { type: 'array', items: { type: 'string' }, defaultValue: [] } } });
    expect(created.schema).toEqual([
      { name: 'title', type: 'string', required: true, order: 0 },
      { name: 'tags', type: 'array', required: false, order: 1, defaultValue: [], items: { type: 'string' } },
    ]);
  });

  it('examples, docs and /test work on a definition given as an array', async () => {
    const created = await define({ name: 'Try', path: `${freshBase()}/try`, method: 'POST', schema: [{ name: 'title', type: 'string', required: true }, { name: 'n', type: 'number', defaultValue: 1 }] });
    const examples = await t.api('GET', `/api/endpoints/${created._id}/examples`, { token: admin });
    expect(examples.status).toBe(200);
    const docs = await t.api('GET', `/api/endpoints/${created._id}/docs`, { token: admin });
    expect(docs.body.data.fields.map((f: any) => f.name)).toEqual(['title', 'n']);
    const tried = await t.api('POST', `/api/endpoints/${created._id}/test`, { token: admin, body: { body: { title: 'x' } } });
    expect(tried.body.data.status).toBe(201);
    expect(tried.body.data.body.data).toMatchObject({ title: 'x', n: 1 });
  });
});

describe('project bundles', () => {
  it('accept the array form with ref or refEndpointId, and export the map form', async () => {
    const base = freshBase();
    const target = await define({ name: 'Target', path: `${base}/target`, method: 'GET', schema: [] });
    const bundle = {
      endpoints: [
        { name: 'By id', path: `${base}/by-id`, method: 'POST', accessType: 'public', schema: [{ name: 'target', type: 'reference', refEndpointId: target._id, required: true, order: 0 }, { name: 'note', type: 'string', order: 1 }] },
        { name: 'By path', path: `${base}/by-path`, method: 'POST', accessType: 'public', schema: [{ name: 'target', type: 'reference', ref: `${base}/target` }] },
      ],
    };
    const applied = await t.api('POST', '/api/project/apply', { token: admin, body: bundle });
    expect(applied.status, applied.text).toBe(200);
    const again = await t.api('POST', '/api/project/plan', { token: admin, body: bundle });
    expect(again.status, again.text).toBe(200);
    expect(again.body.data.changes.filter((c: any) => c.key.includes(base))).toEqual([]);
    const exported = await t.api('GET', '/api/project/export?format=json', { token: admin });
    const byId = exported.body.data.endpoints.find((e: any) => e.path === `${base}/by-id`);
    expect(byId.schema).toEqual({ target: { type: 'reference', required: true, ref: `${base}/target` }, note: { type: 'string' } });
  });

  it('refuse an unknown refEndpointId, naming the field', async () => {
    const path = `${freshBase()}/bad`;
    const bundle = { endpoints: [{ name: 'Bad', path, method: 'POST', accessType: 'public', schema: [{ name: 'target', type: 'reference', refEndpointId: '0123456789abcdef01234567' }] }] };
    const res = await t.api('POST', '/api/project/apply', { token: admin, body: bundle });
    expect(res.status, res.text).toBe(400);
    expect(res.body.details.map((d: any) => d.field)).toContain(`endpoints[POST ${path}].schema.target.refEndpointId`);
  });
});
