import { describe, expect, it } from 'vitest';
import { hasReferences, mentionsEndpointIds, referenceTargets, schemaFromWire, schemaToWire } from '../../src/model/schema-wire.ts';

// The edge between the API's array of fields and the stored map (src/model/schema-wire.ts).
const paths: Record<string, string> = { cat1: '/api/categories', tag1: '/api/tags' };
const pathOf = (id: string): string | undefined => paths[id];
const targetOf = (path: string): string | null => Object.keys(paths).find((id) => paths[id] === path) ?? null;

describe('schemaFromWire', () => {
  it.each([
    { name: 'an empty array', input: [], stored: {} },
    { name: 'fields in order, order renumbered away, required: false dropped', input: [{ name: 'b', type: 'string', order: 2, required: false }, { name: 'a', type: 'number', order: 1, required: true }], stored: { a: { type: 'number', required: true }, b: { type: 'string' } } },
    { name: 'children as an array', input: [{ name: 'o', type: 'object', children: [{ name: 'x', type: 'string' }] }], stored: { o: { type: 'object', children: { x: { type: 'string' } } } } },
    { name: 'a reference by id', input: [{ name: 'c', type: 'reference', refEndpointId: 'cat1' }], stored: { c: { type: 'reference', ref: '/api/categories' } } },
    { name: 'an array with refEndpointId', input: [{ name: 't', type: 'array', refEndpointId: 'tag1' }], stored: { t: { type: 'array', items: { type: 'reference', ref: '/api/tags' } } } },
    { name: 'every spec key given, children empty on fields without children', input: [{ name: 's', type: 'string', required: false, order: 0, defaultValue: undefined, children: [], refEndpointId: null }, { name: 'n', type: 'number', required: false, order: 1, children: null, refEndpointId: null }], stored: { s: { type: 'string', defaultValue: undefined }, n: { type: 'number' } } },
    { name: 'the map form, untouched', input: { a: { type: 'string', required: false } }, stored: { a: { type: 'string', required: false } } },
    { name: 'not a schema at all, left for the validator', input: 'title', stored: 'title' },
  ])('converts $name', ({ input, stored }) => {
    expect(schemaFromWire(input, pathOf)).toEqual({ schema: stored, problems: [] });
  });

  it.each([
    { name: 'an unknown id', input: [{ name: 'c', type: 'reference', refEndpointId: 'nope' }], field: 'schema.c.refEndpointId' },
    { name: 'ref and refEndpointId that disagree', input: [{ name: 'c', type: 'reference', refEndpointId: 'cat1', ref: '/api/other' }], field: 'schema.c.refEndpointId' },
    { name: 'an array whose items name another target', input: [{ name: 't', type: 'array', refEndpointId: 'tag1', items: { type: 'string' } }], field: 'schema.t.refEndpointId' },
    { name: 'a missing name', input: [{ type: 'string' }], field: 'schema.0.name' },
    { name: 'an entry that is not an object', input: ['title'], field: 'schema.0' },
  ])('reports $name at $field', ({ input, field }) => {
    expect(schemaFromWire(input, pathOf).problems.map((p) => p.field)).toEqual([field]);
  });

  it('keeps a field named __proto__ as a key (the validator refuses it by name)', () => {
    const { schema } = schemaFromWire([{ name: '__proto__', type: 'string' }], pathOf);
    expect(Object.keys(schema as object)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(schema)).toBe(Object.prototype);
  });

  it('offline (ids not known), keeps the ref given beside an id', () => {
    expect(schemaFromWire([{ name: 'c', type: 'reference', refEndpointId: 'x', ref: '/api/c' }], () => null)).toEqual({ schema: { c: { type: 'reference', ref: '/api/c' } }, problems: [] });
  });
});

describe('schemaToWire', () => {
  it('gives the array with name, type, required and order first, references with their endpoint id', () => {
    const stored = { title: { type: 'string', maxLength: 5 }, c: { type: 'reference', ref: '/api/categories' }, gone: { type: 'reference', ref: '/api/gone' } };
    expect(schemaToWire(stored, targetOf)).toEqual([
      { name: 'title', type: 'string', required: false, order: 0, maxLength: 5 },
      { name: 'c', type: 'reference', required: false, order: 1, refEndpointId: 'cat1', ref: '/api/categories' },
      { name: 'gone', type: 'reference', required: false, order: 2, refEndpointId: null, ref: '/api/gone' },
    ]);
  });

  it('round-trips through schemaFromWire to the same stored schema', () => {
    const stored = { o: { type: 'object', required: true, children: { x: { type: 'array', items: { type: 'object', children: { y: { type: 'reference', ref: '/api/tags' } } } } } }, t: { type: 'array', items: { type: 'reference', ref: '/api/tags' } } };
    expect(schemaFromWire(schemaToWire(stored, targetOf), pathOf)).toEqual({ schema: stored, problems: [] });
    expect(hasReferences(stored)).toBe(true);
    expect(mentionsEndpointIds(schemaToWire(stored, targetOf))).toBe(true);
  });
});

describe('referenceTargets', () => {
  it('prefers the GET of a path, then the POST, then PUT, PATCH, DELETE', () => {
    const targets = referenceTargets([
      { _id: 'del', path: '/a', method: 'DELETE' },
      { _id: 'post', path: '/a', method: 'POST' },
      { _id: 'put', path: '/b', method: 'PUT' },
      { _id: 'patch', path: '/b', method: 'PATCH' },
      { _id: 'get', path: '/a', method: 'GET' },
    ]);
    expect([targets('/a'), targets('/b'), targets('/c')]).toEqual(['get', 'put', null]);
  });
});
