// The primitives of write-back: atomic file writes, YAML updated in place (comments, quoting and
// key order kept), the schema comment line, handler paths. write.ts writes definitions with them,
// and write-resource.ts folds resource files with them.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { Document, isMap, isNode, isScalar, isSeq, parseDocument, type Node } from 'yaml';
import type { LoadOptions, ProjectFile } from './files.ts';
import type { Kind, KindName } from './kinds/index.ts';
import { hasPlaceholder, resolvePlaceholders, type ResolveOptions } from './placeholders.ts';
import { readSchema, SCHEMAS_DIR } from './schema-files.ts';
import { PARSE_OPTIONS } from './yaml-source.ts';

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
  /**
   * Told of every file written or removed: a new YAML file with the value it holds (so it need
   * not be parsed back), a merged one, a handler file's text. The sync knows its own writes only from this.
   */
  record?: WriteRecorder;
  /** Files are written to their temp files only, and put in place together by the batch's commit (see WriteBatch). */
  batch?: WriteBatch;
  /**
   * Asked before a file is read to be changed and again right before the new text replaces it
   * (or it is removed), with its text then (undefined: no file): throws ChangedMeanwhile when
   * someone else changed it since the caller read the directory, and nothing more is written.
   */
  guard?: WriteGuard;
}

/** How the primitives below write: told to `record`, in a `batch`, checked by `guard`. */
export type FileWriteOptions = Pick<WriteOptions, 'record' | 'batch' | 'guard'>;

export type WriteGuard = (abs: string, text: string | undefined) => void;

/** A write-back found a file changed by someone else since the directory was read (WriteOptions.guard). */
export class ChangedMeanwhile extends Error {
  readonly abs: string;

  constructor(abs: string) {
    super(`${abs} changed while it was being written back; it is left as it is now`);
    this.abs = abs;
  }
}

const readIfExists = (abs: string): string | undefined => (existsSync(abs) ? readFileSync(abs, 'utf8') : undefined);

/**
 * `text`: the file's text as written (a byte-order mark included), null when the file was
 * removed; `value`: a new YAML file's value (it reads back as that); absent when it must be
 * parsed to be known.
 */
export type WriteRecorder = (written: { abs: string; text: string | null; file: 'yaml' | 'handler'; value?: unknown }) => void;

/** Removes a file (gone already is fine) and tells the recorder. */
export function removeFile(abs: string, file: 'yaml' | 'handler', io: FileWriteOptions = {}): void {
  if (!existsSync(abs)) return;
  io.guard?.(abs, readIfExists(abs));
  rmSync(abs, { force: true });
  io.record?.({ abs, text: null, file });
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

/**
 * Long lines are not folded (a folded line is a needless diff when a value changes); flow
 * collections are written `[cm, in]`, as people write them.
 */
export const TO_STRING = { lineWidth: 0, flowCollectionPadding: false } as const;
export const SCHEMA_LINE = /^#\s*yaml-language-server:\s*\$schema=\S*[^\S\n]*(?:\r?\n|$)/;

export const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
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

/** A handler file named in a YAML file: relative to it, inside the project. */
export function handlerPath(root: string, relPath: string, ref: string): string {
  const abs = resolve(root, dirname(relPath), ref);
  if (isAbsolute(ref) || !isInside(root, abs)) throw new Error(`handler.file ${ref} of ${relPath} must be a relative path inside the project directory`);
  return toPosix(relative(root, abs));
}

const BOM = '\uFEFF';

/**
 * A file's text without its byte-order mark, and the mark (or ''): an editor that saved one gets
 * it back when the file is rewritten, so a write-back is not a whole-file diff.
 */
export function readKeepingBom(abs: string): { raw: string | undefined; old: string | undefined; bom: string } {
  const raw = existsSync(abs) ? readFileSync(abs, 'utf8') : undefined;
  const bom = raw?.startsWith(BOM) ? BOM : '';
  return { raw, old: raw?.slice(bom.length), bom };
}

/**
 * A handler file's code, written when it differs from what the file holds (its byte-order mark
 * kept). Returns the text written, or undefined when the file already held the code.
 */
export function writeCode(abs: string, code: string, io: FileWriteOptions = {}): string | undefined {
  const { raw, bom } = readKeepingBom(abs);
  const text = `${bom}${code}`;
  if (!writeIfDifferent(abs, text, raw, io)) return undefined;
  io.record?.({ abs, text, file: 'handler' });
  return text;
}

/** Returns whether the file changed. */
export function writeYaml(abs: string, value: unknown, header: () => string, placeholders: ResolveOptions | undefined, io: FileWriteOptions = {}): boolean {
  const { raw, old, bom } = readKeepingBom(abs);
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
      // A file saved with CRLF (an editor on Windows) keeps them: a write-back is not a whole-file diff.
      if (old.includes('\r\n')) text = text.replace(/\r?\n/g, '\r\n');
    }
  }
  if (text !== undefined) {
    text = `${bom}${text}`;
    const changed = writeIfDifferent(abs, text, raw, io);
    // Merged into an existing file: what it holds now is known by parsing it back (a load does).
    if (changed) io.record?.({ abs, text, file: 'yaml' });
    return changed;
  }
  text = `${bom}${header()}\n${new Document(value).toString(TO_STRING)}`;
  const changed = writeIfDifferent(abs, text, raw, io);
  // A new document: its YAML reads back as the value written (JSON values; undefined left out).
  if (changed) io.record?.({ abs, text, file: 'yaml', value: JSON.parse(JSON.stringify(value)) as unknown });
  return changed;
}

/**
 * Writes `text` unless the file holds it already (`old`: its text as the caller read it). With a
 * guard, `old` is checked first, and the file once more right before the rename: flushing the
 * new text takes milliseconds, and an editor's save landing meanwhile is not replaced.
 */
export function writeIfDifferent(abs: string, text: string, old = readIfExists(abs), io: Pick<FileWriteOptions, 'batch' | 'guard'> = {}): boolean {
  if (old === text) return false;
  io.guard?.(abs, old);
  if (io.batch) {
    io.batch.write(abs, text);
    return true;
  }
  mkdirSync(dirname(abs), { recursive: true });
  const temp = tempName(abs);
  try {
    writeFileSync(temp, text, { flag: 'wx', flush: true });
    io.guard?.(abs, readIfExists(abs));
    renameSync(temp, abs);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  return true;
}

/** A dotfile beside the target: the loader and the watcher ignore it while it exists. */
const tempName = (abs: string): string => join(dirname(abs), `.${basename(abs)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);

/**
 * Many new files written at once (a project written into an empty directory): each is written
 * to its temp file, then all are flushed, renamed into place and their directories flushed.
 * Flushing each file before the next is written costs a journal commit per file (~2 ms: 20 s at
 * 10,000 files); flushed together, the first commit carries nearly all of them. No file ever
 * appears under its name half-written. Only for files nobody reads before the commit: a
 * batched file is not on disk under its name until then.
 */
export class WriteBatch {
  private readonly pending: Array<{ temp: string; abs: string }> = [];

  write(abs: string, text: string): void {
    mkdirSync(dirname(abs), { recursive: true });
    const temp = tempName(abs);
    this.pending.push({ temp, abs });
    writeFileSync(temp, text, { flag: 'wx' });
  }

  commit(): void {
    const first = this.pending[0];
    if (first === undefined) return;
    try {
      if (!syncFileSystem(first.temp)) for (const { temp } of this.pending) flush(temp);
      for (const { temp, abs } of this.pending) renameSync(temp, abs);
    } catch (error) {
      this.abort();
      throw error;
    }
    const dirs = new Set(this.pending.map(({ abs }) => dirname(abs)));
    this.pending.length = 0;
    if (!syncFileSystem(first.abs)) for (const dir of dirs) flush(dir);
  }

  /** Removes the temp files not yet renamed. */
  abort(): void {
    for (const { temp } of this.pending.splice(0)) rmSync(temp, { force: true });
  }
}

/**
 * syncfs(2) on the filesystem holding `path` (`sync -f`, GNU coreutils and BusyBox on Linux):
 * every file written so far is on disk after one call, where an fsync per file costs a device
 * flush each (measured here: 3,000 files in 60 ms instead of 3 s). Node has no syncfs, hence the
 * command. False when it is not available or fails: the caller then flushes file by file.
 */
function syncFileSystem(path: string): boolean {
  if (process.platform !== 'linux') return false;
  const result = spawnSync('sync', ['-f', path], { stdio: 'ignore', timeout: 120_000 });
  return result.status === 0;
}

function flush(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
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
    // The file's keys stay in the file's order (a rewrite for one changed value does not move
    // untouched lines); a key it did not have goes after the one before it in `value`'s order.
    const keyOf = (pair: (typeof node.items)[number]): string | undefined => (isScalar(pair.key) ? String(pair.key.value) : undefined);
    const items = node.items.filter((pair) => {
      const key = keyOf(pair);
      return key !== undefined && Object.hasOwn(value, key);
    });
    if (items.length !== node.items.length) state.changed = true;
    for (const pair of items) pair.value = merge(doc, pair.value, value[keyOf(pair) as string], state) as typeof pair.value;
    let previous: string | undefined;
    for (const [key, item] of Object.entries(value)) {
      if (!items.some((pair) => keyOf(pair) === key)) {
        state.changed = true;
        const at = previous === undefined ? 0 : items.findIndex((pair) => keyOf(pair) === previous) + 1;
        items.splice(at, 0, doc.createPair(key, item));
      }
      previous = key;
    }
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
