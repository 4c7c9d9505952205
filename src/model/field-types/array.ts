import { checkRange, definedOptions, SIZE_OPTION, TEXT_FILTER, type FieldDef, type FieldType } from './field-type.ts';

export interface ArrayFieldDef extends FieldDef {
  /** The definition every item must satisfy; without it items may be any JSON values. */
  items?: FieldDef;
  minItems?: number;
  maxItems?: number;
}

/** Arrays without maxItems are still capped, so a record cannot carry an unbounded list. */
export const DEFAULT_MAX_ARRAY_ITEMS = 10_000;

export const arrayType: FieldType<ArrayFieldDef> = {
  name: 'array',
  expected: 'an array',
  options: {
    properties: {
      items: { type: 'object' },
      minItems: SIZE_OPTION,
      maxItems: SIZE_OPTION,
    },
  },
  check(def, check) {
    checkRange(def, check, 'minItems', 'maxItems');
    if (def.items !== undefined) check.checkItem('items', def.items);
  },
  toJsonSchema: (def, compileChild) => ({
    type: 'array',
    maxItems: def.maxItems ?? DEFAULT_MAX_ARRAY_ITEMS,
    ...definedOptions(def, ['minItems']),
    ...(def.items ? { items: compileChild(def.items) } : {}),
  }),
  // OpenAPI 3.0 needs `items` on every array schema; `{}` is any value.
  openApi: (def, ctx) => ({
    type: 'array',
    items: def.items ? ctx.child(def.items) : {},
    maxItems: def.maxItems ?? DEFAULT_MAX_ARRAY_ITEMS,
    ...definedOptions(def, ['minItems']),
  }),
  exampleValue(def, exampleChild) {
    const count = Math.min(Math.max(def.minItems ?? 0, def.items ? 1 : 0), def.maxItems ?? DEFAULT_MAX_ARRAY_ITEMS);
    return Array.from({ length: count }, () => (def.items ? exampleChild(def.items) : 'value'));
  },
  item: (def) => def.items,
  reference(def, referenceOfChild) {
    const item = def.items ? referenceOfChild(def.items) : undefined;
    return item && !item.many ? { ref: item.ref, many: true } : undefined;
  },
  // `tags[has]=new`: one item, read as the item type (as text when items are untyped).
  filter: (def, filterOfChild) => {
    const item = def.items ? filterOfChild(def.items) : TEXT_FILTER;
    // `has` asks whether an item equals the value. Items that may be any JSON value (untyped,
    // json) can, when they are text; objects and arrays never can: no `has` there (a 400, not
    // a filter that silently matches nothing).
    const has = def.items === undefined || def.items.type === 'json' || item.operators.includes('eq');
    return { operators: has ? ['has', 'exists'] : ['exists'], read: (raw) => raw, item };
  },
};
