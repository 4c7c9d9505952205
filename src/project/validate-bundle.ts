import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { Bundle } from './bundle.ts';
import { keyOf, KINDS, kindOf, type KindName, type Kind } from './kinds/index.ts';
import { hasPlaceholder, placeholderProblems } from './placeholders.ts';
import { joinPath, type Problem } from './problem.ts';
import { readSchema, type JsonSchema } from './schema-files.ts';

/**
 * Everything that can be checked without a database: the JSON Schemas of schemas/ (the same
 * files editors use), each kind's own rules (field definitions, paths, network rules, handler
 * syntax), and the rules across definitions — one definition per natural key, and every name
 * that refers to another definition found in the same project. An unknown group name is an
 * error, not a warning: a project is applied as a whole, and applying it would fail there.
 *
 * What needs the store is left to apply: user groups named in allowedGroups, clashes with
 * definitions outside the project, apiVersion aliases.
 */

/** ajv with every error (allErrors) and the failing schema beside it (verbose), compiled once per kind. */
const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, verbose: true });
// A message for editors (yaml-language-server shows it) and for us: see describe().
ajv.addKeyword({ keyword: 'errorMessage', schemaType: 'string' });
const validators = new Map<KindName, ValidateFunction>(KINDS.map((kind) => [kind.kind, ajv.compile(readSchema(kind.schemaFile))]));

/** Keywords about a string's content: a placeholder's value is only known at apply time. */
const CONTENT_KEYWORDS = new Set(['pattern', 'format', 'enum', 'const', 'minLength', 'maxLength']);
/** One broken file must not bury the others: the rest of its problems are summed up in one line. */
const MAX_PROBLEMS_PER_SPEC = 50;

/** A problem of one definition; `codeLine` is a line inside its handler code. */
export type SpecProblem = Problem & { codeLine?: number };

/** The problems of one definition on its own; paths are relative to it (`schema.price.type`). */
export function validateSpec(kind: KindName, value: unknown): Problem[] {
  return specProblems(kind, value).map(({ path, message }) => ({ path, message }));
}

function specProblems(kind: KindName, value: unknown): SpecProblem[] {
  const descriptor = kindOf(kind);
  const validate = validators.get(kind);
  const problems: SpecProblem[] = [];
  if (validate && !validate(value)) {
    for (const error of validate.errors ?? []) {
      const problem = describe(error, descriptor);
      if (problem) problems.push(problem);
    }
  }
  if (isPlainObject(value)) {
    descriptor.check?.(value, (path, message, at) => problems.push({ path, message, ...at }));
    problems.push(...placeholderProblems(value));
  }
  return capped(problems);
}

/** One definition, wherever it comes from: a file (report maps paths to lines) or a bundle. */
export interface SpecEntry {
  kind: Kind;
  spec: unknown;
  /** Where it is defined, named in messages about other definitions: a file, `endpoints[3]`. */
  where: string;
  /** Receives problems with paths relative to the definition. */
  report(problem: SpecProblem): void;
  /** Checked on its own before and unchanged since (a project file the sync saw without problems): only the rules across entries run. */
  checked?: boolean;
}

/**
 * validateSpec on each entry, then the rules across entries. `known`: definitions outside the
 * entries that references may name too (`kind:key`; the store's, when applying without prune).
 */
export function checkSpecs(entries: readonly SpecEntry[], known: ReadonlySet<string> = new Set()): void {
  for (const entry of entries) if (!entry.checked) for (const problem of specProblems(entry.kind.kind, entry.spec)) entry.report(problem);

  const firstByKey = new Map<string, SpecEntry>();
  for (const entry of entries) {
    const key = keyOf(entry.kind, entry.spec);
    if (key === undefined) continue;
    const first = firstByKey.get(`${entry.kind.kind}:${key}`);
    if (!first) {
      firstByKey.set(`${entry.kind.kind}:${key}`, entry);
      continue;
    }
    // Keys compare normalized (letter case of group names, trailing slashes of paths): show the first as written.
    entry.report({ path: entry.kind.keyFields.at(-1) ?? '', message: `duplicates the ${entry.kind.label} ${writtenKey(first)} in ${first.where}` });
  }

  for (const entry of entries) {
    if (!isPlainObject(entry.spec)) continue;
    for (const reference of entry.kind.references?.(entry.spec) ?? []) {
      if (hasPlaceholder(reference.name) || firstByKey.has(`${reference.kind}:${reference.key}`) || known.has(`${reference.kind}:${reference.key}`)) continue;
      entry.report({ path: reference.path, message: `names the ${kindOf(reference.kind).label} "${reference.name}", which is not in the project` });
    }
  }
}

/**
 * A whole bundle (from an export, an HTTP body, or files). Paths name the definition by its key
 * when it has one: `endpoints[GET /api/shop/products].schema.price.type`.
 */
export function validateBundle(bundle: Bundle, known?: ReadonlySet<string>): Problem[] {
  const problems: Problem[] = [];
  const entries: SpecEntry[] = [];
  for (const kind of KINDS) {
    const specs: unknown = (bundle as unknown as Record<string, unknown>)[kind.bundleKey];
    if (specs === undefined) continue;
    if (!Array.isArray(specs)) {
      problems.push({ path: kind.bundleKey, message: 'must be a list' });
      continue;
    }
    specs.forEach((spec: unknown, index) => {
      const at = `${kind.bundleKey}[${keyOf(kind, spec) ?? index}]`;
      entries.push({
        kind,
        spec,
        where: `${kind.bundleKey}[${index}]`,
        report: (problem) => problems.push({ path: problem.path === '' ? at : `${at}.${problem.path}`, message: problem.message }),
      });
    });
  }
  checkSpecs(entries, known);
  return problems;
}

/** The key fields as written: `GET /api/items`, `"Shop"`. */
function writtenKey(entry: SpecEntry): string {
  const values = entry.kind.keyFields.map((field) => String((entry.spec as Record<string, unknown>)[field]));
  return values.length === 1 ? `"${values[0] ?? ''}"` : values.join(' ');
}

function capped(problems: SpecProblem[]): SpecProblem[] {
  if (problems.length <= MAX_PROBLEMS_PER_SPEC) return problems;
  return [...problems.slice(0, MAX_PROBLEMS_PER_SPEC), { path: '', message: `has ${problems.length - MAX_PROBLEMS_PER_SPEC} more problems` }];
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const withArticle = (word: string): string => `${/^[aeiou]/.test(word) ? 'an' : 'a'} ${word}`;
const TYPE_NAMES: Record<string, string> = { object: 'mapping', array: 'list' };
const typeName = (type: unknown): string => (Array.isArray(type) ? type : [type]).map((t) => (t === 'null' ? 'null' : withArticle(TYPE_NAMES[String(t)] ?? String(t)))).join(' or ');
const plural = (count: unknown, noun: string): string => `${String(count)} ${noun}${count === 1 ? '' : 's'}`;
const listOf = (values: unknown): string => (Array.isArray(values) ? values.map((value) => (typeof value === 'string' ? value : JSON.stringify(value))).join(', ') : '');

type Params = Record<string, unknown>;

/** Messages by ajv keyword, completing "<path> ...". */
const MESSAGES: Record<string, (params: Params) => string> = {
  type: (p) => `must be ${typeName(p.type)}`,
  enum: (p) => `must be one of: ${listOf(p.allowedValues)}`,
  const: (p) => `must be ${JSON.stringify(p.allowedValue)}`,
  minLength: (p) => (p.limit === 1 ? 'must not be empty' : `must be at least ${plural(p.limit, 'character')} long`),
  maxLength: (p) => `must be at most ${plural(p.limit, 'character')} long`,
  minimum: (p) => `must be at least ${String(p.limit)}`,
  maximum: (p) => `must be at most ${String(p.limit)}`,
  minItems: (p) => `must have at least ${plural(p.limit, 'item')}`,
  maxItems: (p) => `must have at most ${plural(p.limit, 'item')}`,
  maxProperties: (p) => `must have at most ${String(p.limit)} entries`,
  uniqueItems: () => 'must not contain duplicates',
  pattern: (p) => (p.pattern === '\\S' ? 'must not be blank' : `must match the pattern ${String(p.pattern)}`),
};

function describe(error: ErrorObject, kind: Kind): Problem | undefined {
  // The branch errors of if/then are reported themselves; "must match then" adds nothing.
  if (error.keyword === 'if') return undefined;
  const segments = error.instancePath.split('/').slice(1).map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  const first = segments[0];
  if (first !== undefined && kind.checkedByCode?.includes(first)) return undefined;
  if (CONTENT_KEYWORDS.has(error.keyword) && typeof error.data === 'string' && hasPlaceholder(error.data)) return undefined;
  const path = segments.reduce<string>((base, segment) => joinPath(base, segment), '');
  const params = error.params as Params;
  const parent = (error.parentSchema ?? {}) as JsonSchema;
  if (error.keyword === 'required') return { path: joinPath(path, String(params.missingProperty)), message: 'is required' };
  if (error.keyword === 'additionalProperties') {
    const known = Object.keys((parent.properties ?? {}) as object);
    return { path: joinPath(path, String(params.additionalProperty)), message: `is not a known field${known.length ? ` (known: ${known.join(', ')})` : ''}` };
  }
  if (typeof parent.errorMessage === 'string') return { path, message: parent.errorMessage };
  const message = Object.hasOwn(MESSAGES, error.keyword) ? MESSAGES[error.keyword]?.(params) : undefined;
  return { path, message: message ?? error.message ?? 'is invalid' };
}
