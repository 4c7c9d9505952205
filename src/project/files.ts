import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Bundle } from './bundle.ts';
import { bundleOf, keyOf, KINDS, type KindName, type Kind } from './kinds/index.ts';
import { formatProblem, sortProblems, type Problem } from './problem.ts';
import { expandResource, isResourceFile, pathInFile, type ResourceMember } from './resource-file.ts';
import { checkSpecs, type SpecEntry } from './validate-bundle.ts';
import { lineOf, parseYaml, type ParsedYaml } from './yaml-source.ts';

export { formatProblem, type Problem };

/**
 * Reads a project directory into a Bundle. Layout: one definition per file (a kind with
 * `resourceFiles` may define several in one: resource-file.ts expands them here), in each kind's
 * directory (`groups/*.yaml`, `endpoints/*.yaml`, `cron/*.yaml`, `webhooks/*.yaml`; `.yml` too); anything else is ignored — other files and directories,
 * dotfiles and editor leftovers (`.orders.yaml.swp`, `orders.yaml~`, `.#orders.yaml`,
 * `#orders.yaml#`), and the writer's own temp files (dotfiles).
 *
 * Bad content never throws: every problem is returned with its file and line. Guards:
 *
 * | what                                   | rule                                           |
 * |----------------------------------------|------------------------------------------------|
 * | a file, a kind directory, a handler    | must resolve (realpath) inside the project dir |
 * | a YAML or handler file                 | a regular file of at most maxFileBytes (256 KB)|
 * | `handler.file`, cron `action.file`     | relative to its YAML file, read into `code`    |
 *
 * Synchronous on purpose: a project is a few hundred small files at most (each bounded), and
 * one call gives a consistent snapshot for validate, the watcher and write-back alike.
 */
export interface LoadOptions {
  /** Largest YAML or handler file read, in bytes. Default 256 KB. */
  maxFileBytes?: number;
}

/**
 * What an earlier load read (the sync keeps it, sync-cache.ts persists it): a YAML file whose
 * content hash is the same is not parsed again, its value is taken from here. Values are never
 * changed by the loader or its callers' bundles (the loader copies what it changes).
 */
export interface SourceCache {
  /** YAML files by relPath. */
  files: ReadonlyMap<string, SourceFile>;
  /** Handler files by relPath: their content hashes. */
  handlers: ReadonlyMap<string, string>;
}

export interface SourceFile {
  /** sha256 of the text (BOM removed). */
  hash: string;
  /** The parsed YAML value (plain JSON). */
  value: unknown;
}

export interface CachedLoadOptions extends LoadOptions {
  cache?: SourceCache;
  /**
   * `always` (default); `ifChanged`: the cache holds a state that was checked without problems,
   * so when every file is unchanged against it (`unchanged`) the checks are not run again;
   * `never`: the caller wrote the files from a checked state itself (a write-back).
   */
  checks?: 'always' | 'ifChanged' | 'never';
  /**
   * Read only the definition file at this relPath (`endpoints/books.yaml`): a write-back that
   * needs one file's entries again, without reading (and checking) every other file.
   */
  only?: string;
}

export interface ProjectFile {
  kind: KindName;
  key: string;
  /** As problems name it: the project dir as given joined with relPath (`project/endpoints/orders.yaml`). */
  file: string;
  /** Inside the project dir, `/`-separated (`endpoints/orders.yaml`). */
  relPath: string;
  /** When the definition's code lives in a .js file: `ref` as written in the YAML. */
  handlerFile?: { ref: string; file: string; relPath: string };
  /** When the file is a resource file (resource-file.ts): the method this definition is. */
  resource?: { method: string };
}

export interface LoadedProject {
  /** The definitions that have no problems of their own. Apply it only when `problems` is empty. */
  bundle: Bundle;
  /** Sorted by file and line. */
  problems: Problem[];
  /** Where each definition lives, by projectFileKey(kind, key), for write-back. */
  files: Map<string, ProjectFile>;
  /** What was read, for the next load's `cache`: every YAML file that parsed, every handler file read. */
  sources: SourceCache;
  /** Every YAML and handler file is the one in `cache`, and there are no others (false without a cache). */
  unchanged: boolean;
}

export const DEFAULT_MAX_FILE_BYTES = 256 * 1024;

/** The `files` map's key: natural keys are unique per kind only. */
export const projectFileKey = (kind: KindName, key: string): string => `${kind}:${key}`;

/** Ends in .yaml or .yml, and is neither a dotfile (`.#x.yaml`, temp files) nor an Emacs `#x#`. */
export const isDefinitionFileName = (name: string): boolean => /\.ya?ml$/.test(name) && !/^[.#]/.test(name);

const toPosix = (path: string): string => path.split(sep).join('/');
const isInside = (root: string, path: string): boolean => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

type Read = { text: string } | { problem: string };

export const hashText = (text: string): string => createHash('sha256').update(text).digest('hex');

interface Root {
  dir: string;
  abs: string;
  real: string;
  maxFileBytes: number;
  /** Content hashes of the handler files read, by relPath. */
  handlers: Map<string, string>;
}

/**
 * Reads a file that must stay inside the project (after symlinks) and within the size limit.
 * `real`: the caller knows the file's real path already (a regular file listed in a directory
 * whose real path was checked), which spares resolving it component by component (10,000 files:
 * most of the time a start with an unchanged project takes).
 */
function readInside(root: Root, abs: string, real?: string): Read {
  if (real === undefined) {
    try {
      real = realpathSync(abs);
    } catch (error) {
      return { problem: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist (or is a broken symlink)' : `cannot be read: ${(error as Error).message}` };
    }
    if (!isInside(root.real, real)) return { problem: 'is a symlink leading outside the project directory' };
  }
  let fd: number;
  try {
    // Non-blocking: a FIFO (or a device) named like a definition is refused below, not waited on.
    fd = openSync(real, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    return { problem: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist (or is a broken symlink)' : `cannot be read: ${(error as Error).message}` };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { problem: 'is not a regular file' };
    if (stat.size > root.maxFileBytes) return { problem: `is ${stat.size} bytes; the limit is ${root.maxFileBytes} (maxFileBytes)` };
    return { text: readFileSync(fd, 'utf8').replace(/^\uFEFF/, '') };
  } catch (error) {
    return { problem: `cannot be read: ${(error as Error).message}` };
  } finally {
    closeSync(fd);
  }
}

/**
 * The definition files of one kind, sorted, each with its real path when that is known without
 * resolving it (a regular file, not a symlink, in the kind directory's real path); problems for
 * a kind directory that is not usable.
 */
function definitionFiles(root: Root, kind: Kind, problems: Problem[]): Array<{ name: string; real?: string }> {
  const abs = join(root.abs, kind.dir);
  try {
    const realDir = realpathSync(abs);
    if (!isInside(root.real, realDir)) {
      problems.push({ file: join(root.dir, kind.dir), path: '', message: 'is a symlink leading outside the project directory' });
      return [];
    }
    return readdirSync(abs, { withFileTypes: true })
      .filter((entry) => isDefinitionFileName(entry.name) && !entry.isDirectory())
      .map((entry) => (entry.isFile() ? { name: entry.name, real: join(realDir, entry.name) } : { name: entry.name }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return [];
    problems.push({ file: join(root.dir, kind.dir), path: '', message: code === 'ENOTDIR' ? 'is not a directory' : `cannot be read: ${(error as Error).message}` });
    return [];
  }
}

interface Loaded {
  kind: Kind;
  file: string;
  relPath: string;
  /** Parsed with positions: for a file taken from the cache only when a problem needs a line. */
  parsed: () => ParsedYaml;
  spec: Record<string, unknown>;
  handlerFile?: ProjectFile['handlerFile'];
  problems: number;
  /** Its YAML file is the one in the cache: checked on its own already (see CachedLoadOptions.checks). */
  cached: boolean;
  /** A method of a resource file: where its fields are written, and the file's shared problem list. */
  member?: ResourceMember & { file: ResourceProblems };
}

/** The problems of one resource file's methods, merged once every method is checked (see resourceProblems). */
interface ResourceProblems {
  methods: number;
  found: Map<string, { problem: Problem; methods: string[] }>;
}

export function loadProject(dir: string, options: CachedLoadOptions = {}): LoadedProject {
  const problems: Problem[] = [];
  const bundle: Bundle = bundleOf();
  const files = new Map<string, ProjectFile>();
  const sources = { files: new Map<string, SourceFile>(), handlers: new Map<string, string>() };
  const cache = options.cache;
  let fromCache = 0;
  const abs = resolve(dir);
  let real: string;
  try {
    real = realpathSync(abs);
    if (!statSync(real).isDirectory()) throw new Error('not a directory');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    return { bundle, problems: [{ file: dir, path: '', message: missing ? 'does not exist' : 'is not a directory' }], files, sources, unchanged: false };
  }
  const root: Root = { dir, abs, real, maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES, handlers: sources.handlers };

  const loaded: Loaded[] = [];
  const resourceFiles: ResourceProblems[] = [];
  /** A problem of one definition: at its line, in a resource file at its method's line (once for the methods it concerns). */
  const report = (entry: Loaded, problem: Problem & { file?: string }): void => {
    entry.problems++;
    const at = entry.member ? pathInFile(entry.member, problem.path) : problem.path;
    const placed: Problem = problem.file !== undefined ? problem : { file: entry.file, line: lineOf(entry.parsed(), at), path: at, message: problem.message };
    if (!entry.member) {
      problems.push(placed);
      return;
    }
    const key = JSON.stringify([placed.file, placed.line, placed.path, placed.message]);
    const found = entry.member.file.found.get(key);
    if (found) found.methods.push(entry.member.method);
    else entry.member.file.found.set(key, { problem: placed, methods: [entry.member.method] });
  };
  for (const kind of KINDS) {
    if (options.only !== undefined && !options.only.startsWith(`${kind.dir}/`)) continue;
    for (const { name, real: realFile } of definitionFiles(root, kind, problems)) {
      const relPath = `${kind.dir}/${name}`;
      if (options.only !== undefined && relPath !== options.only) continue;
      const file = join(dir, kind.dir, name);
      const read = readInside(root, join(abs, kind.dir, name), realFile);
      if ('problem' in read) {
        problems.push({ file, path: '', message: read.problem });
        continue;
      }
      // Unchanged since the cache was made: its value is the parse's (parsing is ~1 ms a file).
      const hash = hashText(read.text);
      const cached = cache?.files.get(relPath);
      // The document with its positions is kept only for a file with a problem (to find its line),
      // parsed again then: 10,000 files' documents held at once were hundreds of MB.
      let withPositions: ParsedYaml | undefined;
      const parsed = (): ParsedYaml => (withPositions ??= parseYaml(read.text));
      let parsedValue: unknown;
      const hit = cached !== undefined && cached.hash === hash;
      if (hit) {
        parsedValue = cached?.value;
        fromCache++;
      } else {
        const first = parseYaml(read.text);
        if (first.problems.length) {
          problems.push(...first.problems.map((problem) => ({ ...problem, file })));
          continue;
        }
        parsedValue = first.value;
      }
      sources.files.set(relPath, { hash, value: parsedValue });
      if (typeof parsedValue !== 'object' || parsedValue === null || Array.isArray(parsedValue)) {
        problems.push({ file, line: 1, path: '', message: parsedValue == null ? 'is empty: it must hold one definition' : 'must be a mapping of fields (key: value lines)' });
        continue;
      }
      const value = parsedValue as Record<string, unknown>;
      const specs: Array<Pick<Loaded, 'spec' | 'member'>> = [];
      if (kind.resourceFiles && isResourceFile(value)) {
        const expanded = expandResource(value);
        problems.push(...expanded.problems.map((problem) => ({ ...problem, file, line: lineOf(parsed(), problem.path) })));
        const shared: ResourceProblems = { methods: expanded.members.length, found: new Map() };
        resourceFiles.push(shared);
        specs.push(...expanded.members.map((member) => ({ spec: member.spec, member: { ...member, file: shared } })));
      } else {
        specs.push({ spec: value });
      }
      for (const { spec, member } of specs) {
        const entry: Loaded = { kind, file, relPath, parsed, spec, problems: 0, cached: hit, ...(member ? { member } : {}) };
        const handler = readHandlerFile(root, entry);
        if ('problem' in handler) report(entry, { path: handler.path, message: handler.problem });
        loaded.push(entry);
      }
    }
  }

  const checks = options.checks ?? 'always';
  const entries: SpecEntry[] = loaded.map((entry) => ({
    kind: entry.kind,
    spec: entry.spec,
    where: entry.file,
    // Unchanged against a cache without problems, handler file included: its own checks passed then.
    checked: checks === 'ifChanged' && entry.cached && (entry.handlerFile === undefined || cache?.handlers.get(entry.handlerFile.relPath) === sources.handlers.get(entry.handlerFile.relPath)),
    report(problem) {
      const handlerFile = entry.handlerFile;
      const field = entry.kind.codeFile?.field;
      if (handlerFile && field !== undefined && (problem.path === `${field}.code` || problem.path.startsWith(`${field}.code.`))) {
        // Code read from a handler file: a syntax error points into that file, anything else at the `file:` line.
        if (problem.codeLine !== undefined) report(entry, { file: handlerFile.file, line: problem.codeLine, path: '', message: problem.message });
        else report(entry, { path: `${field}.file`, message: problem.message });
      } else {
        report(entry, { path: problem.path, message: problem.message });
      }
    },
  }));
  const unchanged =
    cache !== undefined &&
    fromCache === cache.files.size &&
    sources.files.size === cache.files.size &&
    sources.handlers.size === cache.handlers.size &&
    [...sources.handlers].every(([relPath, hash]) => cache.handlers.get(relPath) === hash);
  // Checked when the cache was made: nothing to check again.
  if (checks === 'always' || (checks === 'ifChanged' && !(unchanged && problems.length === 0))) checkSpecs(entries);
  for (const file of resourceFiles) problems.push(...resourceProblems(file));

  // By natural key, so the bundle does not depend on how files are named.
  loaded.sort((a, b) => compareKeys(keyOf(a.kind, a.spec), keyOf(b.kind, b.spec)));
  for (const entry of loaded) {
    const key = keyOf(entry.kind, entry.spec);
    const fileKey = key === undefined ? undefined : projectFileKey(entry.kind.kind, key);
    if (fileKey !== undefined && !files.has(fileKey)) {
      files.set(fileKey, {
        kind: entry.kind.kind,
        key: key as string,
        file: entry.file,
        relPath: entry.relPath,
        ...(entry.handlerFile ? { handlerFile: entry.handlerFile } : {}),
        ...(entry.member ? { resource: { method: entry.member.method } } : {}),
      });
    }
    if (entry.problems === 0) ((bundle as unknown as Record<string, object[]>)[entry.kind.bundleKey] as object[]).push(entry.spec);
  }
  return { bundle, problems: sortProblems(problems), files, sources, unchanged };
}

/**
 * A shared field's problem is found once per method: it is reported once. One that only some of
 * the methods have (a shared `allowedGroups` with one method's `accessType: public`) names them.
 */
function resourceProblems(file: ResourceProblems): Problem[] {
  return [...file.found.values()].map(({ problem, methods }) =>
    methods.length === file.methods || problem.path.startsWith('methods.') ? problem : { ...problem, message: `${problem.message} (in ${methods.join(', ')})` },
  );
}

function compareKeys(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return 1;
  if (b === undefined) return -1;
  return a < b ? -1 : 1;
}

/**
 * `handler: {enabled, file}` → `handler: {enabled, code}` with the file's text (for a cron job
 * `action: {type, file}`: the kind's `codeFile.field`), the file remembered for write-back.
 * Anything else (inline code, both keys, no handler) is left to the schema.
 */
function readHandlerFile(root: Root, entry: Loaded): { ok: true } | { problem: string; path: string } {
  const field = entry.kind.codeFile?.field;
  const handler = field === undefined ? undefined : entry.spec[field];
  if (field === undefined || typeof handler !== 'object' || handler === null || Array.isArray(handler)) return { ok: true };
  const path = `${field}.file`;
  const { file: ref, ...rest } = handler as Record<string, unknown>;
  if (typeof ref !== 'string' || rest.code !== undefined) return { ok: true };
  if (isAbsolute(ref)) return { problem: 'must be a path relative to this YAML file', path };
  const abs = resolve(root.abs, dirname(entry.relPath), ref);
  if (!isInside(root.abs, abs)) return { problem: `names ${ref}, which is outside the project directory`, path };
  const read = readInside(root, abs);
  if ('problem' in read) return { problem: `names ${ref}, which ${read.problem}`, path };
  entry.spec = { ...entry.spec, [field]: { ...rest, code: read.text } };
  entry.handlerFile = { ref, file: join(root.dir, relative(root.abs, abs)), relPath: toPosix(relative(root.abs, abs)) };
  root.handlers.set(entry.handlerFile.relPath, hashText(read.text));
  return { ok: true };
}

/** What `dynctl validate [dir]` prints: every problem of the project, offline. */
export function validateProjectDir(dir: string, options: LoadOptions = {}): Problem[] {
  return loadProject(dir, options).problems;
}
