// What list requests may ask of an endpoint's fields, read from the field-type registry: the
// filter a field takes (operators, how a query value is read) and the fields `search` looks in.
// No switch over type names: a type answers through its `filter` and `searchable`.
import { PRESENCE_FILTER, type EndpointSchema, type FieldDef, type FieldFilter } from './field-type.ts';
import { fieldTypeOf } from './index.ts';

/** How list filters treat this field (a type without `filter` takes only `exists`). */
export function fieldFilter(def: FieldDef): FieldFilter {
  return fieldTypeOf(def.type)?.filter?.(def as never, fieldFilter) ?? PRESENCE_FILTER;
}

/** The top-level fields `search=term` looks in. */
export function searchFields(schema: EndpointSchema): string[] {
  return Object.keys(schema).filter((name) => fieldTypeOf(schema[name]?.type)?.searchable === true);
}
