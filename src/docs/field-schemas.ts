// OpenAPI schemas of records, built from an endpoint's field schema through each field type's
// own describer (`openApi` in src/model/field-types/*). What this file adds is common to every
// type: the field's description, its default, and which fields a request must send. Also the
// list filter parameters, from each type's `filter` (the definitions the server filters with).
import { fieldTypeOf, type EndpointSchema, type FieldDef, type FilterOperator, type JsonSchema, type OpenApiContext } from '../model/field-types/index.ts';
import { fieldFilter } from '../model/field-types/list-query.ts';
import { isFilterParam, RECORD_FIELD_FILTERS } from '../runtime/list-filter.ts';

const ID = { type: 'string', pattern: '^[0-9a-f]{24}$', example: '6650f0c2a1b2c3d4e5f60718' };
const STAMP = { type: 'string', format: 'date-time' };

export function fieldSchema(def: FieldDef, mode: OpenApiContext['mode'], populated: OpenApiContext['populated']): JsonSchema {
  const type = fieldTypeOf(def.type);
  // Definitions are validated at save time; an unknown type can only be a stale stored one.
  if (!type) return {};
  const ctx: OpenApiContext = { mode, populated, child: (child) => fieldSchema(child, mode, populated) };
  const { schema, note } = portablePattern(type.openApi(def, ctx));
  const description = [def.description, schema.description, note, indexNote(def)].filter((text) => typeof text === 'string' && text !== '').join('; ');
  return {
    ...schema,
    ...(description ? { description } : {}),
    ...(def.defaultValue !== undefined ? { default: def.defaultValue } : {}),
    ...(def.unique === true ? { 'x-dyn-unique': true, 'x-dyn-indexed': true } : def.indexed === true ? { 'x-dyn-indexed': true } : {}),
  };
}

/**
 * The server checks patterns with RE2, whose syntax has what JSON Schema's ECMA-262 regular
 * expressions lack (`(?i)`, `(?P<name>…)`): a validating client or a code generator cannot compile
 * such a pattern. It is left out of the schema and said in words, so the document stays usable.
 */
function portablePattern(schema: JsonSchema): { schema: JsonSchema; note?: string } {
  const pattern = schema.pattern;
  if (typeof pattern !== 'string') return { schema };
  try {
    new RegExp(pattern, 'u');
    return { schema };
  } catch {
    const { pattern: _left, ...rest } = schema;
    return { schema: rest, note: `matches the RE2 pattern ${pattern} (checked by the server; not ECMA-262, so not in the schema)` };
  }
}

/** What `indexed` / `unique` promise a client, in words (the OpenAPI extensions say it to tools). */
export function indexNote(def: FieldDef): string | undefined {
  if (def.unique === true) return 'unique: no two records of this path hold the same value (a write repeating one is a 409); indexed';
  if (def.indexed === true) return 'indexed: filters and sorts on it read an index';
  return undefined;
}

function properties(fields: EndpointSchema, mode: OpenApiContext['mode'], populated: OpenApiContext['populated']): Record<string, JsonSchema> {
  return Object.fromEntries(Object.entries(fields).map(([name, def]) => [name, fieldSchema(def, mode, populated)]));
}

/**
 * A request body. `create` (POST) needs the required fields a default does not fill; `replace`
 * (PUT, which applies no defaults) every required field; `patch` none (the body is merged into
 * the stored record). Unknown fields are refused.
 */
export function inputSchema(fields: EndpointSchema, kind: 'create' | 'replace' | 'patch'): JsonSchema {
  const required = kind === 'patch' ? [] : Object.entries(fields).filter(([, def]) => def.required === true && (kind === 'replace' || def.defaultValue === undefined)).map(([name]) => name);
  return { type: 'object', properties: properties(fields, 'input', () => undefined), additionalProperties: false, ...(required.length ? { required } : {}) };
}

/**
 * A stored record as responses show it: `_id`, the fields, the timestamps. Schema changes do not
 * migrate data, and other writers (another definition of the path, a handler's `db`) follow their
 * own rules: a record may lack a field required today, hold a longer text or a value another enum
 * would refuse, or fields no longer defined. So responses describe the fields' types and words,
 * never the rules a write is checked against, and a client validating responses with the document
 * does not fail on records the server really returns.
 */
export function recordSchema(fields: EndpointSchema, populated: OpenApiContext['populated']): JsonSchema {
  return {
    type: 'object',
    description: RECORD_NOTE,
    properties: {
      _id: ID,
      ...descriptive(properties(fields, 'output', populated)),
      createdAt: STAMP,
      updatedAt: STAMP,
      expiresAt: { ...STAMP, description: 'set when the endpoint keeps records for a limited number of days' },
    },
    required: ['_id', 'createdAt', 'updatedAt'],
  };
}

const RECORD_NOTE = "A record as stored: the fields' rules (required, lengths, ranges, patterns, allowed values) are checked on writes, so they are in the request bodies only; a record written before a schema change keeps what it was written with.";

/** A reference expanded by `?populate`: `{id, ...fields of the linked record}` (one level deep). */
export function populatedSchema(fields: EndpointSchema): JsonSchema {
  return { type: 'object', properties: { id: ID, ...descriptive(properties(fields, 'input', () => undefined)) }, required: ['id'] };
}

/** The keywords that check a value rather than describe its type (left out of responses). */
const RULES = new Set(['required', 'minLength', 'maxLength', 'pattern', 'enum', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'additionalProperties']);

function descriptive(schemas: Record<string, JsonSchema>): Record<string, JsonSchema> {
  return Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, withoutRules(schema)]));
}

function withoutRules(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (RULES.has(key)) continue;
    if (key === 'properties' && value && typeof value === 'object') out[key] = descriptive(value as Record<string, JsonSchema>);
    else if ((key === 'items' || key === 'not') && value && typeof value === 'object' && !Array.isArray(value)) out[key] = withoutRules(value as JsonSchema);
    else if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf') && Array.isArray(value)) out[key] = value.map((item) => withoutRules(item as JsonSchema));
    else out[key] = value;
  }
  return out;
}

export const RECORD_ID_SCHEMA: JsonSchema = ID;

// ---------------------------------------------------------------- list filters
//
// One `deepObject` parameter per filterable name (`price[gte]=5`), saying exactly what the
// server takes there: the operators of the field type's own `filter` (src/model/field-types/),
// each operand as that filter reads it. `has` is left out where an item can never equal a query
// value (items that are objects, arrays or json: their filter takes no `eq`).

/** What the query parameter of one filterable name takes. */
interface FilterTarget {
  /** The query name: a field, an object's child by its dotted path, or a field every record has. */
  name: string;
  /** What its operand schemas depend on, as a name: `string`, `array_of_number`, … */
  kind: string;
  /** The operators documented (the filter's, less any that cannot match). */
  operators: readonly FilterOperator[];
  /** The operand of eq, ne and the ranges. */
  value: JsonSchema;
  /** The operand of `has`, when documented. */
  item?: JsonSchema;
  notes: string[];
}

/** `field=value` is `field[eq]=value`; `in`/`nin` split their value at commas; `exists` reads true or false. */
function operandSchema(target: FilterTarget, operator: FilterOperator): JsonSchema {
  if (operator === 'exists') return { type: 'boolean' };
  if (operator === 'in' || operator === 'nin') return { type: 'string' };
  if (operator === 'has') return target.item ?? {};
  return target.value;
}

/**
 * A value as a filter reads it, from the field type's OpenAPI schema: its type (any number for a
 * number field, integer or not) and the type's own format (a record id's, a datetime's), which
 * its filter holds values to. Not an administrator's `pattern` or `enum`: those constrain stored
 * values, not a range's bounds. Few keys: each is repeated per operator, field and list.
 */
function valueSchema(def: FieldDef | undefined): JsonSchema {
  const described = def ? (fieldTypeOf(def.type)?.openApi(def, NO_CONTEXT) ?? {}) : {};
  const own = typeof described.pattern === 'string' && described.pattern !== def?.pattern;
  return { type: described.type === 'integer' ? 'number' : (described.type ?? 'string'), ...(own ? { pattern: described.pattern } : {}) };
}

const NO_CONTEXT: OpenApiContext = { mode: 'input', populated: () => undefined, child: () => ({}) };

function fieldTarget(name: string, def: FieldDef): FilterTarget {
  const filter = fieldFilter(def);
  const itemDef = fieldTypeOf(def.type)?.item?.(def as never);
  // `has` asks whether one item equals the value its item filter reads. Items read as their type
  // (their filter takes eq) can; items that may be any JSON value (untyped, json) can when they
  // are text, which is how the value is read; objects and arrays never can.
  const anyItem = itemDef === undefined || fieldTypeOf(itemDef.type)?.openApi(itemDef, NO_CONTEXT).type === undefined;
  const hasMatches = filter.item !== undefined && (anyItem || filter.item.operators.includes('eq'));
  const notes: string[] = [];
  if (filter.operators.includes('has') && hasMatches && anyItem) notes.push('has matches text items only (items may be any JSON value)');
  if (def.unique === true || def.indexed === true) notes.push('indexed: eq, in and ranges read the index');
  return {
    name,
    kind: filter.operators.includes('has') ? `${def.type}_of_${itemDef?.type ?? 'any'}` : def.type,
    operators: filter.operators.filter((op) => op !== 'has' || hasMatches),
    value: valueSchema(def),
    ...(hasMatches ? { item: anyItem ? { type: 'string' } : valueSchema(itemDef) } : {}),
    notes,
  };
}

function filterDescription(target: FilterTarget): string {
  const { name, operators } = target;
  const lists = operators.filter((op) => op === 'in' || op === 'nin');
  const form = `${operators.includes('eq') ? `${name}=value or ` : ''}${name}[op]=value with op one of ${operators.join(', ')}`;
  return [`filter on ${name}: ${form}`, lists.length ? `${lists.join(' and ')} take comma-separated values` : '', ...target.notes].filter(Boolean).join('; ');
}

/**
 * Gives a filter's object schema a place in the document: the same schema serves every field of
 * a kind (every string field takes the same operands), so the document refers to one copy.
 */
export type ShareFilterSchema = (kind: string, schema: JsonSchema) => JsonSchema;

/** The deepObject parameter of one filterable name. */
function filterParameter(target: FilterTarget, share: ShareFilterSchema): JsonSchema {
  const schema = { type: 'object', properties: Object.fromEntries(target.operators.map((op) => [op, operandSchema(target, op)])), additionalProperties: false };
  return { name: target.name, in: 'query', style: 'deepObject', explode: true, schema: share(target.kind, schema), description: filterDescription(target) };
}

/**
 * A field named like a list parameter (`page`, `sort`, …): `page=3` is the page, so the field is
 * filtered with an explicit operator only (`page[eq]=3`). One parameter per operator: a
 * deepObject parameter would share its name with the list parameter.
 */
function operatorParameters(target: FilterTarget): JsonSchema[] {
  return target.operators.map((op) => ({
    name: `${target.name}[${op}]`,
    in: 'query',
    schema: operandSchema(target, op),
    description: `filter on the field ${target.name} (\`${target.name}=\` alone is the list parameter)${op === 'in' || op === 'nin' ? '; comma-separated values' : ''}`,
  }));
}

/**
 * The filter parameters of a list: every field the server filters on (isFilterParam, the
 * server's own test) — top-level fields and objects' children by their dotted paths.
 */
export function filterParameters(fields: EndpointSchema, listParams: readonly string[], share: ShareFilterSchema): JsonSchema[] {
  const out: JsonSchema[] = [];
  const visit = (level: EndpointSchema, prefix: string): void => {
    for (const [key, def] of Object.entries(level)) {
      const name = prefix + key;
      if (!isFilterParam(fields, name)) continue;
      const target = fieldTarget(name, def);
      if (listParams.includes(name)) out.push(...operatorParameters(target));
      else out.push(filterParameter(target, share));
      const children = fieldTypeOf(def.type)?.children?.(def as never);
      if (children) visit(children, `${name}.`);
    }
  };
  visit(fields, '');
  return out;
}

/**
 * The filters on the fields every record has (`_id`, `createdAt`, `updatedAt`), the same for
 * every list: component parameters, referenced by each list, with the operators list-filter.ts
 * filters them with.
 */
export function recordFieldParameters(): Record<string, JsonSchema> {
  const example = '2026-01-01T00:00:00.000Z';
  // Dates every record has: read as a datetime field's values are, compared as dates.
  const date = { ...valueSchema({ type: 'datetime' }), example };
  const fields = [
    { name: '_id', value: RECORD_ID_SCHEMA, notes: [] },
    { name: 'createdAt', value: date, notes: ['an ISO 8601 date or date-time, compared as a date (createdAt[gte]=2026-11-01)'] },
    { name: 'updatedAt', value: date, notes: ['an ISO 8601 date or date-time, compared as a date'] },
  ];
  return Object.fromEntries(
    fields.map(({ name, value, notes }) => {
      const operators = RECORD_FIELD_FILTERS[name]?.operators ?? [];
      return [`filter_${name}`, filterParameter({ name, kind: name, operators, value, notes }, (_, schema) => schema)];
    }),
  );
}
