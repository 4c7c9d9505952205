import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { Document, isMap, isNode, isScalar, isSeq, parseDocument, type Node } from 'yaml';
import type { Bundle } from './bundle.ts';
import { loadProject, projectFileKey, type LoadOptions, type ProjectFile } from './files.ts';
import { orderKeys } from './key-order.ts';
import { kindOf, KINDS, specsOf, type KindName, type Kind } from './kinds/index.ts';
import { hasPlaceholder, resolvePlaceholders, type ResolveOptions } from './placeholders.ts';
import { readSchema, SCHEMAS_DIR } from './schema-files.ts';
import { PARSE_OPTIONS } from './yaml-source.ts';
import { removeResourceMethod, writeResourceMember } from './write-resource.ts';

/**
 * Write-back: definitions from the store (or a bundle) into the project directory.
 *
 * - Files are written atomically (a dotfile temp in the same directory, then rename), so the
 *   watcher and `git` never see half a file.
 * - Keys follow the JSON Schema's `properties` order (key-order.ts); the same bundle gives
 *   byte-identical files, so export → import → export changes nothing.
 * - An existing file is updated in place through the yaml Document API: unchanged values keep
 *   their nodes — comments, quoting, flow style — and a changed scalar keeps its comments. A file
 *   whose content is already equal (in any key order) is not touched at all.
 * - A string holding a placeholder is kept when it resolves to the value being written, so an
 *   export from the store does not replace `${env:TOKEN}` with the secret.
 * - A handler written as `handler.file` (a cron job's `action.file`) keeps its code in that .js file.
 * - A definition from a resource file (several methods of one path, resource-file.ts) is folded
 *   back into it by write-resource.ts; deleting one takes its method out of `methods`.
 * - The first line is `# yaml-language-server: $schema=...` (see schemaComment). An existing file
 *   keeps its own schema line, and gets one when it is rewritten without.
 */
export interface WriteOptions extends LoadOptions {
  /** The files map of an earlier loadProject(dir); kept up to date. Default: the directory is read. */
  files?: Map<string, ProjectFile>;
  /** Where the code of a definition with no file yet goes: `inline` (default) or `file` (`<name>.handler.js` beside it). */
  handlers?: 'inline' | 'file';
  /**
   * The definitions being written, by kind and natural key, when several are written in a row
   * (writeProject, a sync write-back): the other methods of a resource file are folded in as
   * they will be, not as the file still has them. Default: as the file has them.
   */
  writing?: (kind: KindName, key: string) => object | undefined;
  /** How placeholders are resolved when comparing them with the values written. Default: process.env, files on disk. */
  placeholders?: ResolveOptions;
}

export interface WriteResult {
  /** As given dir joined with relPath. */
  file: string;
  relPath: string;
  /** False when the files already held this definition. */
  changed: boolean;
  /** relPath of the handler file, when the code lives in one. */
  handlerFile?: string;
}

export interface WriteProjectResult {
  written: string[];
  unchanged: string[];
  removed: string[];
}

/**
 * Long lines are not folded (a folded line is a needless diff when a value changes); flow
 * collections are written `[cm, in]`, as people write them.
 */
export const TO_STRING = { lineWidth: 0, flowCollectionPadding: false } as const;
export const SCHEMA_LINE = /^#\s*yaml-language-server:\s*\$schema=\S*[^\S\n]*(?:\r?\n|$)/;

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const toPosix = (path: string): string => path.split(sep).join('/');
const isInside = (root: string, path: string): boolean => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};
const realpathOr = (path: string): string => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};

/**
 * The `$schema` an editor is pointed at. A relative path to this package's schemas/ when the
 * project lies inside the package (dyn's own repository) or inside the repository whose
 * node_modules holds it (`../../node_modules/dynctl/schemas/endpoint.schema.json`): both move with
 * a clone. Anywhere else a relative path would name one machine's layout, so it is the schema's
 * `$id` URL (editors can map it to a local copy with their `yaml.schemas` setting).
 */
export function schemaComment(dir: string, relPath: string, kind: Kind, schemaFile = kind.schemaFile): string {
  const root = realpathOr(resolve(dir));
  const pkg = realpathOr(dirname(SCHEMAS_DIR));
  const modules = pkg.indexOf(`${sep}node_modules${sep}`);
  const inRepo = isInside(pkg, root) || (modules >= 0 && isInside(pkg.slice(0, modules) || sep, root));
  const target = inRepo ? toPosix(relative(dirname(join(root, relPath)), join(pkg, 'schemas', schemaFile))) : String(readSchema(schemaFile).$id);
  return `# yaml-language-server: $schema=${target}`;
}

/** Writes one definition: its existing file (found by natural key) updated in place, else a new file. Returns what it wrote. */
export function writeSpec(dir: string, kindName: KindName, spec: object, options: WriteOptions = {}): WriteResult {
  const kind = kindOf(kindName);
  const root = resolve(dir);
  const files = options.files ?? loadProject(dir, options).files;
  const key = kind.key(spec);
  const existing = files.get(projectFileKey(kind.kind, key));
  if (existing?.resource) return writeResourceMember(dir, kind, existing, spec, { ...options, files });
  const relPath = existing?.relPath ?? freeName(root, kind, spec, files);
  const value = { ...(spec as Record<string, unknown>) };

  let handlerFile: { relPath: string; code: unknown } | undefined;
  const codeField = kind.codeFile?.field;
  const codeHolder = codeField === undefined ? undefined : value[codeField];
  if (codeField !== undefined && isPlainObject(codeHolder)) {
    const { code, file, ...rest } = codeHolder;
    // Only code goes to a file (a cron job's http action has none, even if it once had a file).
    const ref =
      typeof file === 'string'
        ? file
        : typeof code !== 'string'
          ? undefined
          : (existing?.handlerFile?.ref ?? (options.handlers === 'file' && code !== '' ? `./${basename(relPath).replace(/\.ya?ml$/, '')}${kind.codeFile?.suffix ?? '.js'}` : undefined));
    if (ref !== undefined) {
      value[codeField] = { ...rest, file: ref };
      handlerFile = { relPath: handlerPath(root, relPath, ref), code };
    }
  }

  const schema = readSchema(kind.schemaFile);
  const ordered = orderKeys(value, schema, schema);
  const yamlChanged = writeYaml(join(root, relPath), ordered, () => schemaComment(dir, relPath, kind), options.placeholders);
  let codeChanged = false;
  if (handlerFile && typeof handlerFile.code === 'string') codeChanged = writeIfDifferent(join(root, handlerFile.relPath), handlerFile.code);

  files.set(projectFileKey(kind.kind, key), {
    kind: kind.kind,
    key,
    file: join(dir, relPath),
    relPath,
    ...(handlerFile ? { handlerFile: { ref: (value[codeField as string] as { file: string }).file, file: join(dir, handlerFile.relPath), relPath: handlerFile.relPath } } : {}),
  });
  return { file: join(dir, relPath), relPath, changed: yamlChanged || codeChanged, ...(handlerFile ? { handlerFile: handlerFile.relPath } : {}) };
}

/** Deletes a definition's file, and its handler file when no other definition uses it. Returns the relPaths removed. */
export function removeSpec(dir: string, kindName: KindName, key: string, options: Pick<WriteOptions, 'files' | 'maxFileBytes'> = {}): string[] {
  const root = resolve(dir);
  const files = options.files ?? loadProject(dir, options).files;
  const fileKey = projectFileKey(kindName, key);
  const entry = files.get(fileKey);
  if (!entry) return [];
  files.delete(fileKey);
  const removed: string[] = [];
  if (entry.resource && removeResourceMethod(join(root, entry.relPath), entry.resource.method)) {
    // Other methods remain in the file: only the method's own handler file may go.
  } else {
    rmSync(join(root, entry.relPath), { force: true });
    removed.push(entry.relPath);
  }
  const handler = entry.handlerFile?.relPath;
  if (handler && ![...files.values()].some((other) => other.handlerFile?.relPath === handler)) {
    rmSync(join(root, handler), { force: true });
    removed.push(handler);
  }
  return removed;
}

/**
 * Makes the directory hold exactly the bundle: files of definitions not in it are removed
 * first, then each definition is written (in key order, so new file names are deterministic).
 * Files that cannot be read as a definition are left alone. Throws when the bundle names one
 * key twice, which no store can produce.
 */
export function writeProject(dir: string, bundle: Bundle, options: Omit<WriteOptions, 'files'> = {}): WriteProjectResult {
  mkdirSync(dir, { recursive: true });
  const files = loadProject(dir, options).files;
  const result: WriteProjectResult = { written: [], unchanged: [], removed: [] };
  const wanted: Array<{ kind: Kind; key: string; spec: object }> = [];
  for (const kind of KINDS) {
    const specs = specsOf(bundle, kind)
      .map((spec) => ({ kind, key: kind.key(spec), spec }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    specs.forEach((entry, index) => {
      if (index > 0 && specs[index - 1]?.key === entry.key) throw new Error(`writeProject: the bundle holds the ${kind.label} ${entry.key} twice`);
    });
    wanted.push(...specs);
  }
  const keep = new Set(wanted.map((entry) => projectFileKey(entry.kind.kind, entry.key)));
  for (const [fileKey, entry] of [...files]) {
    if (!keep.has(fileKey)) result.removed.push(...removeSpec(dir, entry.kind, entry.key, { files }));
  }
  for (const entry of wanted) {
    const written = writeSpec(dir, entry.kind.kind, entry.spec, { ...options, files, writing: (kind, key) => wanted.find((other) => other.kind.kind === kind && other.key === key)?.spec });
    // A resource file holds several definitions: it is listed once, as written when any of them changed it.
    if (written.changed) {
      if (!result.written.includes(written.relPath)) result.written.push(written.relPath);
      result.unchanged = result.unchanged.filter((relPath) => relPath !== written.relPath);
    } else if (!result.written.includes(written.relPath) && !result.unchanged.includes(written.relPath)) {
      result.unchanged.push(written.relPath);
    }
  }
  return result;
}

/** A handler file named in a YAML file: relative to it, inside the project. */
export function handlerPath(root: string, relPath: string, ref: string): string {
  const abs = resolve(root, dirname(relPath), ref);
  if (isAbsolute(ref) || !isInside(root, abs)) throw new Error(`handler.file ${ref} of ${relPath} must be a relative path inside the project directory`);
  return toPosix(relative(root, abs));
}

/** `<dir>/<fileName>`, or `<name>-2.yaml`, ... when another definition (or any file) has it. */
function freeName(root: string, kind: Kind, spec: object, files: Map<string, ProjectFile>): string {
  const taken = new Set<string>();
  for (const entry of files.values()) {
    taken.add(entry.relPath);
    if (entry.handlerFile) taken.add(entry.handlerFile.relPath);
  }
  const stem = kind.fileName(spec).replace(/\.yaml$/, '');
  for (let n = 1; ; n++) {
    const relPath = `${kind.dir}/${n === 1 ? stem : `${stem}-${n}`}.yaml`;
    const handler = relPath.replace(/\.yaml$/, kind.codeFile?.suffix ?? '.handler.js');
    if (!taken.has(relPath) && !taken.has(handler) && !existsSync(join(root, relPath)) && !existsSync(join(root, handler))) return relPath;
  }
}

/** Returns whether the file changed. */
export function writeYaml(abs: string, value: unknown, header: () => string, placeholders: ResolveOptions | undefined): boolean {
  const old = existsSync(abs) ? readFileSync(abs, 'utf8') : undefined;
  let text: string | undefined;
  if (old !== undefined) {
    const schemaLine = SCHEMA_LINE.exec(old)?.[0];
    const doc = parseDocument(old.slice(schemaLine?.length ?? 0), PARSE_OPTIONS);
    if (doc.errors.length === 0 && isMap(doc.contents)) {
      const state = { changed: false, placeholders };
      doc.contents = merge(doc, doc.contents, value, state) as typeof doc.contents;
      // Unchanged content: the file stays as it is, even without a schema line.
      if (!state.changed) return false;
      text = `${schemaLine?.replace(/\s+$/, '') ?? header()}\n${doc.toString(TO_STRING)}`;
    }
  }
  text ??= `${header()}\n${new Document(value).toString(TO_STRING)}`;
  return writeIfDifferent(abs, text, old);
}

export function writeIfDifferent(abs: string, text: string, old = existsSync(abs) ? readFileSync(abs, 'utf8') : undefined): boolean {
  if (old === text) return false;
  mkdirSync(dirname(abs), { recursive: true });
  // A dotfile: the loader and the watcher ignore it while it exists.
  const temp = join(dirname(abs), `.${basename(abs)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    writeFileSync(temp, text, { flag: 'wx', flush: true });
    renameSync(temp, abs);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  return true;
}

interface MergeState {
  changed: boolean;
  placeholders: ResolveOptions | undefined;
}

/**
 * Makes `node` hold `value`, reusing every node whose value is unchanged (and with it its
 * comments). Returns the node to put in place of `node`.
 */
function merge(doc: Document, node: unknown, value: unknown, state: MergeState): unknown {
  if (isPlainObject(value) && isMap(node)) {
    const items = Object.entries(value).map(([key, item]) => {
      const pair = node.items.find((candidate) => isScalar(candidate.key) && String(candidate.key.value) === key);
      if (!pair) {
        state.changed = true;
        return doc.createPair(key, item);
      }
      pair.value = merge(doc, pair.value, item, state) as typeof pair.value;
      return pair;
    });
    if (items.length !== node.items.length) state.changed = true;
    // Keys out of order alone do not make a file worth rewriting; when it is rewritten anyway, they are put in order.
    node.items = items;
    return node;
  }
  if (Array.isArray(value) && isSeq(node)) {
    const items = value.map((item: unknown, index) => {
      if (index < node.items.length) return merge(doc, node.items[index], item, state);
      state.changed = true;
      return doc.createNode(item);
    });
    if (items.length !== node.items.length) state.changed = true;
    node.items = items;
    return node;
  }
  if (isScalar(node) && sameScalar(node.value, value, state.placeholders)) return node;
  state.changed = true;
  const created = doc.createNode(value);
  if (isNode(node)) keepComments(node, created);
  return created;
}

function sameScalar(written: unknown, value: unknown, placeholders: ResolveOptions | undefined): boolean {
  if (written === value) return true;
  if (typeof written !== 'string' || typeof value !== 'string' || !hasPlaceholder(written)) return false;
  const resolved = resolvePlaceholders(written, placeholders);
  return resolved.ok && resolved.value === value;
}

function keepComments(from: Node, to: Node): void {
  if (from.commentBefore) to.commentBefore = from.commentBefore;
  if (from.comment) to.comment = from.comment;
  if (from.spaceBefore) to.spaceBefore = from.spaceBefore;
}
