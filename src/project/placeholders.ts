import { readFileSync, realpathSync } from 'node:fs';
import { isAbsolute, resolve as resolvePath, sep } from 'node:path';
import { joinPath, type Problem } from './problem.ts';

/**
 * `${env:NAME}` and `${file:/abs/path}` inside string values. They stay as written in the files,
 * in loaded bundles and on write-back; the apply side resolves them just before it writes to the
 * store, so secrets never land in the repository.
 *
 * | written                  | resolves to                                                |
 * |--------------------------|------------------------------------------------------------|
 * | `${env:NAME}`            | the variable's value (set but empty is fine)               |
 * | `${file:/run/secrets/x}` | the file's text, one trailing newline removed              |
 * | `$${env:NAME}`           | the literal text `${env:NAME}` (an escape)                 |
 * | `${other:...}`, `${x}`   | left alone: handler code uses `${...}` in template strings |
 *
 * A placeholder may be the whole string or part of it (`Bearer ${env:TOKEN}`). Keys are never
 * resolved, only values.
 */
export type PlaceholderSource = 'env' | 'file';

export interface Placeholder {
  /** Dotted path of the string holding it (`networkAccess.allowedIpRanges.0`). */
  path: string;
  source: PlaceholderSource;
  /** The variable name or the file path. */
  name: string;
  /** As written, `${env:NAME}`. */
  text: string;
}

export interface ResolveOptions {
  /** Default: process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Returns a file's text, or undefined when it cannot be read. Default: readFileSync as UTF-8. */
  readFile?: (path: string) => string | undefined;
  /** Which placeholders may be resolved at all (the server's policy); a refused one is a problem. */
  allow?: (placeholder: Placeholder) => string | undefined;
  /** Where `value` is, prefixed to the paths of problems (`endpoints[GET /api/x]`). Default: ''. */
  at?: string;
}

export type Resolved<T> = { ok: true; value: T } | { ok: false; problems: Problem[] };

const PLACEHOLDER = /(\$?)\$\{(env|file):([^}]*)\}/g;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Whether a string holds at least one placeholder (escaped ones do not count). */
export function hasPlaceholder(text: string): boolean {
  for (const match of text.matchAll(PLACEHOLDER)) if (!match[1]) return true;
  return false;
}

/**
 * A copy of `value` whose strings read as they are: every `${env:…}`/`${file:…}` in them (an
 * escaped one too) gets one more `$`, so resolving gives the text back. For values that leave
 * the store as files or bundles: the store holds resolved values, so such text is literal there.
 */
export function escapePlaceholders<T>(value: T): T {
  // Nearly no definition holds such text: those are returned as they are, not copied.
  if (!someString(value, (text) => text.includes('${'))) return value;
  return mapStrings(value, '', (text) => text.replace(PLACEHOLDER, '$$$&')) as T;
}

function someString(value: unknown, test: (text: string) => boolean): boolean {
  if (typeof value === 'string') return test(value);
  if (Array.isArray(value)) return value.some((item) => someString(item, test));
  if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) if (someString(item, test)) return true;
  }
  return false;
}

/** Every placeholder in the string values of `value`, depth first, in key order. */
export function findPlaceholders(value: unknown, at = ''): Placeholder[] {
  const found: Placeholder[] = [];
  visitStrings(value, at, (text, path) => {
    for (const match of text.matchAll(PLACEHOLDER)) {
      if (!match[1]) found.push({ path, source: match[2] as PlaceholderSource, name: match[3] ?? '', text: match[0] });
    }
  });
  return found;
}

/** Placeholders that can never resolve, whatever the environment: a bad variable name, a relative file path. */
export function placeholderProblems(value: unknown, at = ''): Problem[] {
  return findPlaceholders(value, at).flatMap((placeholder) => {
    const problem = syntaxProblem(placeholder);
    return problem ? [{ path: placeholder.path, message: problem }] : [];
  });
}

function syntaxProblem(placeholder: Placeholder): string | undefined {
  if (placeholder.source === 'env' && !ENV_NAME.test(placeholder.name)) return `has ${placeholder.text}: not a valid environment variable name`;
  if (placeholder.source === 'file' && !isAbsolute(placeholder.name)) return `has ${placeholder.text}: the file path must be absolute`;
  return undefined;
}

/**
 * A copy of `value` with every placeholder replaced, or the problems naming each variable that
 * is not set and each file that cannot be read. `value` itself is not changed.
 */
export function resolvePlaceholders<T>(value: T, options: ResolveOptions = {}): Resolved<T> {
  const env = options.env ?? process.env;
  const readFile = options.readFile ?? readTextFile;
  const problems: Problem[] = [];
  const resolveString = (text: string, path: string): string =>
    text.replace(PLACEHOLDER, (whole: string, escape: string, source: string, name: string) => {
      if (escape) return whole.slice(1);
      const placeholder: Placeholder = { path, source: source as PlaceholderSource, name, text: whole };
      const syntax = syntaxProblem(placeholder);
      if (syntax) {
        problems.push({ path, message: syntax });
        return whole;
      }
      const refused = options.allow?.(placeholder);
      if (refused) {
        problems.push({ path, message: `has ${whole}: ${refused}` });
        return whole;
      }
      const resolved = source === 'env' ? env[name] : readFile(name);
      if (resolved === undefined) {
        problems.push({ path, message: source === 'env' ? `needs the environment variable ${name}, which is not set` : `needs the file ${name}, which cannot be read` });
        return whole;
      }
      return source === 'file' ? resolved.replace(/\r?\n$/, '') : resolved;
    });
  const copy = mapStrings(value, options.at ?? '', resolveString) as T;
  return problems.length ? { ok: false, problems } : { ok: true, value: copy };
}

function readTextFile(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function visitStrings(value: unknown, path: string, visit: (text: string, path: string) => void): void {
  if (typeof value === 'string') visit(value, path);
  else if (Array.isArray(value)) value.forEach((item, index) => visitStrings(item, joinPath(path, index), visit));
  else if (typeof value === 'object' && value !== null) for (const [key, item] of Object.entries(value)) visitStrings(item, joinPath(path, key), visit);
}

function mapStrings(value: unknown, path: string, map: (text: string, path: string) => string): unknown {
  if (typeof value === 'string') return map(value, path);
  if (Array.isArray(value)) return value.map((item, index) => mapStrings(item, joinPath(path, index), map));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) Object.defineProperty(out, key, { value: mapStrings(item, joinPath(path, key), map), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return value;
}

/**
 * Which placeholders the server resolves. A bundle can arrive over the API from anyone with
 * manage_api, and resolved values become readable definitions: so only environment variables
 * named with the prefix (by default `DYN_`, never the server's own JWT_SECRET and the like) and
 * only files inside the secrets directory (by default /run/secrets) may be used.
 */
export interface PlaceholderPolicy {
  envPrefix: string;
  secretFilesDir: string;
}

export const DEFAULT_PLACEHOLDER_POLICY: PlaceholderPolicy = { envPrefix: 'DYN_', secretFilesDir: '/run/secrets' };

/** The policy as the server reads it from its environment (PLACEHOLDER_ENV_PREFIX, SECRET_FILES_DIR; config.ts). */
export function placeholderPolicyFromEnv(env: Readonly<Record<string, string | undefined>>): PlaceholderPolicy {
  return {
    envPrefix: env.PLACEHOLDER_ENV_PREFIX?.trim() || DEFAULT_PLACEHOLDER_POLICY.envPrefix,
    secretFilesDir: resolvePath(env.SECRET_FILES_DIR?.trim() || DEFAULT_PLACEHOLDER_POLICY.secretFilesDir),
  };
}

/** Why the policy refuses a placeholder, or undefined when it may be resolved. */
export function refusedByPolicy(placeholder: Placeholder, policy: PlaceholderPolicy): string | undefined {
  if (placeholder.source === 'env') {
    return placeholder.name.startsWith(policy.envPrefix) ? undefined : `only environment variables whose names start with ${policy.envPrefix} can be used`;
  }
  // The real path when the file exists (a symlink out of the directory is outside); else the path
  // as written: a missing file outside is refused as such, so an answer never tells whether a
  // file outside the directory exists.
  let real: string;
  try {
    real = realpathSync(placeholder.name);
  } catch {
    real = resolvePath(placeholder.name);
  }
  const root = resolvePath(policy.secretFilesDir);
  return real === root || real.startsWith(root + sep) ? undefined : `only files inside ${policy.secretFilesDir} can be used`;
}
