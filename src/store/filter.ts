import { InvalidFilterError, type Filter, type SortSpec, type Update } from './types.ts';

/**
 * Filters are parsed into a small tree before either adapter sees them, so both accept exactly
 * the same operators and reject everything else instead of silently ignoring it.
 *
 * | operator            | meaning                                            |
 * |---------------------|----------------------------------------------------|
 * | `field: value`      | equals (a scalar; `null` also matches a missing field) |
 * | `$eq $ne`           | equals / not equals (`$ne` matches a missing field) |
 * | `$gt $gte $lt $lte` | ordered comparison of numbers, strings or dates    |
 * | `$in $nin`          | one of / none of a list of scalars                 |
 * | `$exists`           | the field is present and not null (true) or absent / null (false) |
 * | `$has`              | an array field contains the scalar                 |
 * | `$and $or`          | lists of filters                                   |
 */
export type Scalar = string | number | boolean | null | Date;
export type CompareOp = '$eq' | '$ne' | '$gt' | '$gte' | '$lt' | '$lte' | '$in' | '$nin' | '$exists' | '$has';

export type FilterNode =
  | { kind: 'and'; children: FilterNode[] }
  | { kind: 'or'; children: FilterNode[] }
  | { kind: 'compare'; field: string; op: CompareOp; value: Scalar | Scalar[] | boolean };

const OPERATORS = new Set<string>(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists', '$has']);
const FIELD_SEGMENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_LIST = 1000;
const MAX_DEPTH = 8;
const MAX_CONDITIONS = 600;

export function assertFieldPath(path: string): void {
  const segments = path.split('.');
  const valid = segments.length <= 8 && segments.every((s) => FIELD_SEGMENT.test(s) && !FORBIDDEN_SEGMENTS.has(s));
  if (!valid) throw new InvalidFilterError(`invalid field name "${path}"`);
}

function isScalar(value: unknown): value is Scalar {
  return value === null || value instanceof Date || ['string', 'number', 'boolean'].includes(typeof value);
}

function scalar(field: string, op: string, value: unknown): Scalar {
  if (!isScalar(value)) throw new InvalidFilterError(`${op} on "${field}" needs a string, number, boolean, date or null`);
  if (typeof value === 'number' && !Number.isFinite(value)) throw new InvalidFilterError(`${op} on "${field}" needs a finite number`);
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

export function parseFilter(filter: Filter): FilterNode {
  return parseNode(filter, 0, { left: MAX_CONDITIONS });
}

/** Each condition becomes a term of one SQL expression, which SQLite bounds (about 1,000 deep). */
function spend(budget: { left: number }): void {
  if (--budget.left < 0) throw new InvalidFilterError(`filter has more than ${MAX_CONDITIONS} conditions`);
}

function parseNode(filter: Filter, depth: number, budget: { left: number }): FilterNode {
  if (!isPlainObject(filter)) throw new InvalidFilterError('a filter must be an object');
  if (depth > MAX_DEPTH) throw new InvalidFilterError('filter is nested too deeply');
  const children: FilterNode[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(value) || value.length === 0) throw new InvalidFilterError(`${key} needs a non-empty list of filters`);
      children.push({ kind: key === '$and' ? 'and' : 'or', children: value.map((f: Filter) => parseNode(f, depth + 1, budget)) });
      continue;
    }
    if (key.startsWith('$')) throw new InvalidFilterError(`unsupported filter operator "${key}"`);
    assertFieldPath(key);
    if (!isPlainObject(value)) {
      spend(budget);
      children.push({ kind: 'compare', field: key, op: '$eq', value: scalar(key, 'equality', value) });
      continue;
    }
    const entries = Object.entries(value);
    if (entries.length === 0) throw new InvalidFilterError(`empty condition on "${key}"`);
    for (const [op, operand] of entries) {
      if (!OPERATORS.has(op)) throw new InvalidFilterError(`unsupported filter operator "${op}" on "${key}"`);
      spend(budget);
      children.push({ kind: 'compare', field: key, op: op as CompareOp, value: operand_(key, op as CompareOp, operand) });
    }
  }
  return { kind: 'and', children };
}

function operand_(field: string, op: CompareOp, operand: unknown): Scalar | Scalar[] | boolean {
  if (op === '$exists') {
    if (typeof operand !== 'boolean') throw new InvalidFilterError(`$exists on "${field}" needs true or false`);
    return operand;
  }
  if (op === '$in' || op === '$nin') {
    if (!Array.isArray(operand) || operand.length > MAX_LIST) throw new InvalidFilterError(`${op} on "${field}" needs a list of at most ${MAX_LIST} values`);
    return operand.map((v) => scalar(field, op, v));
  }
  const value = scalar(field, op, operand);
  if (['$gt', '$gte', '$lt', '$lte'].includes(op) && (value === null || typeof value === 'boolean')) {
    throw new InvalidFilterError(`${op} on "${field}" needs a number, string or date`);
  }
  return value;
}

export function parseSort(sort: SortSpec | undefined): Array<{ field: string; direction: 1 | -1 }> {
  if (!sort) return [];
  return Object.entries(sort).map(([field, direction]) => {
    assertFieldPath(field);
    if (direction !== 1 && direction !== -1) throw new InvalidFilterError(`sort direction for "${field}" must be 1 or -1`);
    return { field, direction };
  });
}

export function validateUpdate(update: Update): void {
  const allowed = new Set(['$set', '$unset', '$inc']);
  for (const key of Object.keys(update)) {
    if (!allowed.has(key)) throw new InvalidFilterError(`unsupported update operator "${key}"`);
  }
  for (const field of Object.keys(update.$set ?? {})) assertFieldPath(field);
  for (const field of update.$unset ?? []) assertFieldPath(field);
  for (const [field, by] of Object.entries(update.$inc ?? {})) {
    assertFieldPath(field);
    if (typeof by !== 'number' || !Number.isFinite(by)) throw new InvalidFilterError(`$inc on "${field}" needs a finite number`);
  }
  const touched = [...Object.keys(update.$set ?? {}), ...(update.$unset ?? []), ...Object.keys(update.$inc ?? {})];
  if (touched.includes('_id')) throw new InvalidFilterError('_id cannot be changed');
}

/**
 * Equality conditions of a filter: the fields an upsert copies into the new document, keyed by
 * path (a dotted path becomes a nested field, as MongoDB does; `_id` is kept).
 */
export function equalityFields(node: FilterNode): Record<string, Scalar> {
  const out: Record<string, Scalar> = {};
  if (node.kind !== 'and') return out;
  for (const child of node.children) {
    if (child.kind === 'compare' && child.op === '$eq') out[child.field] = child.value as Scalar;
    if (child.kind === 'and') Object.assign(out, equalityFields(child));
  }
  return out;
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
