// Which field index a query goes through, decided here rather than by SQLite's planner: without
// statistics the planner takes the scope's own index (resourcePath, createdAt, _id) for any range
// on a field, and with statistics its choice would depend on them. The rules:
//
// | query                                                | index                               |
// |------------------------------------------------------|-------------------------------------|
// | `eq` / `in` on an indexed field (value of its kind)  | that field's                        |
// | else a range (`gt gte lt lte`) on an indexed field   | that field's                        |
// | else sorted first by an indexed field                | that field's (serves the order)     |
// | else                                                 | none: SQLite's choice (the scope's) |
//
// A range that matches many records, on a page sorted by something else, is read faster in the
// sort's order off the scope's index, filtering as it goes (a few rows per match) than through
// the field's index (every match read, then sorted): the store probes how many match, up to a
// bound, before it goes through the field's index for such a page (sqlite-store.ts, RANGE_PROBE).
//
// A query can only go through an index of its own scope, named by equality at the top level of
// its filter (records: `resourcePath`, which every record query has).
import type { FilterNode } from '../filter.ts';
import type { CollectionSpec } from '../types.ts';
import { typedExpr, type FieldIndex } from './field-indexes.ts';
import type { Layout } from './layout.ts';
import type { IndexedFields } from './sql-filter.ts';
import { valueOfKind } from './field-indexes.ts';

export interface IndexPlan {
  index: FieldIndex;
  fields: IndexedFields;
  /** The sort's first key is the index's field: ORDER BY reads the typed expression. */
  servesSort: boolean;
  /** Why this index: an equality (`eq`, `in`), a range, or the sort alone. */
  via: 'equality' | 'range' | 'sort';
}

/** The scope a filter names by equality at its top level, if any. */
export function scopeOf(spec: CollectionSpec, node: FilterNode): string | undefined {
  const scopeField = spec.fieldIndexes?.scope;
  if (!scopeField || node.kind !== 'and') return undefined;
  for (const child of node.children) {
    if (child.kind === 'compare' && child.field === scopeField && child.op === '$eq' && typeof child.value === 'string') return child.value;
  }
  return undefined;
}

export function planIndex(
  spec: CollectionSpec,
  layout: Layout,
  node: FilterNode,
  sort: ReadonlyArray<{ field: string }>,
  indexes: ReadonlyMap<string, FieldIndex> | undefined,
): IndexPlan | null {
  if (!indexes || indexes.size === 0 || node.kind !== 'and') return null;
  const compares = node.children.filter((child) => child.kind === 'compare');
  const usable = (ops: readonly string[]): FieldIndex | undefined => {
    for (const { field, op, value } of compares) {
      const index = indexes.get(field);
      if (!index || !ops.includes(op)) continue;
      const values = Array.isArray(value) ? value : [value];
      if (values.length > 0 && values.every((v) => valueOfKind(v, index.kind))) return index;
    }
    return undefined;
  };
  const first = sort[0]?.field;
  const equality = usable(['$eq', '$in']);
  const range = equality ? undefined : usable(['$gt', '$gte', '$lt', '$lte']);
  const index = equality ?? range ?? (first === undefined ? undefined : indexes.get(first));
  if (!index) return null;
  const expr = typedExpr(layout, index.field, index.kind);
  return {
    index,
    fields: { typed: new Map([[index.field, { expr, kind: index.kind }]]), literal: spec.fieldIndexes?.scope as string },
    servesSort: first === index.field,
    via: equality ? 'equality' : range ? 'range' : 'sort',
  };
}
