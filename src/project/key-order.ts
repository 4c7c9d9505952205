import type { JsonSchema } from './schema-files.ts';

/**
 * The key order of written files is the order of the JSON Schema's `properties`, at every level
 * the schema describes: `name, description, ..., schema, handler`, and in a field definition
 * `type, description, required, <the type's options>, defaultValue`. Maps the schema does not
 * name (field names under `schema`, a `json` default) keep their own order. Keys the schema does
 * not know go last, in their own order. Undefined values are dropped, as JSON would.
 *
 * Only the schema features the project schemas use are understood: local `$ref`s, `allOf`, the
 * non-array branches of `anyOf` (for objects), and `if`/`then` whose `if` tests `properties.<name>.const` (the field-type switch).
 */
export function orderKeys(value: unknown, schema: JsonSchema | undefined, root: JsonSchema): unknown {
  if (Array.isArray(value)) {
    const items = schema ? (resolveRef(schema, root).items as JsonSchema | undefined) : undefined;
    return value.map((item: unknown) => orderKeys(item, items, root));
  }
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  const { properties, additional } = schema ? collect(schema, record, root) : { properties: new Map<string, JsonSchema>(), additional: undefined };
  const known = [...properties.keys()].filter((key) => Object.hasOwn(record, key));
  const rest = Object.keys(record).filter((key) => !properties.has(key));
  const out: Record<string, unknown> = {};
  for (const key of [...known, ...rest]) {
    if (record[key] === undefined) continue;
    // defineProperty: a field named __proto__ stays a plain key.
    Object.defineProperty(out, key, { value: orderKeys(record[key], properties.get(key) ?? additional, root), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function resolveRef(schema: JsonSchema, root: JsonSchema): JsonSchema {
  let current = schema;
  for (let hops = 0; typeof current.$ref === 'string' && hops < 32; hops++) {
    const ref = current.$ref as string;
    if (!ref.startsWith('#/')) break;
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], root);
    if (typeof target !== 'object' || target === null) break;
    current = target as JsonSchema;
  }
  return current;
}

/** The properties (in order) and the additionalProperties schema that apply to `value`. */
function collect(schema: JsonSchema, value: Record<string, unknown>, root: JsonSchema): { properties: Map<string, JsonSchema>; additional: JsonSchema | undefined } {
  const properties = new Map<string, JsonSchema>();
  let additional: JsonSchema | undefined;
  const visit = (node: JsonSchema | undefined): void => {
    if (!node) return;
    const resolved = resolveRef(node, root);
    for (const [key, property] of Object.entries((resolved.properties ?? {}) as Record<string, JsonSchema>)) if (!properties.has(key)) properties.set(key, property);
    if (typeof resolved.additionalProperties === 'object') additional ??= resolved.additionalProperties as JsonSchema;
    for (const part of (resolved.allOf ?? []) as JsonSchema[]) visit(part);
    // `schema` is the map form or the API's array: an object follows the branches that are not arrays.
    for (const part of (resolved.anyOf ?? []) as JsonSchema[]) if (resolveRef(part, root).type !== 'array') visit(part);
    if (resolved.if && matchesIf(resolved.if as JsonSchema, value)) visit(resolved.then as JsonSchema | undefined);
  };
  visit(schema);
  return { properties, additional };
}

function matchesIf(condition: JsonSchema, value: Record<string, unknown>): boolean {
  const properties = (condition.properties ?? {}) as Record<string, JsonSchema>;
  return Object.entries(properties).every(([key, property]) => !('const' in property) || value[key] === property.const);
}
