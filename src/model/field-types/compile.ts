import { createHash } from 'node:crypto';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { ErrorDetail } from '../../lib/errors.ts';
import { patternEngine } from '../../lib/safe-pattern.ts';
import { FIELD_TYPES, fieldTypeOf, type FieldDef, type FieldType, type JsonSchema } from './index.ts';

/**
 * Field definitions → JSON Schema → ajv. Set up like validation.ts (allErrors, strict, no
 * coercion), plus:
 * - ownProperties: a field named `toString` is not "present" through Object.prototype;
 * - verbose: an error carries the schema it failed in, whose `fieldType` annotation lets the
 *   message say what the field expects ("must be an ISO 8601 date ...", not "must be string").
 */
const ajv = new Ajv({
  allErrors: true,
  strict: true,
  coerceTypes: false,
  useDefaults: false,
  ownProperties: true,
  verbose: true,
  // Administrators' patterns run on RE2, in time linear in the input (see lib/safe-pattern.ts).
  // No optimising pass over the generated code: it halves the time and the garbage of a compile
  // (a tenant with thousands of definitions compiles thousands of validators) for a validation
  // that stays well under a microsecond slower.
  code: { regExp: patternEngine, optimize: false },
});
ajv.addKeyword({ keyword: 'fieldType', schemaType: 'string' });
for (const type of Object.values(FIELD_TYPES) as FieldType[]) {
  for (const [name, validate] of Object.entries(type.formats ?? {})) ajv.addFormat(name, { type: 'string', validate });
}

/** The JSON Schema of one field, nested fields included. Expects a definition that passed validateEndpointSchema. */
export function fieldJsonSchema(def: FieldDef): JsonSchema {
  const type = fieldTypeOf(def.type);
  if (!type) throw new Error(`Unknown field type ${JSON.stringify(def.type)}: validate schemas before compiling them`);
  return { ...type.toJsonSchema(def, fieldJsonSchema), fieldType: type.name };
}

/**
 * Compiles a schema and drops it from ajv's cache at once: the caller holds the validator, and
 * an endpoint recompiled after every edit must not leave its old schemas in the cache forever.
 */
export function compileSchema(schema: JsonSchema): ValidateFunction {
  try {
    return ajv.compile(schema);
  } finally {
    ajv.removeSchema(schema);
  }
}

/**
 * Validators shared by every definition whose schema is the same (a GET and a POST of one
 * resource, copies of one shape across a large project, the many one-field schemas of default
 * values): keyed by a hash of the schema's JSON, held weakly, so a validator goes once no
 * definition holds it. Key order counts: it decides the order of a 400's details.
 */
const shared = new Map<string, WeakRef<ValidateFunction>>();
const forget = new FinalizationRegistry<string>((key) => {
  if (shared.get(key)?.deref() === undefined) shared.delete(key);
});

/** The validator of this schema: the one already compiled for an equal schema, else a new one. */
export function sharedValidator(schema: JsonSchema): ValidateFunction {
  const key = createHash('sha256').update(JSON.stringify(schema)).digest('base64');
  const known = shared.get(key)?.deref();
  if (known) return known;
  const validate = compileSchema(schema);
  shared.set(key, new WeakRef(validate));
  forget.register(validate, key);
  return validate;
}

type Params = Record<string, unknown>;

const plural = (count: unknown, noun: string): string => `${String(count)} ${noun}${count === 1 ? '' : 's'}`;
const withArticle = (word: string): string => `${/^[aeiou]/.test(word) ? 'an' : 'a'} ${word}`;
const MAX_LISTED = 20;
const list = (values: unknown): string => {
  const all = Array.isArray(values) ? values.map((value) => (typeof value === 'string' ? value : JSON.stringify(value))) : [];
  return all.length > MAX_LISTED ? `${all.slice(0, MAX_LISTED).join(', ')}, …` : all.join(', ');
};

/** Messages by ajv keyword; anything not listed keeps ajv's own message. */
const MESSAGES: Record<string, (params: Params, type: FieldType | undefined) => string> = {
  type: (p, type) => `must be ${p.type === 'integer' ? 'an integer' : (type?.expected ?? withArticle(String(p.type)))}`,
  format: (p, type) => `must be ${type?.expected ?? `a valid ${String(p.format)}`}`,
  minLength: (p) => `must be at least ${plural(p.limit, 'character')} long`,
  maxLength: (p) => `must be at most ${plural(p.limit, 'character')} long`,
  minimum: (p) => `must be at least ${String(p.limit)}`,
  maximum: (p) => `must be at most ${String(p.limit)}`,
  minItems: (p) => `must have at least ${plural(p.limit, 'item')}`,
  maxItems: (p) => `must have at most ${plural(p.limit, 'item')}`,
  pattern: (p) => `must match the pattern ${String(p.pattern)}`,
  enum: (p) => `must be one of: ${list(p.allowedValues)}`,
  uniqueItems: () => 'must not contain duplicates',
};

export const joinPath = (base: string, key: string): string => (base ? `${base}.${key}` : key);

/**
 * One ajv error as `{field, message}`, the field as a dotted path below `at` (`tags.3`,
 * `address.city`). `unknownKey` words the message for a key the schema does not allow, given
 * the path of the object holding it.
 */
export function describeError(error: ErrorObject, at: string, unknownKey: (parent: string) => string): ErrorDetail {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .reduce((base, segment) => joinPath(base, segment.replace(/~1/g, '/').replace(/~0/g, '~')), at);
  const params = error.params as Params;
  if (error.keyword === 'required') return { field: joinPath(path, String(params.missingProperty)), message: 'is required' };
  if (error.keyword === 'additionalProperties') return { field: joinPath(path, String(params.additionalProperty)), message: unknownKey(path) };
  const message = Object.hasOwn(MESSAGES, error.keyword)
    ? MESSAGES[error.keyword]?.(params, fieldTypeOf((error.parentSchema as JsonSchema | undefined)?.fieldType))
    : undefined;
  return { field: path, message: message ?? error.message ?? 'is invalid' };
}
