// The one interface every field type implements. A type is a plain object in its own file,
// listed once in index.ts: adding a type is one file and one line (PocketBase's model). A type
// answers for itself: validation (JSON Schema), save-time checks, examples, references, list
// filters and search.

/** A field definition as administrators write it (API JSON, project YAML). */
export interface FieldDef {
  type: string;
  required?: boolean;
  /** Applied on create when the field is omitted; checked against the field at save time. */
  defaultValue?: unknown;
  description?: string;
  /** The options of the field's type (minLength, items, children, ref, ...). */
  [option: string]: unknown;
}

/** An endpoint's schema: field name → definition. */
export type EndpointSchema = Record<string, FieldDef>;

export type JsonSchema = Record<string, unknown>;

/** The record endpoint a field points into; `many` when the field holds an array of ids. */
export interface FieldReference {
  ref: string;
  many: boolean;
}

/**
 * What a type's `check` may do while a definition is validated at save time. Paths are
 * relative to the definition being checked (e.g. `minLength`, `children`).
 */
export interface DefinitionCheck {
  problem(option: string, message: string): void;
  /** Checks a map of named field definitions nested under `option` (one level deeper). */
  checkFields(option: string, fields: unknown): void;
  /** Checks one nested definition under `option` that describes values, not a named field. */
  checkItem(option: string, def: unknown): void;
}

/** The operators of list filters (`?price[gte]=5`); a type says which of them it takes. */
export const FILTER_OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'has', 'exists'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];
export type FilterValue = string | number | boolean | Date;

/** How list filters treat a field of a type: the operators it takes and how a query value is read. */
export interface FieldFilter {
  readonly operators: readonly FilterOperator[];
  /** The value to compare with, or a message completing "must be …". */
  read(raw: string): FilterValue | { problem: string };
  /** For `has`: how one item of an array field is read. */
  readonly item?: FieldFilter;
}

/** The operators of values with an order (text, numbers). */
export const ORDERED_OPERATORS: readonly FilterOperator[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists'];

/** Text compared as it is written. */
export const TEXT_FILTER: FieldFilter = { operators: ORDERED_OPERATORS, read: (raw) => raw };

/** A field that can only be asked whether it is there (objects, JSON values). */
export const PRESENCE_FILTER: FieldFilter = { operators: ['exists'], read: (raw) => raw };

/** What a type's OpenAPI describer may ask of the document being built (src/docs/). */
export interface OpenApiContext {
  /** `input` for request bodies; `output` for records in responses, where references may be populated. */
  readonly mode: 'input' | 'output';
  /** The schema of a nested definition (array items, object children), common keys included. */
  child(def: FieldDef): JsonSchema;
  /** The shape a populated reference to this path takes (`{id, ...fields}`), when the document has it. */
  populated(ref: string): JsonSchema | undefined;
}

export interface FieldType<D extends FieldDef = FieldDef> {
  readonly name: string;
  /** Completes "must be ..." in error messages about a value of the wrong type or format. */
  readonly expected: string;
  /**
   * JSON Schema of the type's own options. The common options (type, required, defaultValue,
   * description) are added by the registry; any other key is refused as an unknown option.
   */
  readonly options: { properties: Record<string, JsonSchema>; required?: string[] };
  /** ajv formats this type's JSON Schema uses; registered once on the shared ajv instance. */
  readonly formats?: Record<string, (value: string) => boolean>;
  /** Checks a JSON Schema cannot express (min ≤ max, a pattern that compiles) and nested definitions. */
  check?(def: D, check: DefinitionCheck): void;
  /** The JSON Schema a value of this field must satisfy. */
  toJsonSchema(def: D, compileChild: (child: FieldDef) => JsonSchema): JsonSchema;
  /**
   * The OpenAPI 3.0 schema of a value (the subset valid in 3.1 too); description, default and
   * example are added by the document builder.
   */
  openApi(def: D, ctx: OpenApiContext): JsonSchema;
  /** A valid value for sample requests (patterns are not taken into account). */
  exampleValue(def: D, exampleChild: (child: FieldDef) => unknown): unknown;
  /** Named fields inside this field's value, whose defaults apply on create. */
  children?(def: D): EndpointSchema | undefined;
  /** The definition every item of this field's value satisfies (arrays), for checks that walk values. */
  item?(def: D): FieldDef | undefined;
  /**
   * Values are data through and through (json): keys starting with `$`, dotted keys and
   * `__proto__` are stored as they are, where every other type refuses them.
   */
  readonly keysAreData?: boolean;
  /** The endpoint this field's value points into, for the engine's existence check. */
  reference?(def: D, referenceOfChild: (child: FieldDef) => FieldReference | undefined): FieldReference | undefined;
  /**
   * How list filters read this field; without it a field only takes `exists` (an object's
   * children are filtered by their own names).
   */
  filter?(def: D, filterOfChild: (child: FieldDef) => FieldFilter): FieldFilter;
  /** Whether `search=term` looks for the term in this field (a case-insensitive substring). */
  readonly searchable?: boolean;
  /**
   * How the store indexes this type's values when a field says `indexed` or `unique` (scalars
   * only: compared as numbers, as text, or as booleans); a type without it cannot be indexed.
   */
  readonly indexedAs?: IndexedAs;
}

/** The kinds of values a field index holds (the store's IndexKind). */
export type IndexedAs = 'number' | 'text' | 'boolean';

/** Reports `min > max` for a pair of numeric options. */
export function checkRange(def: FieldDef, check: DefinitionCheck, min: string, max: string): void {
  const low = def[min];
  const high = def[max];
  if (typeof low === 'number' && typeof high === 'number' && low > high) check.problem(min, `must not be greater than ${max}`);
}

/** The JSON Schema of a length or count option. */
export const SIZE_OPTION: JsonSchema = { type: 'integer', minimum: 0 };

/** Copies the options that are set, so generated JSON Schemas carry no undefined keys. */
export function definedOptions(def: FieldDef, names: readonly string[]): JsonSchema {
  const out: JsonSchema = {};
  for (const name of names) if (def[name] !== undefined) out[name] = def[name];
  return out;
}
