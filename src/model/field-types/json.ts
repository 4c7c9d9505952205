import type { FieldType } from './field-type.ts';

/**
 * Any JSON value, stored as it is and given back equal after a JSON round trip: keys starting
 * with `$`, dotted keys and `__proto__` included (data, never operators or prototypes; the
 * MongoDB store encodes what it cannot hold). PATCH replaces a json value whole.
 */
export const jsonType: FieldType = {
  name: 'json',
  expected: 'a JSON value',
  keysAreData: true,
  options: { properties: {} },
  toJsonSchema: () => ({}),
  openApi: () => ({ description: 'any JSON value' }),
  exampleValue: () => ({}),
};
