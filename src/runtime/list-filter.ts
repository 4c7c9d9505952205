import { badRequest } from '../lib/errors.ts';
import { isId } from '../lib/ids.ts';
import type { EndpointSchema, FieldDef } from '../model/field-types/field-type.ts';

/**
 * Field filters on list requests, in the query string: `?status=open&price[gte]=5&price[lt]=20`,
 * `tags[has]=new`, `category[in]=id1,id2`, `note[exists]=false`, `meta.color=red` (an object's
 * child). Names must be fields of the endpoint's schema (or `_id`, `createdAt`, `updatedAt`);
 * values are read as the field's type, and the operators a type takes are listed below. The
 * result is a filter over record fields for RecordsService.list (its closed operator set).
 */
const OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'has', 'exists'] as const;
type Operator = (typeof OPERATORS)[number];
type Scalar = string | number | boolean | Date;

const PARAM = /^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,7})(?:\[([A-Za-z]+)\])?$/;
const MAX_FILTERS = 20;
const MAX_LIST = 100;

/** How a query value is read for one kind of field, and which operators apply to it. */
interface Kind {
  operators: readonly Operator[];
  /** The value to compare with, or a message completing "must be …". */
  read(raw: string): Scalar | { problem: string };
  /** For `has`: how one item of an array field is read. */
  item?: Kind;
}

const ORDERED: readonly Operator[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists'];
const text: Kind = { operators: ORDERED, read: (raw) => raw };
const number: Kind = {
  operators: ORDERED,
  read: (raw) => (raw.trim() !== '' && Number.isFinite(Number(raw)) ? Number(raw) : { problem: 'a number' }),
};
const boolean: Kind = {
  operators: ['eq', 'ne', 'exists'],
  read: (raw) => (raw === 'true' ? true : raw === 'false' ? false : { problem: 'true or false' }),
};
const datetime: Kind = {
  operators: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'exists'],
  read: (raw) => (Number.isNaN(Date.parse(raw)) ? { problem: 'an ISO 8601 date' } : raw),
};
const recordId: Kind = { operators: ['eq', 'ne', 'in', 'nin', 'exists'], read: (raw) => (isId(raw) ? raw : { problem: 'a record id' }) };
const presence: Kind = { operators: ['exists'], read: (raw) => raw };
// Record dates are written as dates: compared as dates on both stores (ISO text on the embedded
// one, BSON dates on MongoDB, which would not match a string).
const storedDate: Kind = {
  operators: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte'],
  read: (raw) => (Number.isNaN(Date.parse(raw)) ? { problem: 'an ISO 8601 date' } : new Date(raw)),
};

const META: Record<string, Kind> = { _id: { ...recordId, operators: ['eq', 'ne', 'in', 'nin'] }, createdAt: storedDate, updatedAt: storedDate };

function kindOf(def: FieldDef): Kind {
  switch (def.type) {
    case 'string':
      return text;
    case 'number':
      return number;
    case 'boolean':
      return boolean;
    case 'datetime':
      return datetime;
    case 'reference':
      return recordId;
    case 'array': {
      const items = def.items as FieldDef | undefined;
      return { operators: ['has', 'exists'], read: (raw) => raw, item: items ? kindOf(items) : text };
    }
    default:
      // object (its children are filtered by their own names) and json (no schema to read by)
      return presence;
  }
}

/** The operators a list filter on this field takes (for docs). */
export function filterOperators(def: FieldDef): readonly string[] {
  return kindOf(def).operators;
}

/** The field definition at a dotted path through object children, or undefined. */
function fieldAt(schema: EndpointSchema, path: string): FieldDef | undefined {
  let fields: EndpointSchema | undefined = schema;
  let def: FieldDef | undefined;
  for (const name of path.split('.')) {
    def = fields && Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (!def) return undefined;
    fields = def.type === 'object' ? (def.children as EndpointSchema | undefined) : undefined;
  }
  return def;
}

/** Whether a query parameter names a filter on this schema (other unknown names stay errors). */
export function isFilterParam(schema: EndpointSchema, name: string): boolean {
  const match = PARAM.exec(name);
  return match !== null && (Object.hasOwn(META, match[1] as string) || fieldAt(schema, match[1] as string) !== undefined);
}

/** Builds the filter from the query's filter parameters (those isFilterParam accepts). */
export function listFilter(schema: EndpointSchema, params: Record<string, string>): Record<string, unknown> {
  const entries = Object.entries(params);
  if (entries.length > MAX_FILTERS) throw badRequest(`A list takes at most ${MAX_FILTERS} filters`);
  const filter: Record<string, Record<string, unknown>> = {};
  for (const [name, raw] of entries) {
    const [, field, given] = PARAM.exec(name) as RegExpExecArray;
    const path = field as string;
    const kind = Object.hasOwn(META, path) ? (META[path] as Kind) : kindOf(fieldAt(schema, path) as FieldDef);
    const operator = (given ?? 'eq') as Operator;
    if (!OPERATORS.includes(operator)) throw badRequest(`Query parameter "${name}": unknown operator "${given}"; use one of ${OPERATORS.join(', ')}`);
    if (!kind.operators.includes(operator)) {
      throw badRequest(`Query parameter "${name}": ${path} takes ${kind.operators.join(', ')}`, [{ field: path, message: `does not take ${operator}` }]);
    }
    const read = (reader: Kind, value: string): Scalar => {
      const result = reader.read(value);
      if (typeof result === 'object' && !(result instanceof Date)) throw badRequest(`Query parameter "${name}" must be ${result.problem}`, [{ field: path, message: `must be ${result.problem}` }]);
      return result;
    };
    let operand: unknown;
    if (operator === 'exists') operand = read(boolean, raw);
    else if (operator === 'in' || operator === 'nin') {
      const values = raw.split(',');
      if (values.length > MAX_LIST) throw badRequest(`Query parameter "${name}" takes at most ${MAX_LIST} values`);
      operand = values.map((value) => read(kind, value));
    } else if (operator === 'has') operand = read(kind.item ?? text, raw);
    else operand = read(kind, raw);
    (filter[path] ??= {})[`$${operator}`] = operand;
  }
  return filter;
}
