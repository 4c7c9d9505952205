import { describe, expect, it } from 'vitest';
import { docsOfFlat } from '../../src/store/flat-docs.ts';
import { encodeFlatRows, encodeRows } from '../../src/store/sqlite/append-rows.ts';
import type { FlatDocs, FlatValue } from '../../src/store/types.ts';

/**
 * encodeFlatRows writes a flat batch's rows without making its documents (the append worker's
 * path for the audit log); the rows must be the very ones encodeRows makes of those documents —
 * the same doc text byte for byte (member order included), column values and ids.
 */
const AUDIT_FIELDS = ['action', 'message', 'source', 'via', 'ip', 'userId', 'method', 'path', 'statusCode', 'createdAt'];
const when = Date.parse('2026-03-04T05:06:07.089Z');

const viaDocuments = (collection: string, flat: FlatDocs) => encodeRows(collection, docsOfFlat(flat));

const CASES: Array<[string, FlatDocs]> = [
  ['an api_call entry', { fields: AUDIT_FIELDS, dates: ['createdAt'], values: ['api_call', 'GET /api/items/1 → 200', 'endpoint', 'http', '127.0.0.1', null, 'GET', '/api/items/1', 200, when] }],
  ['escapes, unicode and lone surrogates', { fields: AUDIT_FIELDS, dates: ['createdAt'], values: ['a"b', 'x \\ "q" \n\t \u0000 \u2028 🎉 \ud800', 'é', undefined, '::1', 'u"1', 'GET', '/ü', -0, when] }],
  ['nulls everywhere (null columns are members too, after the others)', { fields: AUDIT_FIELDS, dates: ['createdAt'], values: [null, null, null, null, null, null, null, null, null, null] }],
  ['nothing but undefined', { fields: AUDIT_FIELDS, dates: ['createdAt'], values: new Array<FlatValue>(10).fill(undefined) }],
  ['numbers and booleans', { fields: ['action', 'a', 'b', 'c', 'd', 'e', 'createdAt'], dates: ['createdAt'], values: ['x', Number.NaN, Number.POSITIVE_INFINITY, 1.5e300, true, false, when] }],
  ['a date member and dates at the edges', { fields: ['at', 'action', 'createdAt'], dates: ['at', 'createdAt'], values: [-1, 'x', 0, Date.parse('+012345-01-01T00:00:00.000Z'), 'y', 8.64e15] }],
  ['a date out of range (its document says what it is)', { fields: ['action', 'at', 'createdAt'], dates: ['at', 'createdAt'], values: ['x', 9e15, when, 'y', 1, Number.NaN] }],
  ['a date field given text', { fields: ['action', 'at', 'createdAt'], dates: ['at', 'createdAt'], values: ['x', 'soon', '2020-01-01T00:00:00.000Z'] }],
  ['columns out of field order', { fields: ['createdAt', 'message', 'action'], dates: ['createdAt'], values: [null, 'm', null, when, 'n', 'a'] }],
  ['ids given to some entries', { fields: ['_id', 'action', 'message'], dates: [], values: ['6b096eb4ae5ea32175c36a79', 'a', 'one', null, 'b', 'two', undefined, 'c', 'three'] }],
  ['a field named __proto__', { fields: ['action', '__proto__', 'message'], dates: [], values: ['api_call', 'text', 'flat proto'] }],
  ['index-like field names', { fields: ['action', '10', 'b', '2', 'a'], dates: [], values: ['x', 'ten', 'b', 'two', 'a'] }],
  ['a field named twice', { fields: ['action', 'message', 'message'], dates: [], values: ['x', 'first', 'second'] }],
];

describe('encodeFlatRows', () => {
  for (const [name, flat] of CASES) {
    it(`encodes ${name} as encodeRows encodes its documents`, () => {
      expect(encodeFlatRows('logs', flat)).toEqual(viaDocuments('logs', flat));
    });
  }

  it('encodes a collection stored as whole documents (no columns) the same way', () => {
    const flat: FlatDocs = { fields: ['key', 'value', 'at'], dates: ['at'], values: ['k', 'v', when, 'k2', null, undefined] };
    expect(encodeFlatRows('revisions', flat)).toEqual(viaDocuments('revisions', flat));
  });

  it('encodes a collection with JSON columns (records) through its documents', () => {
    const flat: FlatDocs = { fields: ['resourcePath', 'endpointId', 'createdAt'], dates: ['createdAt'], values: ['/api/r', 'e1', when] };
    expect(encodeFlatRows('endpointdatas', flat)).toEqual(viaDocuments('endpointdatas', flat));
  });

  it('refuses what encodeRows refuses: a number in a text column', () => {
    const flat: FlatDocs = { fields: ['action'], dates: [], values: ['ok', 42] };
    expect(() => viaDocuments('logs', flat)).toThrow(/text column/);
    expect(() => encodeFlatRows('logs', flat)).toThrow(/text column/);
  });

  it('refuses a batch whose values do not fill whole entries', () => {
    expect(() => encodeFlatRows('logs', { fields: ['action', 'message'], dates: [], values: ['a', 'one', 'b'] })).toThrow(/2 fields holds 3 values/);
    expect(() => encodeFlatRows('logs', { fields: [], dates: [], values: [] })).toThrow(/0 fields holds 0 values/);
  });

  it('agrees with encodeRows on random audit batches', () => {
    let seed = 7;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const pick = <T>(options: readonly T[]): T => options[next() % options.length] as T;
    const texts = ['api_call', 'GET /p → 200', 'a"b\\c', '\n', '', 'é🎉', '\udc00', '127.0.0.1'];
    for (let round = 0; round < 200; round++) {
      const values: FlatValue[] = [];
      for (let entry = 0; entry < 5; entry++) {
        for (const field of AUDIT_FIELDS) {
          if (field === 'createdAt') values.push(pick<FlatValue>([when + entry, null, undefined, -62167219200001]));
          else if (field === 'statusCode') values.push(pick<FlatValue>([200, 404, null, undefined, Number.NaN]));
          else values.push(pick<FlatValue>([...texts, null, undefined]));
        }
      }
      const flat: FlatDocs = { fields: AUDIT_FIELDS, dates: ['createdAt'], values };
      expect(encodeFlatRows('logs', flat)).toEqual(viaDocuments('logs', flat));
    }
  });
});
