// Resource files: one endpoint file defining several methods of one path. The loader expands
// such a file into one endpoint definition per method (so bundle, diff, plan, apply and export
// stay per `METHOD path`), and write-back folds the methods back into the file.
//
// | written                                  | each method's definition                             |
// |------------------------------------------|------------------------------------------------------|
// | `methods: [GET, POST]`                   | the shared fields, `method` set                       |
// | `methods: {GET: {accessType: public}}`   | the shared fields, then that method's fields on top   |
// | `name: categories` (the shared name)     | `<verb> <name>`: List, Create, Replace, Update, Delete |
// | `methods: {GET: {name: All categories}}` | that name, as written                                 |
//
// An override replaces a whole field (`schema`, `handler`, `networkAccess` included); `path`,
// `method` and `methods` cannot be overridden.
import { isDeepStrictEqual } from 'node:util';
import { compactEndpoint } from './compact.ts';
import type { NormalEndpoint } from './normalize.ts';
import { joinPath } from './problem.ts';

export const RESOURCE_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** The name of a method's definition when it has none of its own: `List` + ` categories`. */
const VERBS: Readonly<Record<string, string>> = { GET: 'List', POST: 'Create', PUT: 'Replace', PATCH: 'Update', DELETE: 'Delete' };
const NOT_OVERRIDDEN = new Set(['path', 'method', 'methods']);

type Raw = Record<string, unknown>;

const isPlainObject = (value: unknown): value is Raw => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A file is a resource file when it has `methods`. */
export const isResourceFile = (value: Raw): boolean => Object.hasOwn(value, 'methods');

export const derivedName = (method: string, name: string): string => `${VERBS[method] ?? method} ${name}`;

/** One method of a resource file, expanded. */
export interface ResourceMember {
  method: string;
  /** Where the method is written: `methods.GET` (map form) or `methods.0` (list form). */
  at: string;
  /** The fields the method sets itself. */
  overrides: Raw;
  /** The endpoint definition: shared fields, overrides, `method` and the name. */
  spec: Raw;
}

export type Expanded = { members: ResourceMember[]; problems: [] } | { members: []; problems: Array<{ path: string; message: string }> };

/** A resource file's methods as endpoint definitions, or what is wrong with its `methods`. */
export function expandResource(value: Raw): Expanded {
  const problems: Array<{ path: string; message: string }> = [];
  const { methods, ...shared } = value;
  if (Object.hasOwn(shared, 'method')) problems.push({ path: 'method', message: 'cannot be used beside methods: a resource file defines one endpoint per method listed in methods' });
  const entries: Array<[string, string, unknown]> = [];
  const oneOf = `one of: ${RESOURCE_METHODS.join(', ')}`;
  if (Array.isArray(methods)) {
    methods.forEach((method: unknown, index) => entries.push([String(method), `methods.${index}`, undefined]));
    methods.forEach((method: unknown, index) => {
      if (typeof method !== 'string' || !(RESOURCE_METHODS as readonly string[]).includes(method)) problems.push({ path: `methods.${index}`, message: `must be ${oneOf}` });
      else if (methods.indexOf(method) !== index) problems.push({ path: `methods.${index}`, message: `repeats ${method}` });
    });
  } else if (isPlainObject(methods)) {
    for (const [method, overrides] of Object.entries(methods)) {
      const at = joinPath('methods', method);
      entries.push([method, at, overrides]);
      if (!(RESOURCE_METHODS as readonly string[]).includes(method)) problems.push({ path: at, message: `is not a method (${oneOf})` });
      else if (overrides !== null && !isPlainObject(overrides)) problems.push({ path: at, message: "must be a mapping of the fields this method sets itself (or empty: `GET: {}`)" });
      else for (const field of Object.keys(overrides ?? {})) if (NOT_OVERRIDDEN.has(field)) problems.push({ path: joinPath(at, field), message: 'cannot be set per method: every method of a resource file serves its path' });
    }
  } else {
    problems.push({ path: 'methods', message: 'must be a list of methods ([GET, POST]) or a mapping of each method to the fields it sets itself' });
  }
  if (entries.length === 0 && problems.length === 0) problems.push({ path: 'methods', message: 'must name at least one method' });
  if (problems.length > 0) return { members: [], problems };

  const members = entries.map(([method, at, given]): ResourceMember => {
    const overrides = (given ?? {}) as Raw;
    const spec: Raw = { ...shared, ...overrides, method };
    if (!Object.hasOwn(overrides, 'name') && typeof shared.name === 'string') spec.name = derivedName(method, shared.name);
    return { method, at, overrides, spec };
  });
  return { members, problems: [] };
}

/**
 * Where a path inside a method's definition is written in the file: a field the method sets
 * itself under its `methods` entry, `method` at that entry, anything else at the shared field.
 */
export function pathInFile(member: Pick<ResourceMember, 'at' | 'overrides'>, path: string): string {
  const field = path.split('.')[0] ?? '';
  if (field === 'method') return member.at;
  return Object.hasOwn(member.overrides, field) ? joinPath(member.at, path) : path;
}

/**
 * The file content for methods whose definitions are now `after` (normal form, in the file's
 * method order), given the file as it was (`raw`) and the definitions it gave (`before`). A
 * field stays where it is written: the shared value stays what it was, a method that differs from
 * it sets the field itself, and a field every method sets itself stays so; values all agreeing
 * again with a shared value are shared again. The shared name stays; a method whose name is not the derived one sets its own. With
 * no field set per method the list form is written, else the mapping form.
 */
export function foldResource(raw: Raw, before: ReadonlyMap<string, NormalEndpoint>, after: ReadonlyArray<NormalEndpoint>): Raw {
  const oldMembers = expandResource(raw).members;
  const baseName = typeof raw.name === 'string' ? raw.name : (after[0]?.name ?? '');
  const compacts = after.map((spec) => fieldsOf(spec));
  const overrides = after.map((spec): Raw => (spec.name === derivedName(spec.method, baseName) ? {} : { name: spec.name }));
  const shared: Raw = { name: baseName, path: raw.path };

  const fields = new Set(compacts.flatMap((compact) => Object.keys(compact)));
  for (const field of fields) {
    const values = compacts.map((compact) => compact[field]);
    // The shared value is what a method without an override got. It stays what it was: a method
    // that no longer agrees sets the field itself, one that did keeps doing so, and a field every
    // method set itself stays so (`none`) — values all agreeing again are shared again.
    const sharer = oldMembers.find((member) => !Object.hasOwn(member.overrides, field) && before.has(member.method));
    const agree = values.every((value) => isDeepStrictEqual(value, values[0]));
    if (agree && (sharer || values[0] === undefined)) {
      if (values[0] !== undefined) shared[field] = values[0];
      continue;
    }
    const none = Symbol('none');
    const base = sharer ? fieldsOf(before.get(sharer.method) as NormalEndpoint)[field] : none;
    if (base !== undefined && base !== none) shared[field] = base;
    after.forEach((spec, index) => {
      const value = values[index];
      if (base !== none && isDeepStrictEqual(value, base)) return;
      // A method at the default where the shared value is not: the default, written out.
      (overrides[index] as Raw)[field] = value === undefined ? spec[field as keyof NormalEndpoint] : value;
    });
  }
  const methods = after.some((_, index) => Object.keys(overrides[index] as Raw).length > 0) ? Object.fromEntries(after.map((spec, index) => [spec.method, overrides[index]])) : after.map((spec) => spec.method);
  return { ...shared, methods };
}

/** The fields of a definition a resource file may share, at their written (compact) form. */
function fieldsOf(spec: NormalEndpoint): Raw {
  const { name: _name, path: _path, method: _method, ...rest } = compactEndpoint(spec) as unknown as Raw;
  return rest;
}
