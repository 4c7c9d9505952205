import { Ajv } from 'ajv';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AppError } from '../../src/lib/errors.ts';
import { isIsoDateTime } from '../../src/model/field-types/datetime.ts';
import { FIELD_TYPES } from '../../src/model/field-types/index.ts';
import {
  compileRecordSchema,
  exampleRecord,
  exampleValue,
  validateEndpointSchema,
  type EndpointSchema,
  type FieldDef,
} from '../../src/model/record-schema.ts';

/** The AppError thrown by fn (fails the test when nothing is thrown). */
function thrown(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected an AppError, nothing was thrown');
}

const compile = (schema: Record<string, unknown>) => compileRecordSchema(validateEndpointSchema(schema));
const ID = '65a1b2c3d4e5f60718293a4b';

describe('the field-type registry', () => {
  it.each(Object.entries(FIELD_TYPES))('lists %s under its own name', (key, type) => {
    expect(type.name).toBe(key);
  });

  it('has the eight types of the spec', () => {
    expect(Object.keys(FIELD_TYPES).sort()).toEqual(['array', 'boolean', 'datetime', 'json', 'number', 'object', 'reference', 'string']);
  });
});

describe('values of each field type', () => {
  const cases: Array<{ def: FieldDef; valid: unknown[]; invalid: Array<[unknown, string] | [unknown, string, string]> }> = [
    {
      def: { type: 'string' },
      valid: ['', 'text', 'ünïcödé', 'x'.repeat(1_000_000)],
      invalid: [[5, 'must be a string'], [null, 'must be a string'], [true, 'must be a string'], [['a'], 'must be a string'],
        [{ $ne: null }, 'must be a string'], [{ $gt: '' }, 'must be a string'], ['x'.repeat(1_000_001), 'must be at most 1000000 characters long']],
    },
    {
      def: { type: 'string', minLength: 2, maxLength: 4, pattern: '^[a-z]+$' },
      valid: ['ab', 'abcd'],
      invalid: [['a', 'must be at least 2 characters long'], ['abcde', 'must be at most 4 characters long'], ['AB', 'must match the pattern ^[a-z]+$']],
    },
    {
      def: { type: 'string', enum: ['red', 'green'] },
      valid: ['red', 'green'],
      invalid: [['blue', 'must be one of: red, green'], ['RED', 'must be one of: red, green']],
    },
    {
      def: { type: 'number' },
      valid: [0, -1.5, 1e300, Number.MAX_SAFE_INTEGER],
      invalid: [['1', 'must be a number'], ['NaN', 'must be a number'], ['Infinity', 'must be a number'], ['1e3', 'must be a number'],
        ['', 'must be a number'], [NaN, 'must be a number'], [Infinity, 'must be a number'], [-Infinity, 'must be a number'],
        [null, 'must be a number'], [{ $ne: null }, 'must be a number']],
    },
    {
      def: { type: 'number', minimum: 1, maximum: 10, integer: true },
      valid: [1, 10, 5],
      invalid: [[0, 'must be at least 1'], [11, 'must be at most 10'], [2.5, 'must be an integer'], ['5', 'must be an integer']],
    },
    {
      def: { type: 'boolean' },
      valid: [true, false],
      invalid: [['true', 'must be a boolean'], [0, 'must be a boolean'], [null, 'must be a boolean']],
    },
    {
      def: { type: 'array' },
      valid: [[], [1, 'a', null, { b: [] }], Array(10_000).fill(0)],
      invalid: [[{}, 'must be an array'], ['a,b', 'must be an array'], [Array(10_001).fill(0), 'must have at most 10000 items']],
    },
    {
      def: { type: 'array', items: { type: 'number' }, minItems: 1, maxItems: 3 },
      valid: [[1], [1, 2, 3]],
      invalid: [[[], 'must have at least 1 item'], [[1, 2, 3, 4], 'must have at most 3 items'], [[1, 'x'], 'must be a number', 'f.1']],
    },
    {
      def: { type: 'object' },
      valid: [{}, { anything: [1, { deep: true }] }],
      invalid: [[[], 'must be an object'], ['{}', 'must be an object'], [null, 'must be an object']],
    },
    {
      def: { type: 'datetime' },
      valid: ['2026-11-21', '2026-11-21T10:00:00Z', '2026-11-21T10:00:00.123+02:00', '2024-02-29', '2026-11-21T10:00', '2026-11-21T23:59:59-05:30'],
      invalid: [['2026-13-01', 'must be an ISO 8601 date or date-time string'], ['yesterday', 'must be an ISO 8601 date or date-time string'],
        [20261121, 'must be an ISO 8601 date or date-time string'], [1763719200000, 'must be an ISO 8601 date or date-time string']],
    },
    {
      def: { type: 'json' },
      valid: [null, 0, 'text', [1, [2]], { nested: { 'a.b': 1 } }],
      invalid: [],
    },
    {
      def: { type: 'reference', ref: '/api/shop/categories' },
      valid: [ID, '000000000000000000000000'],
      invalid: [[ID.toUpperCase(), 'must be a record id (24 lowercase hex characters)'], [ID.slice(1), 'must be a record id (24 lowercase hex characters)'],
        [{ $ne: null }, 'must be a record id (24 lowercase hex characters)'], [123, 'must be a record id (24 lowercase hex characters)']],
    },
  ];

  for (const { def, valid, invalid } of cases) {
    const label = JSON.stringify(def);
    const record = compile({ f: def });
    it.each(valid.map((value) => [String(value).slice(0, 40), value]))(`${label} accepts %s`, (_shown, value) => {
      expect(record.validate({ f: value })).toEqual({ f: value });
    });
    if (invalid.length) {
      it.each(invalid.map(([value, message, field = 'f']) => [String(JSON.stringify(value)).slice(0, 40), value, message, field]))(
        `${label} refuses %s`,
        (_shown, value, message, field) => {
          const error = thrown(() => record.validate({ f: value }));
          expect(error.status).toBe(400);
          expect(error.message).toBe(`Invalid record: ${field} ${message}`);
          expect(error.details).toContainEqual({ field, message });
        },
      );
    }
  }
});

describe('ISO 8601 dates', () => {
  it.each([
    ['2026-11-21', true],
    ['2026-11-21T10:00:00Z', true],
    ['2026-11-21T10:00:00.123456789+02:00', true],
    ['2000-02-29', true],
    ['1900-02-29', false],
    ['2026-02-30', false],
    ['2026-04-31', false],
    ['2026-00-10', false],
    ['2026-11-21T24:00:00Z', false],
    ['2026-11-21T10:60Z', false],
    ['2026-11-21T10:00:60Z', false],
    ['2026-11-21T10:00:00+24:00', false],
    ['2026-11-21t10:00:00z', false],
    ['2026-11-21 10:00:00Z', false],
    ['20261121', false],
    ['2026-11-21T10', false],
    ['2026-11-21T10:00:00Zjunk', false],
  ])('%s is valid: %s', (value, expected) => {
    expect(isIsoDateTime(value)).toBe(expected);
  });
});

describe('a record', () => {
  const shop = compile({
    name: { type: 'string', required: true },
    price: { type: 'number', minimum: 0 },
    address: { type: 'object', children: { city: { type: 'string', required: true }, zip: { type: 'string' } } },
    meta: { type: 'json' },
  });

  it.each([
    ['an array', []],
    ['null', null],
    ['a string', 'name=x'],
    ['a number', 5],
    ['a Date', new Date()],
  ])('must be a JSON object, not %s', (_name, body) => {
    const error = thrown(() => shop.validate(body));
    expect(error.message).toBe('Invalid record: the body must be a JSON object');
  });

  it.each([
    { name: 'a wrong type names the field', data: { name: 'a', price: '12' }, error: 'Invalid record: price must be a number' },
    { name: 'a missing required field', data: { price: 1 }, error: 'Invalid record: name is required' },
    { name: 'a field not in the schema', data: { name: 'a', colour: 'red' }, error: 'Invalid record: colour is not a field of this endpoint' },
    { name: 'a missing required child', data: { name: 'a', address: {} }, error: 'Invalid record: address.city is required' },
    { name: 'an unknown child', data: { name: 'a', address: { city: 'x', street: 'y' } }, error: 'Invalid record: address.street is not a field of address' },
    { name: 'a wrong child', data: { name: 'a', address: { city: 1 } }, error: 'Invalid record: address.city must be a string' },
    { name: 'an operator instead of a string', data: { name: { $ne: null } }, error: 'Invalid record: name must be a string' },
    { name: 'a system field', data: { name: 'a', _id: ID }, error: 'Invalid record: _id is not a field of this endpoint' },
  ])('refuses $name', ({ data, error }) => {
    expect(() => shop.validate(data)).toThrow(error);
  });

  it('lists every failure in details', () => {
    const error = thrown(() => shop.validate({ price: -1, colour: 'red', address: { city: 2 } }));
    expect(error.details).toEqual(
      expect.arrayContaining([
        { field: 'name', message: 'is required' },
        { field: 'colour', message: 'is not a field of this endpoint' },
        { field: 'price', message: 'must be at least 0' },
        { field: 'address.city', message: 'must be a string' },
      ]),
    );
    expect(error.details).toHaveLength(4);
  });

  it('returns the data itself when it is valid', () => {
    const data = { name: 'a', price: 3, address: { city: 'Oslo' }, meta: { any: ['thing'] } };
    expect(shop.validate(data)).toBe(data);
  });

  it('refuses a __proto__ key at the top level and in free-form values, keeps it as data in json values, and pollutes no prototype', () => {
    const top = JSON.parse('{"name":"a","__proto__":{"polluted":true}}') as unknown;
    expect(() => shop.validate(top)).toThrow('Invalid record: __proto__ is not a field of this endpoint');
    const free = compile({ bag: { type: 'object' }, list: { type: 'array' } });
    const nested = JSON.parse('{"bag":{"list":[{"__proto__":{"polluted":true}}]},"list":[{"constructor":{}}]}') as unknown;
    expect(thrown(() => free.validate(nested)).details).toEqual([
      { field: 'list.0.constructor', message: 'is not an allowed key' },
      { field: 'bag.list.0.__proto__', message: 'is not an allowed key' },
    ]);
    const inJson = JSON.parse('{"name":"a","meta":{"list":[{"__proto__":{"polluted":true}}]}}') as Record<string, unknown>;
    expect(JSON.stringify(shop.validate(shop.applyDefaults(inJson)))).toBe(JSON.stringify(inJson));
    expect(shop.applyDefaults(top)).not.toHaveProperty('polluted');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('does not find a required field through Object.prototype', () => {
    const record = compile({ toString: { type: 'string', required: true }, hasOwnProperty: { type: 'number' } });
    expect(() => record.validate({})).toThrow('Invalid record: toString is required');
    expect(record.validate({ toString: 'x', hasOwnProperty: 1 })).toEqual({ toString: 'x', hasOwnProperty: 1 });
  });

  it('caps the details of a huge invalid array at 100', () => {
    const record = compile({ tags: { type: 'array', items: { type: 'string' } } });
    const error = thrown(() => record.validate({ tags: Array(10_001).fill(1) }));
    expect(error.message).toMatch(/^Invalid record: tags/);
    expect(error.details).toHaveLength(100);
  });

  it('survives deeply nested JSON in a json field', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const record = compile({ meta: { type: 'json' } });
    expect(() => record.validate({ meta: deep })).not.toThrow();
  });
});

describe('defaults', () => {
  const schema = {
    status: { type: 'string', defaultValue: 'new' },
    tags: { type: 'array', items: { type: 'string' }, defaultValue: ['a'] },
    settings: {
      type: 'object',
      defaultValue: {},
      children: { theme: { type: 'string', defaultValue: 'dark', required: true }, size: { type: 'number' } },
    },
    count: { type: 'number', required: true, defaultValue: 0 },
    note: { type: 'string' },
  };
  const record = compile(schema);

  it('fills omitted fields, at the top level and in object children', () => {
    expect(record.applyDefaults({})).toEqual({ status: 'new', tags: ['a'], settings: { theme: 'dark' }, count: 0 });
    expect(record.applyDefaults({ settings: { size: 2 } })).toEqual({ status: 'new', tags: ['a'], settings: { theme: 'dark', size: 2 }, count: 0 });
  });

  it('keeps values that are given, null and falsy ones included', () => {
    expect(record.applyDefaults({ status: '', count: 5, tags: [] })).toMatchObject({ status: '', count: 5, tags: [] });
  });

  it('satisfies required fields with their defaults', () => {
    expect(() => record.validate(record.applyDefaults({}))).not.toThrow();
    expect(() => record.validate({})).toThrow('Invalid record: count is required');
  });

  it('returns a new object with deep-cloned defaults and leaves the input alone', () => {
    const input = { note: 'n' };
    const first = record.applyDefaults(input);
    expect(first).not.toBe(input);
    expect(input).toEqual({ note: 'n' });
    (first.tags as string[]).push('mutated');
    expect(record.applyDefaults({}).tags).toEqual(['a']);
    expect(schema.tags.defaultValue).toEqual(['a']);
  });

  it('returns non-objects as they are, for validate to refuse', () => {
    expect(record.applyDefaults(null)).toBeNull();
    expect(record.applyDefaults([1])).toEqual([1]);
  });
});

describe('references and field names', () => {
  const record = compile({
    title: { type: 'string' },
    category: { type: 'reference', ref: '/api/shop/categories' },
    tags: { type: 'array', items: { type: 'reference', ref: '/api/shop/tags' } },
    matrix: { type: 'array', items: { type: 'array', items: { type: 'reference', ref: '/api/x' } } },
    owner: { type: 'object', children: { user: { type: 'reference', ref: '/api/users' } } },
  });

  it('lists top-level references and arrays of them', () => {
    expect(record.referenceFields).toEqual([
      { field: 'category', ref: '/api/shop/categories', many: false },
      { field: 'tags', ref: '/api/shop/tags', many: true },
    ]);
  });

  it('lists the field names in schema order', () => {
    expect(record.fieldNames).toEqual(['title', 'category', 'tags', 'matrix', 'owner']);
  });

  it('checks the id shape of each array item', () => {
    expect(() => record.validate({ tags: [ID, 'nope'] })).toThrow('Invalid record: tags.1 must be a record id (24 lowercase hex characters)');
  });
});

describe('saving a schema', () => {
  it('returns a valid schema as it is', () => {
    const schema = { name: { type: 'string', required: true, description: 'Shown to buyers' } };
    expect(validateEndpointSchema(schema)).toBe(schema);
    expect(validateEndpointSchema({})).toEqual({});
  });

  it.each([
    ['an array', [], 'schema', 'must be an object of field definitions'],
    ['null', null, 'schema', 'must be an object of field definitions'],
    ['a string definition', { price: 'number' }, 'schema.price', 'must be a field definition (an object)'],
    ['a missing type', { price: {} }, 'schema.price.type', 'is required'],
    ['an unknown type', { price: { type: 'money' } }, 'schema.price.type', 'must be one of: string, number, boolean, array, object, datetime, json, reference'],
    ['a prototype name as type', { price: { type: 'toString' } }, 'schema.price.type', 'must be one of: string, number, boolean, array, object, datetime, json, reference'],
    ['an option of another type', { price: { type: 'number', maxLength: 3 } }, 'schema.price.maxLength', 'is not an option of number fields'],
    ['a misspelt option', { name: { type: 'string', requird: true } }, 'schema.name.requird', 'is not an option of string fields'],
    ['a negative minLength', { name: { type: 'string', minLength: -1 } }, 'schema.name.minLength', 'must be at least 0'],
    ['a fractional maxItems', { tags: { type: 'array', maxItems: 1.5 } }, 'schema.tags.maxItems', 'must be an integer'],
    ['minLength over maxLength', { name: { type: 'string', minLength: 5, maxLength: 2 } }, 'schema.name.minLength', 'must not be greater than maxLength'],
    ['minimum over maximum', { n: { type: 'number', minimum: 5, maximum: 2 } }, 'schema.n.minimum', 'must not be greater than maximum'],
    ['minItems over maxItems', { t: { type: 'array', minItems: 5, maxItems: 2 } }, 'schema.t.minItems', 'must not be greater than maxItems'],
    ['an invalid pattern', { name: { type: 'string', pattern: '([a-z' } }, 'schema.name.pattern', 'must be a regular expression in RE2 syntax (no lookaround or backreferences): missing closing ]: `[a-z`'],
    ['a lookahead (not in RE2)', { name: { type: 'string', pattern: '^(?=.*\\d).+$' } }, 'schema.name.pattern', 'must be a regular expression in RE2 syntax (no lookaround or backreferences): invalid or unsupported Perl syntax: `(?=`'],
    ['a backreference (not in RE2)', { name: { type: 'string', pattern: '(a)\\1' } }, 'schema.name.pattern', 'must be a regular expression in RE2 syntax (no lookaround or backreferences): invalid escape sequence: `\\1`'],
    ['a non-string enum', { name: { type: 'string', enum: [1] } }, 'schema.name.enum.0', 'must be a string'],
    ['a non-boolean required', { name: { type: 'string', required: 'yes' } }, 'schema.name.required', 'must be a boolean'],
    ['a reference without ref', { cat: { type: 'reference' } }, 'schema.cat.ref', 'is required'],
    ['a ref that is not a path', { cat: { type: 'reference', ref: 'categories' } }, 'schema.cat.ref', 'must be an endpoint path starting with /'],
    ['a default of the wrong type', { price: { type: 'number', defaultValue: '0' } }, 'schema.price.defaultValue', 'must be a number'],
    ['a default out of range', { price: { type: 'number', minimum: 1, defaultValue: 0 } }, 'schema.price.defaultValue', 'must be at least 1'],
    ['a default outside the enum', { s: { type: 'string', enum: ['a'], defaultValue: 'b' } }, 'schema.s.defaultValue', 'must be one of: a'],
    ['a default that is not a date', { d: { type: 'datetime', defaultValue: 'now' } }, 'schema.d.defaultValue', 'must be an ISO 8601 date or date-time string'],
    ['a default with an unknown child', { o: { type: 'object', children: { a: { type: 'string' } }, defaultValue: { b: 1 } } }, 'schema.o.defaultValue.b', 'is not a field of schema.o.defaultValue'],
    ['a default missing a required child', { o: { type: 'object', children: { a: { type: 'string', required: true } }, defaultValue: {} } }, 'schema.o.defaultValue.a', 'is required'],
    ['a null default', { s: { type: 'string', defaultValue: null } }, 'schema.s.defaultValue', 'must be a string'],
    ['a bad child', { o: { type: 'object', children: { a: { type: 'nope' } } } }, 'schema.o.children.a.type', 'must be one of: string, number, boolean, array, object, datetime, json, reference'],
    ['children that are not an object', { o: { type: 'object', children: [] } }, 'schema.o.children', 'must be an object'],
    ['a bad item', { t: { type: 'array', items: { type: 'string', minLength: -2 } } }, 'schema.t.items.minLength', 'must be at least 0'],
    ['a required item', { t: { type: 'array', items: { type: 'string', required: true } } }, 'schema.t.items.required', 'is not allowed on array items'],
    ['a default on an item', { t: { type: 'array', items: { type: 'string', defaultValue: 'x' } } }, 'schema.t.items.defaultValue', 'is not allowed on array items'],
  ])('refuses %s', (_name, schema, field, message) => {
    const error = thrown(() => validateEndpointSchema(schema));
    expect(error.status).toBe(400);
    expect(error.message).toBe(`Invalid schema: ${field} ${message}`);
    expect(error.details).toContainEqual({ field, message });
  });

  it('lists every problem with its path', () => {
    const error = thrown(() =>
      validateEndpointSchema({
        price: { type: 'money' },
        name: { type: 'string', minLength: -1, colour: 'red' },
        cat: { type: 'reference' },
        $where: { type: 'string' },
      }),
    );
    expect(error.details).toEqual([
      { field: 'schema.price.type', message: 'must be one of: string, number, boolean, array, object, datetime, json, reference' },
      { field: 'schema.name.colour', message: 'is not an option of string fields' },
      { field: 'schema.name.minLength', message: 'must be at least 0' },
      { field: 'schema.cat.ref', message: 'is required' },
      { field: 'schema.$where', message: 'must not start with $' },
    ]);
  });

  describe('field names', () => {
    it.each([
      ['_id', 'is a reserved name'],
      ['id', 'is a reserved name'],
      ['createdAt', 'is a reserved name'],
      ['updatedAt', 'is a reserved name'],
      ['expiresAt', 'is a reserved name'],
      ['__proto__', 'is a reserved name'],
      ['constructor', 'is a reserved name'],
      ['prototype', 'is a reserved name'],
      ['$where', 'must not start with $'],
      ['$set', 'must not start with $'],
      ['a.b', 'must not contain a dot'],
      ['', 'must be 1 to 64 characters long'],
      ['x'.repeat(65), 'must be 1 to 64 characters long'],
    ])('refuses %j at the top level', (name, message) => {
      const schema = JSON.parse(`{${JSON.stringify(name)}: {"type": "string"}}`) as unknown;
      expect(thrown(() => validateEndpointSchema(schema)).details).toEqual([{ field: `schema.${name}`, message }]);
    });

    it.each([
      ['__proto__', 'is a reserved name'],
      ['constructor', 'is a reserved name'],
      ['prototype', 'is a reserved name'],
      ['$ne', 'must not start with $'],
      ['a.b', 'must not contain a dot'],
    ])('refuses %j inside object children', (name, message) => {
      const schema = JSON.parse(`{"o": {"type": "object", "children": {${JSON.stringify(name)}: {"type": "string"}}}}`) as unknown;
      expect(thrown(() => validateEndpointSchema(schema)).details).toEqual([{ field: `schema.o.children.${name}`, message }]);
    });

    it('allows record system names inside children, where they do not clash', () => {
      expect(() => validateEndpointSchema({ lines: { type: 'array', items: { type: 'object', children: { id: { type: 'string' } } } } })).not.toThrow();
    });

    it('accepts names of 64 characters', () => {
      expect(() => validateEndpointSchema({ ['x'.repeat(64)]: { type: 'string' } })).not.toThrow();
    });
  });

  describe('limits', () => {
    const nested = (levels: number): FieldDef => {
      let def: FieldDef = { type: 'string' };
      for (let i = 1; i < levels; i++) def = { type: 'object', children: { child: def } };
      return def;
    };

    it('allows 8 levels of nesting and refuses 9', () => {
      expect(() => validateEndpointSchema({ top: nested(8) })).not.toThrow();
      const error = thrown(() => validateEndpointSchema({ top: nested(9) }));
      expect(error.message).toBe(`Invalid schema: schema.top${'.children.child'.repeat(8)} is nested too deeply (at most 8 levels)`);
    });

    it('counts array items as a level', () => {
      const def: FieldDef = { type: 'array', items: nested(8) };
      expect(() => validateEndpointSchema({ top: def })).toThrow('is nested too deeply');
    });

    it('refuses a very deep definition without overflowing the stack', () => {
      expect(() => validateEndpointSchema({ top: nested(10_000) })).toThrow('is nested too deeply');
    });

    const fields = (count: number): EndpointSchema => Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}`, { type: 'string' }]));

    it('allows 200 fields per level and refuses 201', () => {
      expect(() => validateEndpointSchema(fields(200))).not.toThrow();
      expect(() => validateEndpointSchema(fields(201))).toThrow('Invalid schema: schema must have at most 200 fields');
      expect(() => validateEndpointSchema({ o: { type: 'object', children: fields(201) } })).toThrow('Invalid schema: schema.o.children must have at most 200 fields');
    });

    it('refuses more than 2,000 definitions in all', () => {
      const wide = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`o${i}`, { type: 'object', children: fields(200) }]));
      expect(() => validateEndpointSchema(wide)).toThrow('Invalid schema: schema must have at most 2000 field definitions in all');
    });
  });
});

describe('compiling', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('happens once: after the first validation, 10,000 more never call ajv.compile', () => {
    const record = compile({ name: { type: 'string', required: true }, tags: { type: 'array', items: { type: 'string' } } });
    record.validate({ name: 'first', tags: [] });
    const compileSpy = vi.spyOn(Ajv.prototype, 'compile');
    for (let i = 0; i < 10_000; i++) {
      record.validate({ name: `n${i}`, tags: ['a', 'b'] });
      expect(() => record.validate({ name: i })).toThrow();
    }
    expect(compileSpy).not.toHaveBeenCalled();
  });

  it('is lazy: a record schema calls ajv.compile on its first validation, not before, and once', () => {
    const schema = validateEndpointSchema({ lazyA: { type: 'object', children: { b: { type: 'array', items: { type: 'string' } } } } });
    const compileSpy = vi.spyOn(Ajv.prototype, 'compile');
    const record = compileRecordSchema(schema);
    expect(record.fieldNames).toEqual(['lazyA']);
    expect(compileSpy).not.toHaveBeenCalled();
    expect(record.validate({ lazyA: { b: ['x'] } })).toEqual({ lazyA: { b: ['x'] } });
    expect(() => record.validate({ lazyA: { b: [1] } })).toThrow('Invalid record: lazyA.b.0 must be a string');
    expect(compileSpy).toHaveBeenCalledTimes(1);
  });

  it('compiles at once when asked (saves do), so a schema the validator refuses fails there', () => {
    const schema = validateEndpointSchema({ eagerA: { type: 'string' } });
    const compileSpy = vi.spyOn(Ajv.prototype, 'compile');
    compileRecordSchema(schema, { eager: true });
    expect(compileSpy).toHaveBeenCalledTimes(1);
  });

  it('is shared: definitions with equal schemas use one validator, with the same answers', () => {
    const definition = () => validateEndpointSchema({ sharedA: { type: 'string', required: true }, sharedB: { type: 'number', minimum: 1 } });
    const first = compileRecordSchema(definition());
    const second = compileRecordSchema(definition());
    const compileSpy = vi.spyOn(Ajv.prototype, 'compile');
    for (const record of [first, second]) {
      expect(record.validate({ sharedA: 'x', sharedB: 2 })).toEqual({ sharedA: 'x', sharedB: 2 });
      expect(thrown(() => record.validate({ sharedB: 0 })).details).toEqual([
        { field: 'sharedA', message: 'is required' },
        { field: 'sharedB', message: 'must be at least 1' },
      ]);
    }
    expect(compileSpy).toHaveBeenCalledTimes(1);
  });
});

describe('example records', () => {
  const schema = validateEndpointSchema({
    name: { type: 'string', minLength: 10, maxLength: 12 },
    code: { type: 'string', maxLength: 2 },
    colour: { type: 'string', enum: ['red', 'green'] },
    price: { type: 'number', minimum: 1.5 },
    stock: { type: 'number', integer: true, minimum: 2.5 },
    debt: { type: 'number', maximum: -3 },
    active: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' }, minItems: 2 },
    loose: { type: 'array' },
    address: { type: 'object', children: { city: { type: 'string' }, geo: { type: 'object', children: { lat: { type: 'number' } } } } },
    at: { type: 'datetime' },
    meta: { type: 'json' },
    category: { type: 'reference', ref: '/api/shop/categories' },
    status: { type: 'string', defaultValue: 'draft' },
    settings: { type: 'object', defaultValue: {}, children: { theme: { type: 'string', defaultValue: 'dark' } } },
  });

  it('gives each type a sensible value', () => {
    expect(exampleRecord(schema)).toEqual({
      name: 'texttexttext'.slice(0, 10),
      code: 'te',
      colour: 'red',
      price: 1.5,
      stock: 3,
      debt: -3,
      active: true,
      tags: ['text', 'text'],
      loose: [],
      address: { city: 'text', geo: { lat: 0 } },
      at: '2026-01-01T00:00:00.000Z',
      meta: {},
      category: '000000000000000000000000',
      status: 'draft',
      settings: { theme: 'dark' },
    });
  });

  it('produces a record that passes validation', () => {
    expect(() => compileRecordSchema(schema).validate(exampleRecord(schema))).not.toThrow();
  });

  it('gives one field its example', () => {
    expect(exampleValue({ type: 'datetime' })).toBe('2026-01-01T00:00:00.000Z');
    expect(exampleValue({ type: 'number', minimum: 7 })).toBe(7);
  });
});

describe('operator-shaped keys in free-form values', () => {
  const compiled = compileRecordSchema({ blob: { type: 'json' }, bag: { type: 'object' }, list: { type: 'array', items: { type: 'json' } }, shaped: { type: 'object', children: { inner: { type: 'json' }, other: { type: 'object' } } } });
  it.each([
    ['a json value', { blob: { $ne: null, 'a.b': 1 } }],
    ['a nested json value', { blob: { a: [{ $gt: 1 }] } }],
    ['json array items', { list: [{ $in: [1] }] }],
    ['a json child of an object', { shaped: { inner: { $set: { 'x.y': 1 } } } }],
  ])('keeps $-keys and dotted keys in %s as data', (_name, data) => {
    expect(compiled.validate(data)).toEqual(data);
  });

  it.each([
    ['an object without children', { bag: { $where: 'x' } }, 'bag.$where'],
    ['an object child without children', { shaped: { other: { $where: 'x' } } }, 'shaped.other.$where'],
  ])('refuses a $-key in %s with 400', (_name, data, field) => {
    expect(() => compiled.validate(data)).toThrow(AppError);
    try {
      compiled.validate(data);
    } catch (error) {
      expect((error as AppError).details?.map((d) => d.field)).toContain(field);
    }
  });
});
