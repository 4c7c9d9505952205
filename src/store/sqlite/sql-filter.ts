import { assertFieldPath, type FilterNode, type Scalar } from '../filter.ts';
import type { IndexKind } from '../types.ts';
import { quoteLiteral, valueOfKind } from './field-indexes.ts';
import type { Layout, SqlValue } from './layout.ts';

/**
 * Compiles a parsed filter into a WHERE clause over a collection's table. Every field is read
 * through the layout's fieldExpr, so the text matches the indexes created in sqlite-store.ts
 * (columns or expressions) and SQLite can use them.
 */
export type { SqlValue } from './layout.ts';

export function toSqlValue(value: Scalar): SqlValue {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

/**
 * Comparisons only compare like with like, as MongoDB's type bracketing does: JSON true is the
 * integer 1 to SQLite and a string equals the JSON text of an array, so the type is checked too.
 * Dates are stored as ISO strings and so compare as text.
 */
function typeGuard(type: string, value: Scalar): string {
  if (typeof value === 'number') return `${type} IN ('integer', 'real')`;
  if (typeof value === 'boolean') return `${type} = '${value ? 'true' : 'false'}'`;
  return `${type} = 'text'`;
}

/** A string that may be the JSON text of an array or object: its equality needs a type check. */
export const JSON_LIKE = /^\s*[[{]/;

/** The field equals one of the (non-null) values, comparing like types only. */
function equalsAny(layout: Layout, field: string, values: Scalar[], params: SqlValue[]): string {
  const expr = layout.fieldExpr(field);
  const type = layout.typeExpr(field);
  const groups: string[] = [];
  const inList = (list: Scalar[]): string => {
    params.push(...list.map(toSqlValue));
    return list.length === 1 ? `${expr} = ?` : `${expr} IN (${list.map(() => '?').join(', ')})`;
  };
  const texts = values.filter((v) => typeof v === 'string' || v instanceof Date);
  const numbers = values.filter((v) => typeof v === 'number');
  // json_extract yields text only for strings and for arrays/objects (as JSON): a string that
  // cannot be such JSON text needs no type check, which keeps hot lookups cheap.
  const jsonLike = (v: Scalar): boolean => typeof v === 'string' && JSON_LIKE.test(v);
  const plainTexts = texts.filter((v) => !jsonLike(v));
  const guardedTexts = texts.filter(jsonLike);
  if (plainTexts.length > 0) groups.push(inList(plainTexts));
  if (guardedTexts.length > 0) groups.push(`${inList(guardedTexts)} AND ${typeGuard(type, '')}`);
  if (numbers.length > 0) groups.push(`${inList(numbers)} AND ${typeGuard(type, 0)}`);
  for (const flag of new Set(values.filter((v) => typeof v === 'boolean'))) groups.push(typeGuard(type, flag));
  return groups.length > 0 ? groups.map((g) => `(${g})`).join(' OR ') : '0';
}

/**
 * What a query through a field index compiles differently (index-plan.ts): conditions on the
 * indexed field read its typed expression (the index's own text, so that SQLite matches them to
 * it), and the scope's equality is a literal (so that SQLite sees the partial index's WHERE).
 */
export interface IndexedFields {
  typed: ReadonlyMap<string, { expr: string; kind: IndexKind }>;
  literal?: string;
}

export function compileWhere(layout: Layout, node: FilterNode, params: SqlValue[], indexed?: IndexedFields): string {
  switch (node.kind) {
    case 'and':
    case 'or': {
      if (node.children.length === 0) return node.kind === 'and' ? '1' : '0';
      const parts = node.children.map((child) => `(${compileWhere(layout, child, params, indexed)})`);
      return parts.join(node.kind === 'and' ? ' AND ' : ' OR ');
    }
    case 'compare':
      if (indexed) {
        const through = compileIndexed(indexed, layout, node.field, node.op, node.value, params);
        if (through !== null) return through;
      }
      return compileCompare(layout, node.field, node.op, node.value, params);
  }
}

const SARGABLE = new Set(['$eq', '$gt', '$gte', '$lt', '$lte', '$in']);

/**
 * A condition an index can answer, in the index's terms; null for any other (compiled as usual).
 * The typed expression is NULL for values of another kind, so `typed >= 5` means what the
 * generic `type is number AND value >= 5` means.
 */
function compileIndexed(indexed: IndexedFields, layout: Layout, field: string, op: string, value: Scalar | Scalar[] | boolean, params: SqlValue[]): string | null {
  if (field === indexed.literal && op === '$eq' && typeof value === 'string') return `${layout.fieldExpr(field)} = ${quoteLiteral(value)}`;
  const typed = indexed.typed.get(field);
  if (!typed || !SARGABLE.has(op)) return null;
  const values = op === '$in' ? (value as Scalar[]) : [value as Scalar];
  if (values.length === 0 || !values.every((v) => valueOfKind(v, typed.kind))) return null;
  params.push(...values.map(toSqlValue));
  if (op === '$in') return `${typed.expr} IN (${values.map(() => '?').join(', ')})`;
  const sqlOp = { $eq: '=', $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[op as '$eq'];
  return `${typed.expr} ${sqlOp} ?`;
}

function compileCompare(layout: Layout, field: string, op: string, value: Scalar | Scalar[] | boolean, params: SqlValue[]): string {
  const expr = layout.fieldExpr(field);
  switch (op) {
    case '$eq':
      if (value === null) return `${expr} IS NULL`;
      return `(${equalsAny(layout, field, [value as Scalar], params)})`;
    case '$ne':
      if (value === null) return `${expr} IS NOT NULL`;
      return `(${expr} IS NULL OR NOT (${equalsAny(layout, field, [value as Scalar], params)}))`;
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte': {
      const sqlOp = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[op];
      params.push(toSqlValue(value as Scalar));
      return `${typeGuard(layout.typeExpr(field), value as Scalar)} AND ${expr} ${sqlOp} ?`;
    }
    case '$in':
    case '$nin': {
      const list = value as Scalar[];
      const hasNull = list.includes(null);
      const inList = equalsAny(layout, field, list.filter((v) => v !== null), params);
      if (op === '$in') return hasNull ? `(${inList} OR ${expr} IS NULL)` : `(${inList})`;
      return hasNull ? `(${expr} IS NOT NULL AND NOT (${inList}))` : `(${expr} IS NULL OR NOT (${inList}))`;
    }
    case '$exists':
      return value ? `${expr} IS NOT NULL` : `${expr} IS NULL`;
    case '$has': {
      const source = layout.arraySource(field);
      if (source === null) return '0';
      let match: string;
      if (value === null) {
        match = `item.type = 'null'`;
      } else {
        params.push(toSqlValue(value as Scalar));
        match = `item.value = ? AND ${typeGuard('item.type', value as Scalar)}`;
      }
      return `(${layout.typeExpr(field)} = 'array' AND EXISTS (SELECT 1 FROM json_each(${source}) AS item WHERE ${match}))`;
    }
    default:
      throw new Error(`unhandled operator ${op}`);
  }
}

export function compileSearch(layout: Layout, term: string, fields: readonly string[], params: SqlValue[]): string {
  const pattern = `%${term.replace(/[\\%_]/g, (c) => '\\' + c)}%`;
  const parts = fields.map((field) => {
    assertFieldPath(field);
    params.push(pattern);
    return `${layout.fieldExpr(field)} LIKE ? ESCAPE '\\'`;
  });
  return parts.length > 0 ? parts.join(' OR ') : '0';
}
