import { BSON } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { encodeKeys, unwrapEntries } from '../../src/store/mongo/key-codec.ts';

// The MongoDB adapter's wrapper for keys MongoDB cannot hold, checked without a server: the
// encoded value passes BSON's own key check (no `$`-prefixed or dotted names), and decoding
// gives back a value equal to the input after a JSON round trip.
const decode = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(decode);
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  return unwrapEntries(record, decode) ?? Object.fromEntries(Object.entries(record).map(([key, inner]) => [key, decode(inner)]));
};

describe('the MongoDB key codec', () => {
  it.each([
    ['operator and dotted keys', '{"$set":{"a.b":1},"x":{"$inc":{"n.m":[{"$eq":null}]}}}'],
    ['a __proto__ key', '{"__proto__":{"polluted":true},"constructor":{"prototype":{"y":1}}}'],
    ['the wrapper key itself', '{"__dynEntries":[["a",1]],"ok":true}'],
    ['a NUL in a key', '{"a\\u0000b":1}'],
    ['plain data', '{"title":"Dune","tags":["a","b"],"size":{"w":1}}'],
    ['scalars and arrays', '[1,"two",null,true,[{"$a":1}]]'],
  ])('%s survive BSON and come back equal', (_name, json) => {
    const input = JSON.parse(json) as unknown;
    const bson = BSON.serialize({ value: encodeKeys(input) }, { checkKeys: true });
    const back = decode(BSON.deserialize(bson).value);
    expect(JSON.stringify(back)).toBe(JSON.stringify(input));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('leaves objects with ordinary keys unwrapped, so filters on them still work', () => {
    expect(encodeKeys({ plain: { color: 'red' }, odd: { $x: 1 } })).toEqual({ plain: { color: 'red' }, odd: { __dynEntries: [['$x', 1]] } });
  });
});
