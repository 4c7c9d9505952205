// Field filters on list requests, in the query string: `?status=open&price[gte]=5&price[lt]=20`,
// `tags[has]=new`, `category[in]=id1,id2`, `note[exists]=false`, `meta.color=red` (an object's
// child). Names must be fields of the endpoint's schema (or `_id`, `createdAt`, `updatedAt`);
// each field's type says which operators it takes and how a value is read (its `filter` in
// src/model/field-types/). The result is a filter over record fields for RecordsService.list
// (its closed operator set).
import { badRequest } from '../lib/errors.ts';
import { BOOLEAN_FILTER } from '../model/field-types/boolean.ts';
import { ISO_DATE_PROBLEM, isIsoDateTime } from '../model/field-types/datetime.ts';
import { FILTER_OPERATORS, TEXT_FILTER, fieldTypeOf, type EndpointSchema, type FieldDef, type FieldFilter, type FilterOperator, type FilterValue } from '../model/field-types/index.ts';
import { fieldFilter, searchFields } from '../model/field-types/list-query.ts';
import { RECORD_ID_FILTER } from '../model/field-types/reference.ts';

export { searchFields };

const PARAM = /^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,7})(?:\[([A-Za-z]+)\])?$/;
const MAX_FILTERS = 20;
const MAX_LIST = 100;

// Record dates are written as dates: compared as dates on both stores (ISO text on the embedded
// one, BSON dates on MongoDB, which would not match a string).
const STORED_DATE: FieldFilter = {
  operators: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte'],
  read: (raw) => (isIsoDateTime(raw) ? new Date(raw) : { problem: ISO_DATE_PROBLEM }),
};

/** The fields every record has besides its schema's, and how each is filtered (also for docs). */
export const RECORD_FIELD_FILTERS: Readonly<Record<string, FieldFilter>> = { _id: { ...RECORD_ID_FILTER, operators: ['eq', 'ne', 'in', 'nin'] }, createdAt: STORED_DATE, updatedAt: STORED_DATE };

/** The operators a list filter on this field takes (for docs). */
export function filterOperators(def: FieldDef): readonly string[] {
  return fieldFilter(def).operators;
}

/** The field definition at a dotted path through object children, or undefined. */
function fieldAt(schema: EndpointSchema, path: string): FieldDef | undefined {
  let fields: EndpointSchema | undefined = schema;
  let def: FieldDef | undefined;
  for (const name of path.split('.')) {
    def = fields && Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (!def) return undefined;
    fields = fieldTypeOf(def.type)?.children?.(def as never);
  }
  return def;
}

/** Whether a query parameter names a filter on this schema (other unknown names stay errors). */
export function isFilterParam(schema: EndpointSchema, name: string): boolean {
  const match = PARAM.exec(name);
  return match !== null && (Object.hasOwn(RECORD_FIELD_FILTERS, match[1] as string) || fieldAt(schema, match[1] as string) !== undefined);
}

/** Builds the filter from the query's filter parameters (those isFilterParam accepts). */
export function listFilter(schema: EndpointSchema, params: Record<string, string>): Record<string, unknown> {
  const entries = Object.entries(params);
  if (entries.length > MAX_FILTERS) throw badRequest(`A list takes at most ${MAX_FILTERS} filters`, [{ field: 'query', message: `takes at most ${MAX_FILTERS} filters` }]);
  const filter: Record<string, Record<string, unknown>> = {};
  for (const [name, raw] of entries) {
    const [, field, given] = PARAM.exec(name) as RegExpExecArray;
    const path = field as string;
    const kind = Object.hasOwn(RECORD_FIELD_FILTERS, path) ? (RECORD_FIELD_FILTERS[path] as FieldFilter) : fieldFilter(fieldAt(schema, path) as FieldDef);
    const operator = (given ?? 'eq') as FilterOperator;
    if (!FILTER_OPERATORS.includes(operator)) {
      throw badRequest(`Query parameter "${name}": unknown operator "${given}"; use one of ${FILTER_OPERATORS.join(', ')}`, [{ field: path, message: `unknown operator "${given}"` }]);
    }
    if (!kind.operators.includes(operator)) {
      throw badRequest(`Query parameter "${name}": ${path} takes ${kind.operators.join(', ')}`, [{ field: path, message: `does not take ${operator}` }]);
    }
    const read = (reader: FieldFilter, value: string): FilterValue => {
      const result = reader.read(value);
      if (typeof result === 'object' && !(result instanceof Date)) throw badRequest(`Query parameter "${name}" must be ${result.problem}`, [{ field: path, message: `must be ${result.problem}` }]);
      return result;
    };
    let operand: unknown;
    if (operator === 'exists') operand = read(BOOLEAN_FILTER, raw);
    else if (operator === 'in' || operator === 'nin') {
      const values = raw.split(',');
      if (values.length > MAX_LIST) throw badRequest(`Query parameter "${name}" takes at most ${MAX_LIST} values`, [{ field: path, message: `takes at most ${MAX_LIST} values` }]);
      operand = values.map((value) => read(kind, value));
    } else if (operator === 'has') operand = read(kind.item ?? TEXT_FILTER, raw);
    else operand = read(kind, raw);
    const conditions = (filter[path] ??= {});
    // `price=10&price[eq]=20` name one condition twice: one of them would be dropped unseen.
    if (Object.hasOwn(conditions, `$${operator}`)) {
      throw badRequest(`Query parameter "${name}": ${path}[${operator}] is given twice (${path}=… is ${path}[eq]=…)`, [{ field: path, message: `${operator} is given twice` }]);
    }
    conditions[`$${operator}`] = operand;
  }
  return filter;
}
