import { compileDomainRules, InvalidDomainRuleError } from '../lib/domain-rules.ts';
import { AppError } from '../lib/errors.ts';
import { compileIpRules, InvalidIpRuleError } from '../lib/ip-rules.ts';
import { InvalidPathError, normalizePath, parsePathPattern } from '../lib/paths.ts';
import { compileRecordSchema, validateEndpointSchema } from '../model/record-schema.ts';
import { shadowedRoute } from '../model/reserved-paths.ts';
import { schemaFromWire } from '../model/schema-wire.ts';
import { compileHandler, HandlerCompileError } from '../sandbox/handler-runner.ts';
import { endpointKey, groupKey, type Bundle, type EndpointSpec, type GroupSpec } from './bundle.ts';
import { hasPlaceholder } from './placeholders.ts';

/**
 * The kinds of definition a project directory holds, one descriptor each. The loader, the
 * validator and the writer are generic over this table: adding a kind (cron jobs) is a
 * descriptor here, a JSON Schema in schemas/ and a property of Bundle.
 *
 * Checks receive definitions of unknown shape (a file may hold anything), so they test the
 * types of what they read; JSON Schema has already reported wrong types by then.
 */
/** `codeLine`: the line inside handler code a problem is about, for pointing into a handler file. */
export type Report = (path: string, message: string, at?: { codeLine?: number }) => void;
export type RawSpec = Readonly<Record<string, unknown>>;

export interface KindReference {
  /** Where the reference is written (`group`). */
  path: string;
  kind: KindName;
  /** The natural key it must match among that kind's definitions. */
  key: string;
  /** As written, for the message. */
  name: string;
}

export interface ProjectKind<S extends object = object> {
  readonly kind: KindName;
  /** In messages: `endpoint group "Shop" is also defined in ...`. */
  readonly label: string;
  /** Directory inside the project, one definition per `*.yaml` file. */
  readonly dir: string;
  /** In schemas/. Its `properties` order is the key order of written files. */
  readonly schemaFile: string;
  /** The Bundle property holding this kind's definitions. */
  readonly bundleKey: 'groups' | 'endpoints';
  /** The fields the natural key is made of; a definition whose key fields are not all strings has no key. */
  readonly keyFields: readonly string[];
  /** Top-level fields whose JSON Schema errors `check` reports instead, in the API's own words. */
  readonly checkedByCode?: readonly string[];
  /** The natural key: what identifies the definition across files, bundles and the store. */
  key(spec: S): string;
  /** The file name (without directory) a new definition is written to. */
  fileName(spec: S): string;
  /** Rules beyond JSON Schema that need no database. */
  check?(spec: RawSpec, report: Report): void;
  /** Definitions of other kinds this one names; each must be in the same project. */
  references?(spec: RawSpec): KindReference[];
}

export type KindName = 'group' | 'endpoint';

/** A file-name-safe form of a name: `Create product` → `create-product`. */
export function slugOf(text: string, fallback: string): string {
  const slug = text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '');
  return slug || fallback;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isWritten = (value: unknown): value is string => typeof value === 'string' && !hasPlaceholder(value);

export const groupKind: ProjectKind<GroupSpec> = {
  kind: 'group',
  label: 'endpoint group',
  dir: 'groups',
  schemaFile: 'endpoint-group.schema.json',
  bundleKey: 'groups',
  keyFields: ['name'],
  key: (spec) => groupKey(spec),
  fileName: (spec) => `${slugOf(spec.name, 'group')}.yaml`,
  check(spec, report) {
    checkNetworkAccess(spec.networkAccess, report);
  },
};

export const endpointKind: ProjectKind<EndpointSpec> = {
  kind: 'endpoint',
  label: 'endpoint',
  dir: 'endpoints',
  schemaFile: 'endpoint.schema.json',
  bundleKey: 'endpoints',
  keyFields: ['method', 'path'],
  checkedByCode: ['schema'],
  // The server stores normalized paths: `shop/items/` and `/shop/items` are one endpoint.
  key: (spec) => endpointKey({ method: spec.method, path: normalizePath(spec.path) }),
  // `/api/shop/products` POST → shop-products-post.yaml: files sort by path.
  fileName: (spec) => `${slugOf(normalizePath(spec.path).replace(/^\/api(?=\/.)/, ''), 'root')}-${spec.method.toLowerCase()}.yaml`,
  check(spec, report) {
    if (isWritten(spec.path)) checkPath(spec.path, report);
    if (spec.schema !== undefined) checkSchema(spec.schema, report);
    if (spec.accessType === 'group' && (!Array.isArray(spec.allowedGroups) || spec.allowedGroups.length === 0)) {
      if (spec.allowedGroups === undefined) report('accessType', 'is group, so allowedGroups must name at least one user group');
      else report('allowedGroups', 'must name at least one user group when accessType is group');
    }
    checkNetworkAccess(spec.networkAccess, report);
    if (isPlainObject(spec.handler)) checkHandler(spec.handler, report);
  },
  references(spec) {
    return typeof spec.group === 'string' ? [{ path: 'group', kind: 'group', key: groupKey({ name: spec.group }), name: spec.group }] : [];
  },
};

/** In dependency order: a kind may refer to the kinds before it. Deletes go in reverse. */
export const KINDS: readonly ProjectKind[] = [groupKind, endpointKind];

export function kindOf(name: KindName): ProjectKind {
  const kind = KINDS.find((candidate) => candidate.kind === name);
  if (!kind) throw new Error(`Unknown project kind ${JSON.stringify(name)}`);
  return kind;
}

/** The natural key of a definition of unknown shape, or undefined when its key fields are not strings. */
export function keyOf(kind: ProjectKind, spec: unknown): string | undefined {
  if (!isPlainObject(spec) || !kind.keyFields.every((field) => typeof spec[field] === 'string')) return undefined;
  return kind.key(spec);
}

/** A kind's definitions in a bundle (an empty list when the bundle has none). */
export function specsOf(bundle: Bundle, kind: ProjectKind): readonly object[] {
  return (bundle[kind.bundleKey] as readonly object[] | undefined) ?? [];
}

function checkPath(path: string, report: Report): void {
  try {
    const pattern = parsePathPattern(path);
    const clash = shadowedRoute(pattern);
    if (clash) report('path', `would shadow ${clash}, which the service serves itself`);
  } catch (error) {
    if (error instanceof InvalidPathError) report('path', `is not a valid path: ${error.message}`);
    else throw error;
  }
}

/** The field rules of the API (validateEndpointSchema), then references: a collection path each. */
function checkSchema(given: unknown, report: Report): void {
  // The API's array form is accepted too; refEndpointIds are looked up when the bundle is planned.
  const { schema, problems } = schemaFromWire(given, () => null);
  for (const problem of problems) report(problem.field, problem.message);
  if (problems.length > 0) return;
  let valid;
  try {
    valid = validateEndpointSchema(schema);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    for (const detail of error.details ?? [{ field: 'schema', message: error.message }]) report(detail.field, detail.message);
    return;
  }
  for (const reference of compileRecordSchema(valid).referenceFields) {
    if (hasPlaceholder(reference.ref)) continue;
    if (reference.ref !== normalizePath(reference.ref) || reference.ref.includes(':')) {
      const at = reference.many ? `schema.${reference.field}.items.ref` : `schema.${reference.field}.ref`;
      report(at, 'must be a normalized collection path without :parameters, such as /api/shop/categories');
    }
  }
}

function checkNetworkAccess(value: unknown, report: Report): void {
  if (!isPlainObject(value)) return;
  const lists = [
    ['allowedDomains', (rule: string) => compileDomainRules([rule]), InvalidDomainRuleError],
    ['allowedIpRanges', (rule: string) => compileIpRules([rule]), InvalidIpRuleError],
  ] as const;
  for (const [list, compile, InvalidRule] of lists) {
    const rules = value[list];
    if (!Array.isArray(rules)) continue;
    rules.forEach((rule, index) => {
      if (!isWritten(rule)) return;
      try {
        compile(rule);
      } catch (error) {
        if (error instanceof InvalidRule) report(`networkAccess.${list}.${index}`, `is an ${error.message}`);
        else throw error;
      }
    });
  }
}

/** Syntax only: the code is compiled in a throw-away isolate, never run. */
function checkHandler(handler: Record<string, unknown>, report: Report): void {
  const code = handler.code;
  if (typeof code !== 'string' || hasPlaceholder(code)) return;
  if (handler.enabled !== true && code.trim() === '') return;
  try {
    compileHandler(code, { memoryMb: 16, timeoutMs: 1000 }).dispose();
  } catch (error) {
    if (error instanceof HandlerCompileError) report('handler.code', `does not compile: ${error.message}`, error.line === undefined ? {} : { codeLine: error.line });
    else throw error;
  }
}
