import { describe, expect, it } from 'vitest';
import { positiveInt, readQuery } from '../../src/lib/query-params.ts';

/** The one query reader of management routes and dynamic endpoints. */
describe('readQuery', () => {
  it('returns the allowed parameters, and those `accepts` takes', () => {
    expect(readQuery({ page: '2', 'price[gt]': '5', skipped: undefined }, ['page'], { accepts: (name) => name.startsWith('price') })).toEqual({ page: '2', 'price[gt]': '5' });
  });

  it.each([
    { query: { colour: 'red' }, error: 'Unknown query parameter "colour"', details: [{ field: 'colour', message: 'is not an allowed query parameter' }] },
    { query: { page: ['1', '2'] }, error: 'Query parameter "page" must be given once', details: [{ field: 'page', message: 'must be given once' }] },
    { query: { page: 'x'.repeat(1001) }, error: 'Query parameter "page" is too long', details: [{ field: 'page', message: 'must be at most 1000 characters' }] },
  ])('refuses $error', ({ query, error, details }) => {
    expect(() => readQuery(query, ['page'])).toThrow(expect.objectContaining({ status: 400, message: error, details }));
  });

  it('takes a shorter limit where a route wants one', () => {
    expect(() => readQuery({ search: 'x'.repeat(201) }, ['search'], { maxLength: 200 })).toThrow('Query parameter "search" is too long');
    expect(readQuery({ search: 'x'.repeat(200) }, ['search'], { maxLength: 200 }).search).toHaveLength(200);
  });
});

describe('positiveInt', () => {
  it.each([
    [undefined, 7],
    ['', 7],
    ['1', 1],
    ['999999999', 999999999],
  ])('%j → %i', (raw, value) => {
    expect(positiveInt('page', raw, 7)).toBe(value);
  });

  it.each(['0', '-1', '1.5', 'two', ' 1'])('%j is a 400', (raw) => {
    expect(() => positiveInt('page', raw, 7)).toThrow('Query parameter "page" must be a positive integer');
  });

  it('a positive integer of ten digits or more is a 400 saying how large it may be', () => {
    expect(() => positiveInt('page', '9999999999', 7)).toThrow('Query parameter "page" must be at most 999999999');
  });
});
