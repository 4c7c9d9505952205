import type { FilterNode, Scalar } from '../filter.ts';

/**
 * Compiles a parsed filter into a WHERE clause over `doc` (the JSON text of a document).
 * Every field is read through fieldExpr so that the text matches the expression indexes
 * created in sqlite-store.ts and SQLite can use them.
 */
export type SqlValue = string | number | null;

export function fieldExpr(field: string): string {
  return field === '_id' ? 'id' : `json_extract(doc, '$.${field}')`;
}

function typeExpr(field: string): string {
  return `json_type(doc, '$.${field}')`;
}

export function toSqlValue(value: Scalar): SqlValue {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

/** Ordered comparisons only compare like with like, as MongoDB's type bracketing does. */
function sameTypeGuard(field: string, value: Scalar): string {
  if (field === '_id') return '';
  if (typeof value === 'number') return `${typeExpr(field)} IN ('integer', 'real') AND `;
  return `${typeExpr(field)} = 'text' AND `;
}

export function compileWhere(node: FilterNode, params: SqlValue[]): string {
  switch (node.kind) {
    case 'and':
    case 'or': {
      if (node.children.length === 0) return node.kind === 'and' ? '1' : '0';
      const parts = node.children.map((child) => `(${compileWhere(child, params)})`);
      return parts.join(node.kind === 'and' ? ' AND ' : ' OR ');
    }
    case 'compare':
      return compileCompare(node.field, node.op, node.value, params);
  }
}

function compileCompare(field: string, op: string, value: Scalar | Scalar[] | boolean, params: SqlValue[]): string {
  const expr = fieldExpr(field);
  switch (op) {
    case '$eq':
      if (value === null) return `${expr} IS NULL`;
      params.push(toSqlValue(value as Scalar));
      return `${expr} = ?`;
    case '$ne':
      if (value === null) return `${expr} IS NOT NULL`;
      params.push(toSqlValue(value as Scalar));
      return `(${expr} IS NULL OR ${expr} <> ?)`;
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte': {
      const sqlOp = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[op];
      params.push(toSqlValue(value as Scalar));
      return `${sameTypeGuard(field, value as Scalar)}${expr} ${sqlOp} ?`;
    }
    case '$in':
    case '$nin': {
      const list = value as Scalar[];
      const hasNull = list.includes(null);
      const values = list.filter((v) => v !== null);
      params.push(...values.map(toSqlValue));
      const inList = values.length > 0 ? `${expr} IN (${values.map(() => '?').join(', ')})` : '0';
      if (op === '$in') return hasNull ? `(${inList} OR ${expr} IS NULL)` : inList;
      return hasNull ? `(${expr} IS NOT NULL AND NOT (${inList}))` : `(${expr} IS NULL OR NOT (${inList}))`;
    }
    case '$exists':
      return value ? `${expr} IS NOT NULL` : `${expr} IS NULL`;
    case '$has':
      params.push(toSqlValue(value as Scalar));
      return `(${typeExpr(field)} = 'array' AND EXISTS (SELECT 1 FROM json_each(doc, '$.${field}') AS item WHERE item.value = ?))`;
    default:
      throw new Error(`unhandled operator ${op}`);
  }
}

export function compileSearch(term: string, fields: readonly string[], params: SqlValue[]): string {
  const pattern = `%${term.replace(/[\\%_]/g, (c) => '\\' + c)}%`;
  const parts = fields.map((field) => {
    params.push(pattern);
    return `${fieldExpr(field)} LIKE ? ESCAPE '\\'`;
  });
  return parts.length > 0 ? parts.join(' OR ') : '0';
}
