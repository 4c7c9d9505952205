// An endpoint schema on the management API is the spec's array of fields
// (`{name, type, required, order, defaultValue, children, refEndpointId, ...options}`); stored,
// in project files and in bundles it is a map keyed by field name with references by target path
// (`ref: /api/shop/categories`), portable across servers. This module converts at that edge, so
// the store, the validators and the engine only ever see the map form.
//
// | Input (API, project file) | Stored (map)                                    |
// |---------------------------|-------------------------------------------------|
// | array of fields           | map in `order` (array position when omitted)    |
// | `children: [...]`         | `children: {name: def}` (either form accepted)  |
// | `refEndpointId: id`       | `ref: <that endpoint's path>` (the ref follows the path, not the id) |
// | array + `refEndpointId`   | `items: {type: reference, ref}` (an array of references) |
//
// Output: the map in its own order as an array, `order` 0, 1, 2, …, `required` always present,
// `refEndpointId` the id of the endpoint serving the target path (see `referenceTargets`) or null,
// `ref` kept beside it.
import type { ErrorDetail } from '../lib/errors.ts';
import { HTTP_METHODS } from './endpoint.ts';
import type { EndpointSchema, FieldDef } from './field-types/index.ts';

/** A field as the management API shows it. */
export interface WireField {
  name: string;
  type: string;
  required: boolean;
  order: number;
  defaultValue?: unknown;
  children?: WireField[];
  refEndpointId?: string | null;
  [option: string]: unknown;
}

/**
 * An endpoint's path by its id: undefined when no endpoint has that id, null when ids cannot be
 * looked up here (a project checked without a server: the id is resolved when the bundle is planned).
 */
export type EndpointPathOf = (id: string) => string | undefined | null;

/** Stands in for a target path that only the server can resolve, so the rest of a definition can be checked. */
const UNRESOLVED_PATH = '/';
/** The id `refEndpointId` shows for a reference target path (null when no endpoint serves it). */
export type ReferenceTargetOf = (path: string) => string | null;

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The stored (map) form of a schema given in either form, with `refEndpointId`s resolved to
 * paths. Problems name the field by its path (`schema.category.refEndpointId`, `schema.2.name`);
 * anything else wrong is left for validateEndpointSchema to report.
 */
export function schemaFromWire(input: unknown, pathOf: EndpointPathOf): { schema: unknown; problems: ErrorDetail[] } {
  const problems: ErrorDetail[] = [];

  const fieldsFrom = (value: unknown, at: string): unknown => {
    if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([name, def]) => [name, defFrom(def, `${at}.${name}`)]));
    if (!Array.isArray(value)) return value;
    const named: Array<{ name: string; order: number; def: Record<string, unknown> }> = [];
    value.forEach((entry: unknown, index) => {
      if (!isPlainObject(entry)) return problems.push({ field: `${at}.${index}`, message: 'must be a field definition (an object with name and type)' });
      const { name, order, ...def } = entry;
      if (typeof name !== 'string' || name === '') return problems.push({ field: `${at}.${index}.name`, message: name === undefined ? 'is required' : 'must be a non-empty string' });
      if (order !== undefined && (typeof order !== 'number' || !Number.isFinite(order))) return problems.push({ field: `${at}.${name}.order`, message: 'must be a number' });
      if (named.some((other) => other.name === name)) return problems.push({ field: `${at}.${index}.name`, message: `repeats the field name "${name}"` });
      // The spec's `required: false` is the default: not stored, so a read-modify-write changes nothing.
      if (def.required === false) delete def.required;
      named.push({ name, order: order ?? index, def });
    });
    // Array.prototype.sort is stable: equal orders keep their array positions.
    named.sort((a, b) => a.order - b.order);
    // fromEntries defines own properties: a field named "__proto__" stays a key (and is refused by name).
    return Object.fromEntries(named.map(({ name, def }) => [name, defFrom(def, `${at}.${name}`)]));
  };

  const defFrom = (value: unknown, at: string): unknown => {
    if (!isPlainObject(value)) return value;
    const { refEndpointId, ...def } = value;
    // The spec lists `children` on every field: empty (null or []) on a type without children is none.
    if (def.type !== 'object' && (def.children === null || (Array.isArray(def.children) && def.children.length === 0))) delete def.children;
    if (def.children !== undefined) def.children = fieldsFrom(def.children, `${at}.children`);
    if (def.items !== undefined) def.items = defFrom(def.items, `${at}.items`);
    if (refEndpointId === undefined || refEndpointId === null) return def;
    if (typeof refEndpointId !== 'string') {
      problems.push({ field: `${at}.refEndpointId`, message: 'must be an endpoint id' });
      return def;
    }
    const found = pathOf(refEndpointId);
    const path = found === null ? offlinePath(def) : found;
    if (path === undefined) {
      problems.push({ field: `${at}.refEndpointId`, message: `is not the id of an endpoint (${refEndpointId.slice(0, 64)})` });
      return def;
    }
    if (def.type === 'array') {
      // An array with refEndpointId is an array of references; items may repeat the same target.
      const items = def.items;
      if (items === undefined) def.items = { type: 'reference', ref: path };
      else if (!isPlainObject(items) || items.type !== 'reference' || items.ref !== path) problems.push({ field: `${at}.refEndpointId`, message: 'names another target than items' });
      return def;
    }
    if (def.type !== 'reference') {
      problems.push({ field: `${at}.refEndpointId`, message: 'is only for reference fields (and arrays of them)' });
      return def;
    }
    if (def.ref !== undefined && def.ref !== path) problems.push({ field: `${at}.refEndpointId`, message: `names ${path}, but ref is ${String(def.ref)}` });
    def.ref = path;
    return def;
  };

  return { schema: fieldsFrom(input, 'schema'), problems };
}

/** Offline, a refEndpointId agrees with the ref given beside it (or stands in for one). */
function offlinePath(def: Record<string, unknown>): string {
  const given = isPlainObject(def.items) ? def.items.ref : def.ref;
  return typeof given === 'string' ? given : UNRESOLVED_PATH;
}

/** Whether a schema in any input form names endpoints by id (so their paths must be looked up). */
export function mentionsEndpointIds(value: unknown, depth = 0): boolean {
  if (typeof value !== 'object' || value === null || depth > 64) return false;
  if (!Array.isArray(value) && Object.hasOwn(value, 'refEndpointId')) return true;
  return Object.values(value).some((inner) => mentionsEndpointIds(inner, depth + 1));
}

/** Whether a stored schema has reference fields at any level (so target ids must be looked up). */
export function hasReferences(schema: EndpointSchema): boolean {
  const visit = (def: FieldDef | undefined): boolean =>
    def !== undefined && (typeof def.ref === 'string' || visit(def.items as FieldDef | undefined) || (isPlainObject(def.children) && Object.values(def.children as EndpointSchema).some(visit)));
  return Object.values(schema).some(visit);
}

/**
 * The stored schema as the management API shows it. A reference's `refEndpointId` is the id of
 * the endpoint serving its target path; an array of references also carries it beside `items`.
 */
export function schemaToWire(schema: EndpointSchema, targetOf: ReferenceTargetOf): WireField[] {
  const defToWire = (def: FieldDef): Record<string, unknown> => {
    const { type, required: _required, defaultValue, children, items, ...options } = def;
    const out: Record<string, unknown> = { type };
    if (defaultValue !== undefined) out.defaultValue = defaultValue;
    if (isPlainObject(children)) out.children = fieldsToWire(children as EndpointSchema);
    if (typeof def.ref === 'string') out.refEndpointId = targetOf(def.ref);
    const itemRef = isPlainObject(items) && items.type === 'reference' && typeof items.ref === 'string' ? items.ref : undefined;
    if (itemRef !== undefined) out.refEndpointId = targetOf(itemRef);
    if (isPlainObject(items)) out.items = defToWire(items as FieldDef);
    return { ...out, ...options };
  };
  const fieldsToWire = (fields: EndpointSchema): WireField[] =>
    Object.entries(fields).map(([name, def], order) => {
      const { type, ...rest } = defToWire(def);
      return { name, type: type as string, required: def.required === true, order, ...rest };
    });
  return fieldsToWire(schema);
}

/**
 * What `refEndpointId` means: of the endpoints on a reference's target path, the GET (the
 * collection read), else the POST, else the first in PUT, PATCH, DELETE order. A path no
 * endpoint serves gives null.
 */
export function referenceTargets(endpoints: ReadonlyArray<{ _id: string; path: string; method: string }>): ReferenceTargetOf {
  const rank = (method: string): number => (HTTP_METHODS as readonly string[]).indexOf(method);
  const best = new Map<string, { id: string; rank: number }>();
  for (const endpoint of endpoints) {
    const current = best.get(endpoint.path);
    if (!current || rank(endpoint.method) < current.rank) best.set(endpoint.path, { id: endpoint._id, rank: rank(endpoint.method) });
  }
  return (path) => best.get(path)?.id ?? null;
}
