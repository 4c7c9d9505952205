import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * `json` fields store any JSON value as is: `$`-keys, dotted keys, `__proto__` and `constructor`
 * included, given back equal after a JSON round trip, never read as operators or prototypes.
 * Every other type keeps refusing such keys. The server runs in this process, so a prototype
 * reached by a stored key would show here as `({}).x`.
 */
let t: TestServer;
let admin: string;
const base = `/api/json${Date.now().toString(36)}`;
const path = `${base}/docs`;

/** Sent as text: a JavaScript object literal would turn `__proto__` into a prototype. */
const ODD = '{"$set":{"a.b":1,"$inc":{"n":[{"$x":null}]}},"__proto__":{"x":1},"constructor":{"prototype":{"x":2}},"a.b":"dot","deep":[{"__proto__":{"x":3}}]}';
const other = '{"$unset":{"c.d":true},"__proto__":{"x":4}}';
const recordText = (meta: string, title = 'one') => `{"title":${JSON.stringify(title)},"meta":${meta},"nested":{"payload":${meta}},"list":[${meta},1]}`;
/** What a record's fields must equal: the input after a JSON round trip. */
const expected = (meta: string, title = 'one') => JSON.stringify(JSON.parse(recordText(meta, title)));
const fieldsOf = (data: Record<string, unknown>) => JSON.stringify({ title: data.title, meta: data.meta, nested: data.nested, list: data.list });
/** The record fields of a response body, parsed from its text so own `__proto__` keys stay keys. */
const dataOf = (text: string) => (JSON.parse(text) as { data: Record<string, unknown> }).data;

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  const schema = [
    { name: 'title', type: 'string' },
    { name: 'meta', type: 'json' },
    { name: 'nested', type: 'object', children: [{ name: 'payload', type: 'json' }] },
    { name: 'list', type: 'array', items: { type: 'json' } },
    { name: 'free', type: 'object' },
    { name: 'loose', type: 'array' },
  ];
  for (const method of ['GET', 'POST', 'PUT', 'PATCH']) {
    const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: `${method} docs`, path, method, accessType: 'public', schema } });
    if (res.status !== 201) throw new Error(res.text);
  }
});
afterAll(async () => {
  await t.close();
});

describe('json values over HTTP', () => {
  it('POST, GET, list, PUT and PATCH give a json value back equal, $-keys, dotted keys and __proto__ included', async () => {
    const created = await t.api('POST', path, { rawBody: recordText(ODD) });
    expect(created.status, created.text).toBe(201);
    const id = dataOf(created.text)._id as string;
    expect(fieldsOf(dataOf(created.text))).toBe(expected(ODD));

    const read = await t.api('GET', `${path}/${id}`);
    expect(fieldsOf(dataOf(read.text))).toBe(expected(ODD));
    const list = JSON.parse((await t.api('GET', path)).text) as { data: Array<Record<string, unknown>> };
    expect(fieldsOf(list.data.find((r) => r._id === id) ?? {})).toBe(expected(ODD));

    const replaced = await t.api('PUT', `${path}/${id}`, { rawBody: recordText(other, 'two') });
    expect(replaced.status, replaced.text).toBe(200);
    expect(fieldsOf(dataOf(replaced.text))).toBe(expected(other, 'two'));

    const patched = await t.api('PATCH', `${path}/${id}`, { rawBody: `{"meta":${ODD}}` });
    expect(patched.status, patched.text).toBe(200);
    expect(JSON.stringify(dataOf(patched.text).meta)).toBe(JSON.stringify(JSON.parse(ODD)));
    expect(fieldsOf(dataOf((await t.api('GET', `${path}/${id}`)).text))).toBe(JSON.stringify({ ...JSON.parse(expected(other, 'two')), meta: JSON.parse(ODD) }));
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('PATCH replaces a json value whole instead of merging it key by key', async () => {
    const created = await t.api('POST', path, { rawBody: '{"meta":{"a":1,"b":{"c":2}}}' });
    const id = dataOf(created.text)._id as string;
    const patched = await t.api('PATCH', `${path}/${id}`, { rawBody: '{"meta":{"b":{"d":3}}}' });
    expect(dataOf(patched.text).meta).toEqual({ b: { d: 3 } });
  });

  it.each([
    { name: 'a $-key in an object without children', body: '{"free":{"$where":"1"}}', field: 'free.$where' },
    { name: '__proto__ in an object without children', body: '{"free":{"__proto__":{"x":5}}}', field: 'free.__proto__' },
    { name: 'constructor in an array without items', body: '{"loose":[{"constructor":{"prototype":{"x":6}}}]}', field: 'loose.0.constructor' },
    { name: 'a top-level __proto__', body: '{"__proto__":{"x":7}}', field: '__proto__' },
    { name: 'a top-level $-key', body: '{"$set":{"title":"x"}}', field: '$set' },
  ])('$name is a 400 naming $field, and nothing is stored', async ({ body, field }) => {
    const before = JSON.parse((await t.api('GET', path)).text).meta.total as number;
    const res = await t.api('POST', path, { rawBody: body });
    expect(res.status, res.text).toBe(400);
    expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
    expect(JSON.parse((await t.api('GET', path)).text).meta.total).toBe(before);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('management bodies still refuse __proto__', async () => {
    const res = await t.api('POST', '/api/endpoints', { token: admin, rawBody: '{"name":"x","path":"/api/proto/x","method":"GET","accessType":"public","schema":[],"__proto__":{"x":8}}' });
    expect(res.status).toBe(400);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('json values through a handler', () => {
  const handlerPath = `${base}/handled`;
  beforeAll(async () => {
    const schema = [{ name: 'meta', type: 'json' }, { name: 'free', type: 'object' }];
    const code = 'async function handler(req, db) { const created = await db.create(req.body); return { status: 201, data: created }; }';
    const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'create via handler', path: handlerPath, method: 'POST', accessType: 'public', schema, handler: { enabled: true, code } } });
    if (res.status !== 201) throw new Error(res.text);
    const get = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'read handled', path: handlerPath, method: 'GET', accessType: 'public', schema } });
    if (get.status !== 201) throw new Error(get.text);
  });

  it('db.create stores a json value as is, and GET gives it back equal', async () => {
    const created = await t.api('POST', handlerPath, { rawBody: `{"meta":${ODD}}` });
    expect(created.status, created.text).toBe(201);
    const id = dataOf(created.text)._id as string;
    expect(JSON.stringify(dataOf(created.text).meta)).toBe(JSON.stringify(JSON.parse(ODD)));
    const read = await t.api('GET', `${handlerPath}/${id}`);
    expect(JSON.stringify(dataOf(read.text).meta)).toBe(JSON.stringify(JSON.parse(ODD)));
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('db.create refuses a $-key outside json fields, naming it', async () => {
    const code = 'async function handler(req, db) { try { await db.create({ free: { $gt: 1 } }); return { status: 200, data: "stored" }; } catch (e) { return { status: 400, data: e.message }; } }';
    const created = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'bad create', path: `${base}/bad`, method: 'POST', accessType: 'public', schema: [{ name: 'free', type: 'object' }], handler: { enabled: true, code } } });
    expect(created.status, created.text).toBe(201);
    const res = await t.api('POST', `${base}/bad`, { body: {} });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('free.$gt');
  });
});
