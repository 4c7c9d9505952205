import type { FieldType } from './field-type.ts';

/** Any JSON value, stored as it is (only `__proto__` keys are refused, for every record). */
export const jsonType: FieldType = {
  name: 'json',
  expected: 'a JSON value',
  options: { properties: {} },
  toJsonSchema: () => ({}),
  openApi: () => ({ description: 'any JSON value' }),
  exampleValue: () => ({}),
};
