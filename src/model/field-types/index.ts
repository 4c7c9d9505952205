import { arrayType } from './array.ts';
import { booleanType } from './boolean.ts';
import { datetimeType } from './datetime.ts';
import type { FieldType } from './field-type.ts';
import { jsonType } from './json.ts';
import { numberType } from './number.ts';
import { objectType } from './object.ts';
import { referenceType } from './reference.ts';
import { stringType } from './string.ts';

export type { DefinitionCheck, EndpointSchema, IndexedAs, FieldDef, FieldFilter, FieldReference, FieldType, FilterOperator, FilterValue, JsonSchema, OpenApiContext } from './field-type.ts';
export { FILTER_OPERATORS, ORDERED_OPERATORS, PRESENCE_FILTER, TEXT_FILTER } from './field-type.ts';

/** The field types, by name. Adding one: a file beside this one and a line here. */
export const FIELD_TYPES = Object.freeze({
  string: stringType,
  number: numberType,
  boolean: booleanType,
  array: arrayType,
  object: objectType,
  datetime: datetimeType,
  json: jsonType,
  reference: referenceType,
} satisfies Record<string, FieldType>);

export type FieldTypeName = keyof typeof FIELD_TYPES;

export const FIELD_TYPE_NAMES = Object.keys(FIELD_TYPES) as FieldTypeName[];

/** Looks a type up by name; own keys only, so `toString` or `__proto__` are not types. */
export function fieldTypeOf(name: unknown): FieldType | undefined {
  return typeof name === 'string' && Object.hasOwn(FIELD_TYPES, name) ? (FIELD_TYPES as Record<string, FieldType>)[name] : undefined;
}
