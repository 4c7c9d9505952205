import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type ApiResponse, type TestServer } from '../helpers/test-server.ts';

/**
 * Field types through POST: each accepts its right values (stored and read back as sent) and
 * refuses wrong ones with a 400 whose `error` names the field and the reason and whose
 * `details` lists every failure. A refused write stores nothing.
 */
let t: TestServer;
let admin: string;

const NO_SUCH_ID = 'ffffffffffffffffffffffff';

async function define(path: string, methods: readonly string[], schema: Record<string, unknown>): Promise<void> {
  for (const method of methods) {
    const res = await t.api('POST', '/api/endpoints', {
      token: admin,
      body: { name: `${method} ${path}`, path, method, accessType: 'public', schema },
    });
    if (res.status !== 201) throw new Error(`defining ${method} ${path} failed: ${res.status} ${res.text}`);
  }
}

async function total(path: string): Promise<number> {
  const res = await t.api('GET', `${path}?limit=1`);
  expect(res.status, res.text).toBe(200);
  return res.body.meta.total;
}

function expectInvalid(res: ApiResponse, field: string, message: string): void {
  expect(res.status, res.text).toBe(400);
  expect(res.body).toEqual({ success: false, error: `Invalid record: ${field} ${message}`, details: expect.any(Array) });
  expect(res.body.details).toContainEqual({ field, message });
}

/** Each case is an endpoint `/api/ft/<case>` whose schema is `{v: def}`. */
interface Case {
  def: Record<string, unknown>;
  good: unknown[];
  /** [value, failing field (below v), message] */
  bad: Array<[unknown, string, string]>;
}

const MUST_BE_DATE = 'must be an ISO 8601 date or date-time string';

const CASES: Record<string, Case> = {
  string: {
    def: { type: 'string' },
    good: ['hello', '', 'ünïcödé ✓'],
    bad: [[42, 'v', 'must be a string'], [true, 'v', 'must be a string'], [null, 'v', 'must be a string'], [['a'], 'v', 'must be a string'], [{}, 'v', 'must be a string']],
  },
  'string-length': {
    def: { type: 'string', minLength: 2, maxLength: 5 },
    good: ['ab', 'abcde'],
    bad: [['a', 'v', 'must be at least 2 characters long'], ['abcdef', 'v', 'must be at most 5 characters long']],
  },
  'string-pattern': {
    def: { type: 'string', pattern: '^[A-Z]{3}$' },
    good: ['ABC', 'XYZ'],
    bad: [['abc', 'v', 'must match the pattern ^[A-Z]{3}$'], ['ABCD', 'v', 'must match the pattern ^[A-Z]{3}$']],
  },
  // A pattern that makes a backtracking engine take exponential time: RE2 answers at once.
  'string-pattern-catastrophic': {
    def: { type: 'string', pattern: '^(a+)+$' },
    good: ['a', 'aaaa'],
    bad: [[`${'a'.repeat(50_000)}!`, 'v', 'must match the pattern ^(a+)+$']],
  },
  'string-pattern-unicode-escape': {
    def: { type: 'string', pattern: '^caf\\u00e9 \\u{1F600}$' },
    good: ['café 😀'],
    bad: [['cafe 😀', 'v', 'must match the pattern ^caf\\u00e9 \\u{1F600}$']],
  },
  'string-enum': {
    def: { type: 'string', enum: ['red', 'green'] },
    good: ['red', 'green'],
    bad: [['blue', 'v', 'must be one of: red, green'], ['RED', 'v', 'must be one of: red, green']],
  },
  number: {
    def: { type: 'number' },
    good: [0, -3, 1.5, 1e21],
    bad: [['1', 'v', 'must be a number'], [null, 'v', 'must be a number'], [true, 'v', 'must be a number'], [[1], 'v', 'must be a number']],
  },
  'number-range': {
    def: { type: 'number', minimum: 0, maximum: 10 },
    good: [0, 10, 5.5],
    bad: [[-1, 'v', 'must be at least 0'], [10.01, 'v', 'must be at most 10']],
  },
  'number-integer': {
    def: { type: 'number', integer: true },
    good: [3, -7, 0],
    bad: [[3.5, 'v', 'must be an integer'], ['3', 'v', 'must be an integer']],
  },
  boolean: {
    def: { type: 'boolean' },
    good: [true, false],
    bad: [['true', 'v', 'must be a boolean'], [0, 'v', 'must be a boolean'], [null, 'v', 'must be a boolean']],
  },
  array: {
    def: { type: 'array' },
    good: [[], [1, 'a', { b: [null] }]],
    bad: [['a', 'v', 'must be an array'], [{ 0: 'a' }, 'v', 'must be an array'], [null, 'v', 'must be an array']],
  },
  'array-items': {
    def: { type: 'array', items: { type: 'string', maxLength: 3 } },
    good: [['a', 'bc']],
    bad: [[['a', 1], 'v.1', 'must be a string'], [['a', 'b', 'long'], 'v.2', 'must be at most 3 characters long']],
  },
  'array-size': {
    def: { type: 'array', minItems: 1, maxItems: 2 },
    good: [[1], [1, 2]],
    bad: [[[], 'v', 'must have at least 1 item'], [[1, 2, 3], 'v', 'must have at most 2 items']],
  },
  object: {
    def: { type: 'object' },
    good: [{}, { a: { b: [1, 2] }, c: null }],
    bad: [[[], 'v', 'must be an object'], ['x', 'v', 'must be an object'], [null, 'v', 'must be an object']],
  },
  'object-children': {
    def: { type: 'object', children: { name: { type: 'string', required: true }, qty: { type: 'number' } } },
    good: [{ name: 'a' }, { name: 'b', qty: 2 }],
    bad: [
      [{}, 'v.name', 'is required'],
      [{ name: 'a', extra: 1 }, 'v.extra', 'is not a field of v'],
      [{ name: 1 }, 'v.name', 'must be a string'],
      [{ name: 'a', qty: 'two' }, 'v.qty', 'must be a number'],
    ],
  },
  datetime: {
    def: { type: 'datetime' },
    good: ['2026-11-21', '2026-11-21T10:00:00Z', '2026-11-21T10:00', '2026-11-21T10:00:00.123+02:00', '2024-02-29'],
    bad: [
      ['2026-13-01', 'v', MUST_BE_DATE],
      ['yesterday', 'v', MUST_BE_DATE],
      [123, 'v', MUST_BE_DATE],
      ['2026-02-30', 'v', MUST_BE_DATE],
      ['2026-11-21T25:00:00Z', 'v', MUST_BE_DATE],
      ['21/11/2026', 'v', MUST_BE_DATE],
      ['', 'v', MUST_BE_DATE],
    ],
  },
  json: {
    def: { type: 'json' },
    good: [1, 'text', null, false, [1, { a: null }], { deep: { list: [true, 2.5, 'x'] }, empty: {} }],
    bad: [],
  },
};

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  for (const [name, c] of Object.entries(CASES)) await define(`/api/ft/${name}`, ['GET', 'POST'], { v: c.def });
});
afterAll(async () => {
  await t.close();
});

const goodRows = Object.entries(CASES).flatMap(([name, c]) => c.good.map((value) => ({ name, value, shown: JSON.stringify(value) })));
const badRows = Object.entries(CASES).flatMap(([name, c]) => c.bad.map(([value, field, message]) => ({ name, value, field, message, shown: JSON.stringify(value) })));

describe('right values are stored as sent', () => {
  it.each(goodRows)('$name accepts $shown', async ({ name, value }) => {
    const res = await t.api('POST', `/api/ft/${name}`, { body: { v: value } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.v).toEqual(value);
    const read = await t.api('GET', `/api/ft/${name}/${res.body.data._id}`);
    expect(read.body.data).toEqual(res.body.data);
  });
});

describe('wrong values are a 400 that names the field and writes nothing', () => {
  it.each(badRows)('$name refuses $shown: $field $message', async ({ name, value, field, message }) => {
    const before = await total(`/api/ft/${name}`);
    expectInvalid(await t.api('POST', `/api/ft/${name}`, { body: { v: value } }), field, message);
    expect(await total(`/api/ft/${name}`)).toBe(before);
  });

  it('a string is capped at 1,000,000 characters without maxLength', async () => {
    const before = await total('/api/ft/string');
    expect((await t.api('POST', '/api/ft/string', { body: { v: 'x'.repeat(1_000_000) } })).status).toBe(201);
    expectInvalid(await t.api('POST', '/api/ft/string', { body: { v: 'x'.repeat(1_000_001) } }), 'v', 'must be at most 1000000 characters long');
    expect(await total('/api/ft/string')).toBe(before + 1);
  });
});

describe('references', () => {
  let target: string;
  let otherPath: string;
  beforeAll(async () => {
    await define('/api/ft/targets', ['GET', 'POST', 'DELETE'], { name: { type: 'string' } });
    await define('/api/ft/others', ['POST'], { name: { type: 'string' } });
    await define('/api/ft/links', ['GET', 'POST', 'PATCH'], {
      to: { type: 'reference', ref: '/api/ft/targets', required: true },
      many: { type: 'array', items: { type: 'reference', ref: '/api/ft/targets' } },
      sub: { type: 'object', children: { c: { type: 'reference', ref: '/api/ft/targets' } } },
      lines: { type: 'array', items: { type: 'object', children: { c: { type: 'reference', ref: '/api/ft/targets' } } } },
    });
    target = (await t.api('POST', '/api/ft/targets', { body: { name: 'target' } })).body.data._id;
    otherPath = (await t.api('POST', '/api/ft/others', { body: { name: 'elsewhere' } })).body.data._id;
  });

  it('accepts the id of an existing record at ref', async () => {
    const res = await t.api('POST', '/api/ft/links', { body: { to: target, many: [target] } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({ to: target, many: [target] });
  });

  it.each([
    ['an unknown id', () => NO_SUCH_ID],
    ['the id of a record at another path', () => otherPath],
  ])('refuses %s (400) and writes nothing', async (_label, id) => {
    const before = await total('/api/ft/links');
    const res = await t.api('POST', '/api/ft/links', { body: { to: id() } });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toBe('Invalid record: to references a record that does not exist in /api/ft/targets');
    expect(res.body.details).toEqual([{ field: 'to', message: `unknown record ${id()} in /api/ft/targets` }]);
    expect(await total('/api/ft/links')).toBe(before);
  });

  it('refuses the id of a deleted record', async () => {
    const doomed = (await t.api('POST', '/api/ft/targets', { body: { name: 'doomed' } })).body.data._id;
    expect((await t.api('DELETE', `/api/ft/targets/${doomed}`)).status).toBe(200);
    const before = await total('/api/ft/links');
    const res = await t.api('POST', '/api/ft/links', { body: { to: doomed } });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatch(/^Invalid record: to references a record that does not exist/);
    expect(await total('/api/ft/links')).toBe(before);
  });

  it('refuses an unknown id inside an array of references', async () => {
    const before = await total('/api/ft/links');
    const res = await t.api('POST', '/api/ft/links', { body: { to: target, many: [target, NO_SUCH_ID] } });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toBe('Invalid record: many.1 references a record that does not exist in /api/ft/targets');
    expect(await total('/api/ft/links')).toBe(before);
  });

  it('checks references inside objects and array items too, naming where they are', async () => {
    const ok = await t.api('POST', '/api/ft/links', { body: { to: target, sub: { c: target }, lines: [{ c: target }, {}] } });
    expect(ok.status, ok.text).toBe(201);
    const before = await total('/api/ft/links');
    for (const [body, field] of [
      [{ to: target, sub: { c: NO_SUCH_ID } }, 'sub.c'],
      [{ to: target, lines: [{ c: target }, { c: NO_SUCH_ID }] }, 'lines.1.c'],
    ] as const) {
      const res = await t.api('POST', '/api/ft/links', { body });
      expect(res.status, res.text).toBe(400);
      expect(res.body).toEqual({ success: false, error: `Invalid record: ${field} references a record that does not exist in /api/ft/targets`, details: [{ field, message: `unknown record ${NO_SUCH_ID} in /api/ft/targets` }] });
    }
    expect(await total('/api/ft/links')).toBe(before);
    // A PATCH checks what it sends: here the nested reference, not the record's other fields.
    const id = ok.body.data._id;
    const patched = await t.api('PATCH', `/api/ft/links/${id}`, { body: { lines: [{ c: NO_SUCH_ID }] } });
    expect(patched.status).toBe(400);
    expect(patched.body.details).toEqual([{ field: 'lines.0.c', message: `unknown record ${NO_SUCH_ID} in /api/ft/targets` }]);
  });

  it("lists every reference to no record, beside the body's other problems (one 400, not one per try)", async () => {
    const before = await total('/api/ft/links');
    const both = await t.api('POST', '/api/ft/links', { body: { to: NO_SUCH_ID, many: [target, NO_SUCH_ID] } });
    expect(both.status, both.text).toBe(400);
    expect(both.body).toEqual({
      success: false,
      error: 'Invalid record: to references a record that does not exist in /api/ft/targets',
      details: [
        { field: 'to', message: `unknown record ${NO_SUCH_ID} in /api/ft/targets` },
        { field: 'many.1', message: `unknown record ${NO_SUCH_ID} in /api/ft/targets` },
      ],
    });
    const withInvalid = await t.api('POST', '/api/ft/links', { body: { to: NO_SUCH_ID, sub: { c: 5 }, lines: [{ c: NO_SUCH_ID }] } });
    expect(withInvalid.status, withInvalid.text).toBe(400);
    expect(withInvalid.body.error).toBe('Invalid record: sub.c must be a record id (24 lowercase hex characters)');
    expect(withInvalid.body.details.map((detail: { field: string }) => detail.field)).toEqual(['sub.c', 'to', 'lines.0.c']);
    expect(await total('/api/ft/links')).toBe(before);
    const id = (await t.api('POST', '/api/ft/links', { body: { to: target } })).body.data._id;
    const patched = await t.api('PATCH', `/api/ft/links/${id}`, { body: { sub: 'x', lines: [{ c: NO_SUCH_ID }] } });
    expect(patched.status, patched.text).toBe(400);
    expect(patched.body.details.map((detail: { field: string }) => detail.field)).toEqual(['sub', 'lines.0.c']);
    expect((await t.api('GET', `/api/ft/links/${id}`)).body.data).toMatchObject({ to: target });
  });

  it.each([
    ['abc'],
    [NO_SUCH_ID.toUpperCase()],
    [`${NO_SUCH_ID}0`],
    [42],
    [null],
    [{ $ne: null }],
  ])('refuses the malformed id %j (400)', async (value) => {
    const before = await total('/api/ft/links');
    const res = await t.api('POST', '/api/ft/links', { body: { to: value } });
    expect(res.status, res.text).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.error).toMatch(/^(Invalid record: to must be a record id \(24 lowercase hex characters\)|Request body)/);
    expect(await total('/api/ft/links')).toBe(before);
  });

  it('refuses a missing required reference', async () => {
    expectInvalid(await t.api('POST', '/api/ft/links', { body: { many: [] } }), 'to', 'is required');
  });

  it('PATCH checks a changed reference too', async () => {
    const link = (await t.api('POST', '/api/ft/links', { body: { to: target } })).body.data;
    const res = await t.api('PATCH', `/api/ft/links/${link._id}`, { body: { to: NO_SUCH_ID } });
    expect(res.status, res.text).toBe(400);
    expect((await t.api('GET', `/api/ft/links/${link._id}`)).body.data).toEqual(link);
  });
});

describe('required, defaults and unknown fields', () => {
  beforeAll(async () => {
    await define('/api/ft/defaults', ['GET', 'POST', 'PUT'], {
      title: { type: 'string', required: true },
      status: { type: 'string', defaultValue: 'draft' },
      tags: { type: 'array', items: { type: 'string' }, defaultValue: [] },
      count: { type: 'number', defaultValue: 0 },
      address: { type: 'object', children: { city: { type: 'string' }, country: { type: 'string', defaultValue: 'NL' } } },
    });
    // A PATCH definition on the same path with a default the POST definition does not have.
    await define('/api/ft/defaults', ['PATCH'], {
      title: { type: 'string', required: true },
      status: { type: 'string', defaultValue: 'draft' },
      tags: { type: 'array', items: { type: 'string' }, defaultValue: [] },
      count: { type: 'number', defaultValue: 0 },
      address: { type: 'object', children: { city: { type: 'string' }, country: { type: 'string', defaultValue: 'NL' } } },
      rating: { type: 'number', defaultValue: 5 },
    });
  });

  it('a required field that is omitted is a 400 and writes nothing', async () => {
    const before = await total('/api/ft/defaults');
    expectInvalid(await t.api('POST', '/api/ft/defaults', { body: { status: 'x' } }), 'title', 'is required');
    expect(await total('/api/ft/defaults')).toBe(before);
  });

  it('defaults fill omitted fields on create, nested object children included', async () => {
    const res = await t.api('POST', '/api/ft/defaults', { body: { title: 'a', address: { city: 'Delft' } } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({ title: 'a', status: 'draft', tags: [], count: 0, address: { city: 'Delft', country: 'NL' } });
  });

  it('defaults do not replace values that were sent', async () => {
    const res = await t.api('POST', '/api/ft/defaults', { body: { title: 'b', status: 'live', tags: ['x'], count: 3 } });
    expect(res.body.data).toMatchObject({ status: 'live', tags: ['x'], count: 3 });
  });

  it('each record gets its own copy of a default', async () => {
    const first = (await t.api('POST', '/api/ft/defaults', { body: { title: 'c' } })).body.data;
    const second = (await t.api('POST', '/api/ft/defaults', { body: { title: 'd' } })).body.data;
    expect(first.tags).toEqual([]);
    expect(second.tags).toEqual([]);
  });

  it('defaults are not applied on PATCH', async () => {
    const created = (await t.api('POST', '/api/ft/defaults', { body: { title: 'e' } })).body.data;
    expect(created).not.toHaveProperty('rating');
    const res = await t.api('PATCH', `/api/ft/defaults/${created._id}`, { body: { title: 'e2' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({ ...created, title: 'e2', updatedAt: expect.any(String) });
    expect(res.body.data).not.toHaveProperty('rating');
  });

  it('defaults are not applied on PUT: a replace keeps what it is sent (the spec: defaults on create)', async () => {
    const created = (await t.api('POST', '/api/ft/defaults', { body: { title: 'g' } })).body.data;
    expect(created).toMatchObject({ status: 'draft', count: 0 });
    const res = await t.api('PUT', `/api/ft/defaults/${created._id}`, { body: { title: 'g2' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({ _id: created._id, title: 'g2', createdAt: created.createdAt, updatedAt: expect.any(String) });
  });

  it('fields not in the schema are a 400 naming them, and nothing is written', async () => {
    const before = await total('/api/ft/defaults');
    const res = await t.api('POST', '/api/ft/defaults', { body: { title: 'f', colour: 'red', size: 2 } });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toBe('Invalid record: colour is not a field of this endpoint');
    expect(res.body.details).toEqual(expect.arrayContaining([
      { field: 'colour', message: 'is not a field of this endpoint' },
      { field: 'size', message: 'is not a field of this endpoint' },
    ]));
    expect(await total('/api/ft/defaults')).toBe(before);
  });

  it('every failure is listed in details; error names the first', async () => {
    const res = await t.api('POST', '/api/ft/defaults', { body: { status: 1, tags: ['ok', 2], count: 'many', extra: true } });
    expect(res.status, res.text).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.details).toEqual(expect.arrayContaining([
      { field: 'title', message: 'is required' },
      { field: 'status', message: 'must be a string' },
      { field: 'tags.1', message: 'must be a string' },
      { field: 'count', message: 'must be a number' },
      { field: 'extra', message: 'is not a field of this endpoint' },
    ]));
    expect(res.body.details).toHaveLength(5);
    const first = res.body.details[0];
    expect(res.body.error).toBe(`Invalid record: ${first.field} ${first.message}`);
  });
});
