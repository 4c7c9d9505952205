// Field indexes of the embedded store: one partial expression index per (scope, field), e.g. for
// the records of /api/shop/products and their `price`:
//
//   CREATE INDEX "endpointdatas__fx_<hash>" /* dyn-field-index {...} */ ON "endpointdatas"
//     (<typed price>, "createdAt", id, "expiresAt") WHERE "resourcePath" = '/api/shop/products'
//
// - The value is read through a *typed* expression (NULL unless the JSON value has the index's
//   kind), so a comparison through the index needs no separate type check and a count is answered
//   from the index alone. Filters compile a condition on an indexed field to the same text
//   (sql-filter.ts), which is what lets SQLite match it to the index.
// - The columns after the value are the collection's order fields (a sort on the field breaks
//   ties by them; a filter on it returns pages in that order) and, for a TTL collection,
//   `expiresAt`, so the expiry check is read from the index too. A unique index holds the value
//   only (so that it is unique).
// - SQLite uses a partial index only when the query's WHERE contains its WHERE term; a bound
//   parameter (`"resourcePath" = ?`) does not count, so queries through an index name the scope
//   as a literal (quoteLiteral) and name the index (INDEXED BY: without statistics the planner
//   would prefer the scope's own index for ranges, whatever their size).
// - The spec rides in a comment of the stored CREATE statement, so every connection reads which
//   indexes exist from sqlite_schema (no table of its own to keep in step), and the name is a hash
//   of the spec, so any instance reconciles to the same names.
import { fieldIndexName } from '../field-index-name.ts';
import type { CollectionSpec, FieldIndexSpec, IndexKind } from '../types.ts';
import type { Layout } from './layout.ts';

export { fieldIndexName };

const MARKER = 'dyn-field-index';
const PARSE = new RegExp(`/\\* ${MARKER} (\\{.*?\\}) \\*/`);

/** A field index as it exists: its spec and its name. */
export interface FieldIndex extends FieldIndexSpec {
  name: string;
}

/** A string as an SQL literal. Scopes are paths the service normalized; quotes are doubled all the same. */
export function quoteLiteral(value: string): string {
  if (value.includes('\0')) throw new Error('an SQL literal cannot hold NUL');
  return `'${value.replace(/'/g, "''")}'`;
}

/** The field's value when it has the kind, else NULL. */
export function typedExpr(layout: Layout, field: string, kind: IndexKind): string {
  const type = layout.typeExpr(field);
  const value = layout.fieldExpr(field);
  switch (kind) {
    case 'number':
      return `(CASE WHEN ${type} IN ('integer', 'real') THEN ${value} END)`;
    case 'text':
      return `(CASE WHEN ${type} = 'text' THEN ${value} END)`;
    case 'boolean':
      return `(CASE ${type} WHEN 'true' THEN 1 WHEN 'false' THEN 0 END)`;
  }
}

/** The columns after the value in a (non-unique) field index of this collection. */
export function orderColumns(spec: CollectionSpec, layout: Layout): string[] {
  const order = (spec.fieldIndexes?.order ?? []).map((field) => layout.fieldExpr(field));
  return spec.ttl ? [...order, layout.fieldExpr('expiresAt')] : order;
}

export function scopeTerm(spec: CollectionSpec, layout: Layout, scope: string): string {
  return `${layout.fieldExpr(spec.fieldIndexes?.scope ?? '')} = ${quoteLiteral(scope)}`;
}

export function createFieldIndexSql(spec: CollectionSpec, layout: Layout, index: FieldIndexSpec): string {
  const meta = JSON.stringify({ scope: index.scope, field: index.field, kind: index.kind, unique: index.unique });
  if (meta.includes('*/')) throw new Error('a field index spec cannot contain "*/"');
  const value = typedExpr(layout, index.field, index.kind);
  const columns = index.unique ? [value] : [value, ...orderColumns(spec, layout)];
  return `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS "${fieldIndexName(spec.name, index)}" /* ${MARKER} ${meta} */ ON ${layout.table} (${columns.join(', ')}) WHERE ${scopeTerm(spec, layout, index.scope)}`;
}

/** One duplicated value among the scope's documents (what a unique index refused), or undefined. */
export function duplicateValueSql(spec: CollectionSpec, layout: Layout, index: FieldIndexSpec): string {
  const value = typedExpr(layout, index.field, index.kind);
  return `SELECT ${value} AS value FROM ${layout.table} WHERE ${scopeTerm(spec, layout, index.scope)} AND ${value} IS NOT NULL GROUP BY ${value} HAVING COUNT(*) > 1 LIMIT 1`;
}

/** The field index a CREATE statement in sqlite_schema describes, or null for any other index. */
export function parseFieldIndex(name: string, sql: string | null): FieldIndex | null {
  const meta = sql ? PARSE.exec(sql)?.[1] : undefined;
  if (!meta) return null;
  const spec = JSON.parse(meta) as FieldIndexSpec;
  return { name, scope: spec.scope, field: spec.field, kind: spec.kind, unique: spec.unique };
}

/** Whether a filter value can be compared through an index of this kind. */
export function valueOfKind(value: unknown, kind: IndexKind): boolean {
  if (kind === 'number') return typeof value === 'number';
  if (kind === 'boolean') return typeof value === 'boolean';
  return typeof value === 'string' || value instanceof Date;
}
