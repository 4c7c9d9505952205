import { describe, expect, it } from 'vitest';
import { FIELD_TYPES, FILTER_OPERATORS, type FieldDef, type FieldType } from '../../src/model/field-types/index.ts';
import { fieldFilter, searchFields } from '../../src/model/field-types/list-query.ts';
import { filterOperators, listFilter } from '../../src/runtime/list-filter.ts';

/** List filters and search come from the field types themselves (their `filter` and `searchable`). */
const read = (def: FieldDef, raw: string) => fieldFilter(def).read(raw);

describe('field types answer for their list filters', () => {
  it.each(Object.values(FIELD_TYPES) as FieldType[])('$name takes only known operators', (type) => {
    const def: FieldDef = { type: type.name, ...(type.name === 'reference' ? { ref: '/api/x' } : {}) };
    const operators = fieldFilter(def).operators;
    expect(operators.length).toBeGreaterThan(0);
    for (const operator of operators) expect(FILTER_OPERATORS).toContain(operator);
    expect(operators).toContain('exists');
  });

  it.each([
    { type: 'string', operators: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists'] },
    { type: 'number', operators: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists'] },
    { type: 'boolean', operators: ['eq', 'ne', 'exists'] },
    { type: 'datetime', operators: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'exists'] },
    { type: 'reference', operators: ['eq', 'ne', 'in', 'nin', 'exists'] },
    { type: 'array', operators: ['has', 'exists'] },
    { type: 'object', operators: ['exists'] },
    { type: 'json', operators: ['exists'] },
  ])('a $type field takes $operators', ({ type, operators }) => {
    expect(filterOperators({ type, ref: '/api/x' })).toEqual(operators);
  });

  it.each([
    { def: { type: 'string' }, raw: '42', value: '42' },
    { def: { type: 'number' }, raw: '4.5', value: 4.5 },
    { def: { type: 'number' }, raw: 'cheap', value: { problem: 'a number' } },
    { def: { type: 'number' }, raw: ' ', value: { problem: 'a number' } },
    { def: { type: 'boolean' }, raw: 'false', value: false },
    { def: { type: 'boolean' }, raw: 'yes', value: { problem: 'true or false' } },
    { def: { type: 'datetime' }, raw: '2026-01-02', value: '2026-01-02' },
    { def: { type: 'datetime' }, raw: 'soon', value: { problem: 'an ISO 8601 date (2026-11-21) or date-time (2026-11-21T08:30:00Z)' } },
    { def: { type: 'datetime' }, raw: 'Sep 1 2026', value: { problem: 'an ISO 8601 date (2026-11-21) or date-time (2026-11-21T08:30:00Z)' } },
    { def: { type: 'reference', ref: '/api/x' }, raw: 'abc', value: { problem: 'a record id' } },
  ])('reads $raw for a $def.type field as $value', ({ def, raw, value }) => {
    expect(read(def, raw)).toEqual(value);
  });

  it('an array field reads `has` values as its item type, as text when items are untyped', () => {
    expect(fieldFilter({ type: 'array', items: { type: 'number' } }).item?.read('3')).toBe(3);
    expect(fieldFilter({ type: 'array', items: { type: 'number' } }).item?.read('x')).toEqual({ problem: 'a number' });
    expect(fieldFilter({ type: 'array' }).item?.read('x')).toBe('x');
    expect(listFilter({ sizes: { type: 'array', items: { type: 'number' } } }, { 'sizes[has]': '3' })).toEqual({ sizes: { $has: 3 } });
  });

  it('an object\'s children are filtered by their own types', () => {
    const schema = { meta: { type: 'object', children: { weight: { type: 'number' } } } };
    expect(listFilter(schema, { 'meta.weight[gt]': '2' })).toEqual({ 'meta.weight': { $gt: 2 } });
    expect(() => listFilter(schema, { 'meta.weight': 'heavy' })).toThrow('Query parameter "meta.weight" must be a number');
  });

  it('search looks in the fields whose type is searchable (strings)', () => {
    expect(searchFields({
      title: { type: 'string' },
      price: { type: 'number' },
      note: { type: 'string', maxLength: 10 },
      tags: { type: 'array', items: { type: 'string' } },
      meta: { type: 'object' },
    })).toEqual(['title', 'note']);
    expect(searchFields({ price: { type: 'number' } })).toEqual([]);
  });
});
