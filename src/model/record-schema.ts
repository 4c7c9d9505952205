import { badRequest, type ErrorDetail } from '../lib/errors.ts';
import type { ValidateFunction } from 'ajv';
import { compileSchema, describeError, fieldJsonSchema, joinPath, sharedValidator } from './field-types/compile.ts';
import { FIELD_TYPE_NAMES, FIELD_TYPES, fieldTypeOf, type EndpointSchema, type FieldDef, type FieldReference, type FieldType, type JsonSchema } from './field-types/index.ts';

/**
 * An endpoint's record schema: checked when the definition is saved (validateEndpointSchema),
 * compiled once per definition (compileRecordSchema), then run on every record.
 */
export type { EndpointSchema, FieldDef } from './field-types/index.ts';

export const SCHEMA_LIMITS = {
  fieldsPerLevel: 200,
  /** Levels of nested definitions (object children and array items); top-level fields are level 1. */
  depth: 8,
  nameLength: 64,
  /** All definitions at all levels: 200 per level over 8 levels would otherwise be unbounded in practice. */
  totalFields: 2000,
} as const;

/** A record's own keys: refused as field names at the top level, where they would clash. */
const SYSTEM_FIELDS = new Set(['_id', 'id', 'createdAt', 'updatedAt', 'expiresAt']);
/** Keys that reach Object.prototype when assigned: refused at every level. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** At most this many details in a 400: an array of 10,000 wrong items would otherwise list 10,000. */
const MAX_DETAILS = 100;

const COMMON_OPTIONS: Record<string, JsonSchema> = {
  type: { type: 'string' },
  required: { type: 'boolean' },
  defaultValue: {},
  description: { type: 'string', maxLength: 2000 },
  indexed: { type: 'boolean' },
  unique: { type: 'boolean' },
};

/** Names a field index can read (the store's filter field names); others are refused when indexed. */
const INDEXABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** One validator of each type's options, compiled when the module loads. */
const optionValidators = new Map(
  (Object.values(FIELD_TYPES) as FieldType[]).map((type) => [
    type.name,
    compileSchema({
      type: 'object',
      additionalProperties: false,
      required: ['type', ...(type.options.required ?? [])],
      properties: { ...COMMON_OPTIONS, ...type.options.properties },
    }),
  ]),
);

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

function nameProblem(name: string, topLevel: boolean): string | undefined {
  if (name.length < 1 || name.length > SCHEMA_LIMITS.nameLength) return `must be 1 to ${SCHEMA_LIMITS.nameLength} characters long`;
  if (name.startsWith('$')) return 'must not start with $';
  if (name.includes('.')) return 'must not contain a dot';
  if (PROTOTYPE_KEYS.has(name) || (topLevel && SYSTEM_FIELDS.has(name))) return 'is a reserved name';
  return undefined;
}

/**
 * Checks a definition's schema when it is saved and returns it typed. Throws a 400 listing every
 * problem with its path (`schema.price.type`, `schema.address.children.city.maxLength`).
 */
export function validateEndpointSchema(schema: unknown): EndpointSchema {
  const problems: ErrorDetail[] = [];
  let total = 0;

  const checkFields = (fields: unknown, path: string, depth: number): void => {
    if (!isPlainObject(fields)) {
      problems.push({ field: path, message: 'must be an object of field definitions' });
      return;
    }
    const names = Object.keys(fields);
    if (names.length > SCHEMA_LIMITS.fieldsPerLevel) {
      problems.push({ field: path, message: `must have at most ${SCHEMA_LIMITS.fieldsPerLevel} fields` });
      return;
    }
    for (const name of names) {
      const problem = nameProblem(name, depth === 1);
      if (problem) problems.push({ field: `${path}.${name}`, message: problem });
      else checkField(fields[name], `${path}.${name}`, depth, false);
    }
  };

  const checkField = (def: unknown, path: string, depth: number, isItem: boolean): void => {
    if (depth > SCHEMA_LIMITS.depth) {
      problems.push({ field: path, message: `is nested too deeply (at most ${SCHEMA_LIMITS.depth} levels)` });
      return;
    }
    if (++total > SCHEMA_LIMITS.totalFields) {
      if (total === SCHEMA_LIMITS.totalFields + 1) problems.push({ field: 'schema', message: `must have at most ${SCHEMA_LIMITS.totalFields} field definitions in all` });
      return;
    }
    if (!isPlainObject(def)) {
      problems.push({ field: path, message: 'must be a field definition (an object)' });
      return;
    }
    const type = fieldTypeOf(def.type);
    if (!type) {
      problems.push({ field: `${path}.type`, message: def.type === undefined ? 'is required' : `must be one of: ${FIELD_TYPE_NAMES.join(', ')}` });
      return;
    }
    const validateOptions = optionValidators.get(type.name);
    if (validateOptions && !validateOptions(def)) {
      const unknownOption = (): string => `is not an option of ${type.name} fields`;
      problems.push(...(validateOptions.errors ?? []).map((error) => describeError(error, path, unknownOption)));
      return;
    }
    const before = problems.length;
    if (isItem) {
      for (const option of ['required', 'defaultValue']) if (def[option] !== undefined) problems.push({ field: `${path}.${option}`, message: 'is not allowed on array items' });
    }
    problems.push(...indexProblems(def, type, path, depth === 1 && !isItem));
    const field = def as FieldDef;
    type.check?.(field, {
      problem: (option, message) => problems.push({ field: `${path}.${option}`, message }),
      checkFields: (option, fields) => checkFields(fields, `${path}.${option}`, depth + 1),
      checkItem: (option, item) => checkField(item, `${path}.${option}`, depth + 1, true),
    });
    if (problems.length === before && field.defaultValue !== undefined) problems.push(...defaultValueProblems(field, `${path}.defaultValue`));
  };

  checkFields(schema, 'schema', 1);
  const first = problems[0];
  if (first) throw badRequest(`Invalid schema: ${first.field} ${first.message}`, problems.slice(0, MAX_DETAILS));
  return schema as EndpointSchema;
}

/**
 * `indexed` / `unique` (which implies indexed): top-level fields of a scalar type (the type says
 * how it is indexed: `indexedAs`) whose names a filter can name.
 */
function indexProblems(def: Record<string, unknown>, type: FieldType, path: string, topLevel: boolean): ErrorDetail[] {
  const option = def.unique === true ? 'unique' : def.indexed === true ? 'indexed' : undefined;
  if (option === undefined) return [];
  const at = `${path}.${option}`;
  if (!topLevel) return [{ field: at, message: 'can only be set on top-level fields' }];
  if (!type.indexedAs) {
    const scalars = (Object.values(FIELD_TYPES) as FieldType[]).filter((t) => t.indexedAs).map((t) => t.name);
    return [{ field: at, message: `cannot be set on a ${type.name} field: only scalar fields can be indexed (${scalars.join(', ')})` }];
  }
  if (def.unique === true && def.indexed === false) return [{ field: `${path}.indexed`, message: 'cannot be false on a unique field (unique fields are indexed)' }];
  const name = path.slice(path.lastIndexOf('.') + 1);
  if (!INDEXABLE_NAME.test(name)) return [{ field: at, message: 'needs a field name of letters, digits and _ (not starting with a digit)' }];
  return [];
}

/** A default must be a valid value for its field, once the defaults of its own children are applied. */
function defaultValueProblems(def: FieldDef, path: string): ErrorDetail[] {
  const validate = sharedValidator(fieldJsonSchema(def));
  if (validate(withFieldDefaults(def, def.defaultValue))) return [];
  return (validate.errors ?? []).map((error) => describeError(error, path, (parent) => `is not a field of ${parent}`));
}

export interface ReferenceField extends FieldReference {
  field: string;
}

/** One reference value in a record, where it is (`category`, `tags.1`, `sub.c`, `lines.0.product`). */
export interface ReferenceValue {
  field: string;
  ref: string;
  id: string;
}

export interface CompiledRecordSchema {
  readonly schema: EndpointSchema;
  readonly fieldNames: readonly string[];
  /** Top-level fields holding record ids (`many` for arrays of ids), for the engine's existence check. */
  readonly referenceFields: readonly ReferenceField[];
  /**
   * Every reference value in a validated record, at the top level and inside object children and
   * array items, for the existence check. `under` limits it to some top-level fields (a PATCH
   * checks only what it sends).
   */
  referencesIn(data: Record<string, unknown>, under?: (field: string) => boolean): ReferenceValue[];
  /** A copy of `data` with the defaults of omitted fields (deep-cloned), at the top level and in object children. Non-objects are returned as they are. */
  applyDefaults(data: Record<string, unknown>): Record<string, unknown>;
  applyDefaults(data: unknown): unknown;
  /** Returns `data` when it is a valid record; throws a 400 naming the first failing field and listing all. */
  validate(data: unknown): Record<string, unknown>;
  /** Keys `data` may not hold (`$…`, `__proto__`, `constructor`, `prototype` outside json values), for writes not validated otherwise (handlers). */
  keyProblems(data: Record<string, unknown>): ErrorDetail[];
}

const unknownField = (parent: string): string => (parent ? `is not a field of ${parent}` : 'is not a field of this endpoint');

/**
 * Compiles a schema that passed validateEndpointSchema. Call once per definition revision, never
 * per request. Cheap: the ajv validator is compiled on the first validate() (sharedValidator), so
 * a server with thousands of definitions starts without compiling any and holds the validators of
 * those that are written to. `eager` compiles it now, so a schema ajv refuses throws here (saves
 * are checked this way).
 */
export function compileRecordSchema(schema: EndpointSchema, options: { eager?: boolean } = {}): CompiledRecordSchema {
  // A field type this version does not know (a store written by a newer one) fails here, so the
  // definition is left out of the routes rather than failing its writes.
  assertKnownTypes(schema);
  const compile = (): ValidateFunction => sharedValidator(fieldJsonSchema({ type: 'object', children: schema }));
  let check: ValidateFunction | null = options.eager ? compile() : null;
  const referenceFields: ReferenceField[] = [];
  for (const [field, def] of Object.entries(schema)) {
    const reference = referenceOf(def);
    if (reference) referenceFields.push({ field, ...reference });
  }
  // Top-level fields with a reference anywhere in them: only these are walked on a write.
  const holders = Object.entries(schema).filter(([, def]) => holdsReference(def));

  return {
    schema,
    fieldNames: Object.keys(schema),
    referenceFields,
    referencesIn(data, under) {
      const out: ReferenceValue[] = [];
      for (const [field, def] of holders) {
        if (Object.hasOwn(data, field) && (!under || under(field))) collectReferences(def, data[field], field, out);
      }
      return out;
    },
    applyDefaults: ((data: unknown) => withDefaults(schema, data)) as CompiledRecordSchema['applyDefaults'],
    validate(data) {
      if (!isPlainObject(data)) throw badRequest('Invalid record: the body must be a JSON object', [{ field: '', message: 'must be a JSON object' }]);
      check ??= compile();
      const details = check(data) ? [] : (check.errors ?? []).map((error) => describeError(error, '', unknownField));
      for (const detail of forbiddenKeys(data, schema)) if (!details.some((known) => known.field === detail.field)) details.push(detail);
      const first = details[0];
      if (!first) return data;
      throw badRequest(`Invalid record: ${first.field} ${first.message}`, details.slice(0, MAX_DETAILS));
    },
    keyProblems: (data) => forbiddenKeys(data, schema),
  };
}

function assertKnownTypes(fields: EndpointSchema): void {
  const stack: FieldDef[] = Object.values(fields);
  for (let def = stack.pop(); def; def = stack.pop()) {
    const type = fieldTypeOf(def.type);
    if (!type) throw new Error(`Unknown field type ${JSON.stringify(def.type)}: validate schemas before compiling them`);
    const children = type.children?.(def);
    if (children) stack.push(...Object.values(children));
    const item = type.item?.(def);
    if (item) stack.push(item);
  }
}

function referenceOf(def: FieldDef): FieldReference | undefined {
  return fieldTypeOf(def.type)?.reference?.(def, referenceOf);
}

/** Whether a field holds a reference, itself or in its children or items. */
function holdsReference(def: FieldDef): boolean {
  const type = fieldTypeOf(def.type);
  if (type?.reference?.(def, referenceOf)) return true;
  const children = type?.children?.(def);
  if (children && Object.values(children).some(holdsReference)) return true;
  const item = type?.item?.(def);
  return item !== undefined && holdsReference(item);
}

function collectReferences(def: FieldDef, value: unknown, at: string, out: ReferenceValue[]): void {
  if (value === undefined || value === null) return;
  const type = fieldTypeOf(def.type);
  const reference = type?.reference?.(def, referenceOf);
  if (reference && !reference.many) {
    if (typeof value === 'string') out.push({ field: at, ref: reference.ref, id: value });
    return;
  }
  const children = type?.children?.(def);
  if (children && isPlainObject(value)) {
    for (const [name, child] of Object.entries(children)) if (Object.hasOwn(value, name)) collectReferences(child, value[name], `${at}.${name}`, out);
  }
  const item = type?.item?.(def);
  if (item && Array.isArray(value)) value.forEach((element, index) => collectReferences(item, element, `${at}.${index}`, out));
}

function withDefaults(fields: EndpointSchema, data: unknown): unknown {
  if (!isPlainObject(data)) return data;
  const out: Record<string, unknown> = { ...data }; // spread defines own properties: a "__proto__" key stays plain data
  for (const [name, def] of Object.entries(fields)) {
    if ((!Object.hasOwn(out, name) || out[name] === undefined) && def.defaultValue !== undefined) out[name] = structuredClone(def.defaultValue);
    if (Object.hasOwn(out, name)) out[name] = withFieldDefaults(def, out[name]);
  }
  return out;
}

function withFieldDefaults(def: FieldDef, value: unknown): unknown {
  const children = fieldTypeOf(def.type)?.children?.(def);
  return children ? withDefaults(children, value) : value;
}

/**
 * Keys a record may not hold outside `json` values: `__proto__`, `constructor` and `prototype`
 * (harmless as parsed JSON, but they turn into prototype changes in any later Object.assign or
 * deep merge) and keys starting with `$` (they read as operators). Inside a json value every key
 * is data (see field-types/json.ts). The walk follows the schema (object children, array items)
 * to know where json values are; free-form values (an object without children, an array without
 * items) are checked through. Iterative, so deeply nested JSON cannot overflow the stack.
 */
function forbiddenKeys(data: Record<string, unknown>, schema: EndpointSchema): ErrorDetail[] {
  const found: ErrorDetail[] = [];
  // `fields`: the named fields of an object at this point; `item`: the definition of an array's items;
  // neither: a free-form value.
  type Step = { value: object; path: string; fields?: EndpointSchema | undefined; item?: FieldDef | undefined };
  const described = (value: unknown, path: string, def: FieldDef | undefined): Step | undefined => {
    if (typeof value !== 'object' || value === null) return undefined;
    const type = def ? fieldTypeOf(def.type) : undefined;
    if (type?.keysAreData) return undefined;
    return { value, path, fields: def ? type?.children?.(def) : undefined, item: def ? type?.item?.(def) : undefined };
  };
  const stack: Step[] = [{ value: data, path: '', fields: schema }];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const { value, path, fields, item } = next;
    const isArray = Array.isArray(value);
    for (const [key, child] of Object.entries(value)) {
      const at = joinPath(path, key);
      if (!isArray && (PROTOTYPE_KEYS.has(key) || key.startsWith('$'))) {
        found.push({ field: at, message: 'is not an allowed key' });
        continue;
      }
      const def = isArray ? item : fields && Object.hasOwn(fields, key) ? fields[key] : undefined;
      const step = described(child, at, def);
      if (step) stack.push(step);
    }
  }
  return found;
}

/** A value for one field in generated sample requests: its default, or its type's example. */
export function exampleValue(def: FieldDef): unknown {
  if (def.defaultValue !== undefined) return withFieldDefaults(def, structuredClone(def.defaultValue));
  const type = fieldTypeOf(def.type);
  if (!type) throw new Error(`Unknown field type ${JSON.stringify(def.type)}`);
  return type.exampleValue(def, exampleValue);
}

/** A sample record with every field (patterns aside, it passes validation). */
export function exampleRecord(schema: EndpointSchema): Record<string, unknown> {
  return exampleValue({ type: 'object', children: schema }) as Record<string, unknown>;
}
