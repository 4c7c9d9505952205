import type { FieldFilter, FieldType } from './field-type.ts';

/** Also how `[exists]=` reads its operand. */
export const BOOLEAN_FILTER: FieldFilter = {
  operators: ['eq', 'ne', 'exists'],
  read: (raw) => (raw === 'true' ? true : raw === 'false' ? false : { problem: 'true or false' }),
};

export const booleanType: FieldType = {
  name: 'boolean',
  expected: 'a boolean',
  options: { properties: {} },
  toJsonSchema: () => ({ type: 'boolean' }),
  openApi: () => ({ type: 'boolean' }),
  exampleValue: () => true,
  filter: () => BOOLEAN_FILTER,
  indexedAs: 'boolean',
};
