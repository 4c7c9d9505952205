import { validate } from '@readme/openapi-parser';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FILTER_OPERATORS } from '../../src/model/field-types/index.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * What GET /api/openapi.json says about list filters, indexes and nulls, checked against what the
 * live server does with the same requests: every filter the document offers works, and what it
 * does not offer is refused.
 */
let t: TestServer;
let admin: string;
const ITEMS = '/api/f/items';

const ITEM_SCHEMA = {
  title: { type: 'string' },
  code: { type: 'string', pattern: '^[A-Z]+$', enum: ['A', 'B'] },
  price: { type: 'number', integer: true },
  active: { type: 'boolean' },
  due: { type: 'datetime' },
  cat: { type: 'reference', ref: '/api/f/cats' },
  tags: { type: 'array', items: { type: 'string' } },
  nums: { type: 'array', items: { type: 'number' } },
  cats: { type: 'array', items: { type: 'reference', ref: '/api/f/cats' } },
  loose: { type: 'array' },
  objs: { type: 'array', items: { type: 'object', children: { a: { type: 'string' } } } },
  grid: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
  blobs: { type: 'array', items: { type: 'json' } },
  extra: { type: 'json', defaultValue: { nullable: true } },
  size: { type: 'object', children: { w: { type: 'number' }, color: { type: 'string' }, inner: { type: 'object', children: { depth: { type: 'number' } } } } },
  page: { type: 'number' },
  limit: { type: 'string' },
  total: { type: 'number' },
  sort: { type: 'string' },
  search: { type: 'string' },
  populate: { type: 'boolean' },
};

async function define(body: Record<string, unknown>): Promise<void> {
  const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: `${body.method} ${body.path}`, accessType: 'public', ...body } });
  expect(res.status, res.text).toBe(201);
}

async function openapi(query = ''): Promise<{ doc: any; text: string }> {
  const res = await t.api('GET', `/api/openapi.json${query}`);
  expect(res.status, res.text).toBe(200);
  return { doc: res.body, text: res.text };
}

/** The list's filter parameters by name, component references (parameters, their schemas) resolved. */
function filterParams(doc: any): Record<string, any> {
  const resolve = (value: any, kind: string) => (value?.$ref ? doc.components[kind][value.$ref.split('/').pop()] : value);
  const params = doc.paths[ITEMS].get.parameters.map((p: any) => resolve(p, 'parameters')).map((p: any) => ({ ...p, schema: resolve(p.schema, 'schemas') }));
  return Object.fromEntries(params.filter((p: any) => p.style === 'deepObject' || p.name.includes('[')).map((p: any) => [p.name, p]));
}

let catId: string;

/** A value the operand schema describes (a list of two for in and nin). */
function sample(schema: any, operator: string, eq: any): string {
  if (operator === 'in' || operator === 'nin') return [sample(eq, 'eq', eq), sample(eq, 'eq', eq)].join(',');
  if (schema.type === 'boolean') return 'true';
  if (schema.type === 'number') return '3';
  if (schema.pattern === '^[0-9a-f]{24}$') return catId;
  if (schema.pattern) return '2026-01-01T00:00:00Z'; // a datetime's
  return 'x';
}

const list = (query: string) => t.api('GET', `${ITEMS}?${query}`);

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  for (const method of ['GET', 'POST']) await define({ method, path: '/api/f/cats', schema: { name: { type: 'string' } } });
  for (const method of ['GET', 'POST']) await define({ method, path: ITEMS, schema: ITEM_SCHEMA });
  // The unique and indexed flags on the GET only: the path's indexes are the union.
  await define({ method: 'GET', path: '/api/t/u', schema: { sku: { type: 'string', unique: true }, n: { type: 'number', indexed: true } } });
  for (const method of ['POST', 'PUT', 'PATCH']) await define({ method, path: '/api/t/u', schema: { sku: { type: 'string' }, n: { type: 'number' }, note: { type: 'string' } } });

  catId = (await t.api('POST', '/api/f/cats', { body: { name: 'Tools' } })).body.data._id;
  const created = await t.api('POST', ITEMS, {
    body: { title: 'Saw', price: 3, tags: ['x'], nums: [3], cats: [catId], loose: ['x', 3], objs: [{ a: 'x' }], grid: [['x']], blobs: ['x'], size: { w: 3, color: 'red', inner: { depth: 2 } }, page: 3 },
  });
  expect(created.status, created.text).toBe(201);
  expect((await t.api('POST', ITEMS, { body: { title: 'Nail', price: 1, page: 1, size: { w: 1, color: 'blue' } } })).status).toBe(201);
});

afterAll(async () => {
  await t.close();
});

describe('filter parameters say exactly what the server takes', () => {
  it('every operator a filter parameter lists is answered 200, and every other one is a 400', async () => {
    const params = filterParams((await openapi()).doc);
    expect(Object.keys(params).length).toBeGreaterThan(20);
    for (const param of Object.values(params)) {
      if (param.style !== 'deepObject') continue;
      const properties = param.schema.properties as Record<string, any>;
      for (const operator of FILTER_OPERATORS) {
        const operand = properties[operator];
        const res = await list(`${param.name}[${operator}]=${encodeURIComponent(sample(operand ?? {}, operator, properties.eq ?? {}))}`);
        if (operand) expect(res.status, `${param.name}[${operator}]: ${res.text}`).toBe(200);
        else expect(res.status, `${param.name}[${operator}] is not offered`).toBe(400);
      }
    }
  });

  it('offers `name=value` exactly where eq is taken, and says so only there', async () => {
    const params = filterParams((await openapi()).doc);
    for (const param of Object.values(params)) {
      if (param.style !== 'deepObject') continue;
      const eq = param.schema.properties.eq;
      expect(param.description.includes(`${param.name}=value`), param.name).toBe(eq !== undefined);
      const res = await list(`${param.name}=${encodeURIComponent(sample(eq ?? {}, 'eq', eq ?? {}))}`);
      expect(res.status, `${param.name}=value: ${res.text}`).toBe(eq ? 200 : 400);
    }
    expect((await list('tags=x')).body.error).toBe('Query parameter "tags": tags takes has, exists');
  });

  it.each([
    ['title', true],
    ['price', true],
    ['cat', true],
    ['_id', true],
    ['active', false],
    ['due', false],
    ['createdAt', false],
    ['tags', false],
    ['extra', false],
    ['size', false],
  ])('says that in and nin take comma-separated values on %s: %s', async (name, takes) => {
    const param = filterParams((await openapi()).doc)[name];
    expect(param.description.includes('in and nin take comma-separated values')).toBe(takes);
    expect(Object.hasOwn(param.schema.properties, 'in')).toBe(takes);
  });

  it.each([
    { field: 'tags', has: { type: 'string' }, query: 'x' },
    { field: 'nums', has: { type: 'number' }, query: '3' },
    { field: 'cats', has: { type: 'string', pattern: '^[0-9a-f]{24}$' }, query: 'cat' },
    { field: 'loose', has: { type: 'string' }, query: 'x' },
    { field: 'blobs', has: { type: 'string' }, query: 'x' },
  ])('offers has on $field with an operand of the item type, and it finds the record', async ({ field, has, query }) => {
    const param = filterParams((await openapi()).doc)[field];
    expect(param.schema.properties.has).toMatchObject(has);
    expect(Object.keys(param.schema.properties)).toEqual(['has', 'exists']);
    const res = await list(`${field}[has]=${query === 'cat' ? catId : query}`);
    expect(res.body.data.map((r: any) => r.title)).toEqual(['Saw']);
  });

  it('says that has on an untyped array or an array of json matches text items only', async () => {
    const params = filterParams((await openapi()).doc);
    expect(params.loose.description).toContain('has matches text items only');
    expect(params.blobs.description).toContain('has matches text items only');
    expect(params.tags.description).not.toContain('text items only');
    expect((await list('loose[has]=3')).body.data).toEqual([]); // the item 3 is a number
  });

  it.each(['objs', 'grid'])('does not offer has on %s, where no item can equal a query value, and the server refuses it', async (field) => {
    const param = filterParams((await openapi()).doc)[field];
    expect(Object.keys(param.schema.properties)).toEqual(['exists']);
    expect(param.description).toBe(`filter on ${field}: ${field}[op]=value with op one of exists`);
    const res = await list(`${field}[has]=x`);
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toBe(`Query parameter "${field}[has]": ${field} takes exists`);
  });

  it('refers to one schema per kind of field: every string field takes the same operands', async () => {
    const { doc } = await openapi();
    const byName = Object.fromEntries(doc.paths[ITEMS].get.parameters.filter((p: any) => p.name).map((p: any) => [p.name, p]));
    expect(byName.title.schema).toEqual({ $ref: '#/components/schemas/Filter_string' });
    expect(byName.code.schema).toEqual(byName.title.schema);
    expect(byName['size.color'].schema).toEqual(byName.title.schema);
    expect(byName.nums.schema).toEqual({ $ref: '#/components/schemas/Filter_array_of_number' });
    expect(Object.keys(doc.components.schemas.Filter_string.properties)).toEqual(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists']);
  });

  it('types the operands of scalar fields as the filter reads them', async () => {
    const params = filterParams((await openapi()).doc);
    expect(params.price.schema.properties.gte).toEqual({ type: 'number' });
    expect(params.active.schema.properties.eq).toEqual({ type: 'boolean' });
    expect(params.due.schema.properties.lt).toEqual({ type: 'string', pattern: expect.stringMatching(/^\^\(\\d\{4\}\)/) });
    expect(params.size.schema.properties).toEqual({ exists: { type: 'boolean' } });
    expect(params.cat.schema.properties.eq).toEqual({ type: 'string', pattern: '^[0-9a-f]{24}$' });
    expect(params.title.schema.properties.gte).toEqual({ type: 'string' });
    // A string field's pattern and enum constrain what is stored, not a range's bound.
    expect(params.code.schema.properties.gte).toEqual({ type: 'string' });
    expect(params.title.schema.properties.exists).toEqual({ type: 'boolean' });
  });
});

describe('filters on object children, record fields and fields named like list parameters', () => {
  it.each([
    ['size.w', 'size.w[gt]=2', ['Saw']],
    ['size.color', 'size.color=red', ['Saw']],
    ['size.inner.depth', 'size.inner.depth[lte]=2', ['Saw']],
    ['size.inner', 'size.inner[exists]=false', ['Nail']],
  ])('documents %s, and %s works', async (name, query, titles) => {
    const params = filterParams((await openapi()).doc);
    expect(params[name]).toMatchObject({ in: 'query', style: 'deepObject', explode: true });
    expect((await list(query)).body.data.map((r: any) => r.title)).toEqual(titles);
  });

  it('documents _id, createdAt and updatedAt once, as component parameters every list refers to', async () => {
    const { doc } = await openapi();
    const refs = doc.paths[ITEMS].get.parameters.filter((p: any) => p.$ref).map((p: any) => p.$ref);
    expect(refs).toEqual(['_id', 'createdAt', 'updatedAt'].map((name) => `#/components/parameters/filter_${name}`));
    const params = filterParams(doc);
    expect(Object.keys(params._id.schema.properties)).toEqual(['eq', 'ne', 'in', 'nin']);
    expect(Object.keys(params.createdAt.schema.properties)).toEqual(['eq', 'ne', 'gt', 'gte', 'lt', 'lte']);
    expect(Object.keys(params.updatedAt.schema.properties)).toEqual(['eq', 'ne', 'gt', 'gte', 'lt', 'lte']);
    expect((await list('createdAt[gte]=2020-01-01&sort=title')).body.data.map((r: any) => r.title)).toEqual(['Nail', 'Saw']);
    expect((await list('createdAt[exists]=true')).status).toBe(400);
  });

  it.each(['page', 'limit', 'total', 'sort', 'search', 'populate'])('documents the field %s as %s[op]= parameters beside the list parameter', async (name) => {
    const { doc } = await openapi();
    const parameters = doc.paths[ITEMS].get.parameters.filter((p: any) => p.name === name || p.name?.startsWith(`${name}[`));
    expect(parameters[0].style).toBeUndefined(); // the list parameter itself, not a filter
    expect(parameters.filter((p: any) => p.name === name)).toHaveLength(1);
    expect(parameters.slice(1).map((p: any) => p.name)).toContain(`${name}[eq]`);
    expect(parameters.slice(1).every((p: any) => p.in === 'query' && p.schema.type)).toBe(true);
  });

  it('a documented page[eq] filters on the field page, while page stays the page number', async () => {
    const params = filterParams((await openapi()).doc);
    expect(params['page[eq]'].schema).toEqual({ type: 'number' });
    expect(params['populate[eq]'].schema).toEqual({ type: 'boolean' });
    expect((await list('page[eq]=3')).body.data.map((r: any) => r.title)).toEqual(['Saw']);
    expect((await list('page=2')).body).toMatchObject({ data: [], meta: { page: 2 } });
  });
});

describe('indexes are the union of the path\'s definitions', () => {
  it('a POST whose GET marks sku unique lists the 409 and marks sku, as a second POST of the same sku gets a 409', async () => {
    const { doc } = await openapi();
    const operations = doc.paths['/api/t/u'];
    expect(operations.post.responses['409'].description).toContain('sku');
    expect(doc.paths['/api/t/u/{id}'].put.responses['409'].description).toContain('sku');
    expect(doc.paths['/api/t/u/{id}'].patch.responses['409'].description).toContain('sku');
    const input = doc.components.schemas.post_api_t_u_input.properties;
    expect(input.sku).toMatchObject({ 'x-dyn-unique': true, 'x-dyn-indexed': true, description: expect.stringContaining('unique') });
    expect(input.n).toMatchObject({ 'x-dyn-indexed': true });
    expect(input.n).not.toHaveProperty('x-dyn-unique');
    expect(input.note).not.toHaveProperty('x-dyn-indexed');
    expect(doc.components.schemas.patch_api_t_u_patch.properties.sku['x-dyn-unique']).toBe(true);

    expect((await t.api('POST', '/api/t/u', { body: { sku: 'A-1' } })).status).toBe(201);
    expect((await t.api('POST', '/api/t/u', { body: { sku: 'A-1' } })).status).toBe(409);
  });

  it('a unique field marked only on a disabled definition of the path still shows its 409, which the server gives', async () => {
    await define({ method: 'GET', path: '/api/t/off', enabled: false, schema: { code: { type: 'string', unique: true } } });
    await define({ method: 'POST', path: '/api/t/off', schema: { code: { type: 'string' } } });
    const { doc } = await openapi();
    expect(doc.paths['/api/t/off'].get).toBeUndefined();
    expect(doc.paths['/api/t/off'].post.responses['409'].description).toContain('code');
    expect(doc.components.schemas.post_api_t_off_input.properties.code['x-dyn-unique']).toBe(true);
    expect((await t.api('POST', '/api/t/off', { body: { code: 'A' } })).status).toBe(201);
    expect((await t.api('POST', '/api/t/off', { body: { code: 'A' } })).status).toBe(409);
  });

  it('describes no 409 where no field is unique', async () => {
    const { doc } = await openapi();
    expect(doc.paths[ITEMS].post.responses['409']).toBeUndefined();
  });
});

describe('nulls in 3.0.3 and 3.1', () => {
  it('3.1 has no nullable: meta.total is an integer or null, and a page with total=none validates against it', async () => {
    const { doc, text } = await openapi('?version=3.1');
    expect(doc.components.schemas.Meta.properties.total).toEqual({ type: ['integer', 'null'], minimum: 0, description: 'the number of matching records; null with `total=none`' });
    // The `nullable` left is data: the json field's default value, as it was defined.
    expect(text.match(/"nullable"/g)).toHaveLength(text.match(/"default":\{"nullable":true\}/g)?.length ?? -1);
    expect(doc.components.schemas.post_api_f_items_input.properties.extra.default).toEqual({ nullable: true });

    const ajv = new Ajv({ strict: false });
    ajv.addSchema(doc, 'openapi.json');
    const page = ajv.compile({ $ref: `openapi.json#/paths/${encodeURIComponent('~1api~1f~1items')}/get/responses/200/content/application~1json/schema` });
    const res = await list('total=none');
    expect(res.body.meta.total).toBeNull();
    expect(page(res.body), JSON.stringify(page.errors)).toBe(true);
  });

  it('3.0.3 keeps nullable', async () => {
    const { doc } = await openapi();
    expect(doc.components.schemas.Meta.properties.total).toEqual({ type: 'integer', minimum: 0, nullable: true, description: 'the number of matching records; null with `total=none`' });
  });

  it('both documents pass the OpenAPI validator', async () => {
    for (const query of ['', '?version=3.1']) {
      const result = await validate(structuredClone((await openapi(query)).doc));
      expect(result.valid ? [] : result.errors, JSON.stringify(result)).toEqual([]);
    }
  });
});
