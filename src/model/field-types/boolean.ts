import type { FieldType } from './field-type.ts';

export const booleanType: FieldType = {
  name: 'boolean',
  expected: 'a boolean',
  options: { properties: {} },
  toJsonSchema: () => ({ type: 'boolean' }),
  openApi: () => ({ type: 'boolean' }),
  exampleValue: () => true,
};
