import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { readSchema } from './schema-files.ts';
import type { Bundle } from './bundle.ts';
import { loadProject, projectFileKey, type ProjectFile } from './files.ts';
import { orderKeys } from './key-order.ts';
import { kindOf, KINDS, specsOf, type KindName, type Kind } from './kinds/index.ts';
import { removeResourceMethod, writeResourceMember } from './write-resource.ts';
import { handlerPath, isPlainObject, removeFile, schemaComment, WriteBatch, writeCode, writeYaml, type WriteOptions, type WriteResult } from './yaml-write.ts';

export { handlerPath, SCHEMA_LINE, schemaComment, TO_STRING, writeIfDifferent, writeYaml, type WriteOptions, type WriteRecorder, type WriteResult } from './yaml-write.ts';

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
export interface WriteProjectResult {
  written: string[];
  unchanged: string[];
  removed: string[];
}

/** Writes one definition: its existing file (found by natural key) updated in place, else a new file. Returns what it wrote. */
export function writeSpec(dir: string, kindName: KindName, spec: object, options: WriteOptions = {}): WriteResult {
  const kind = kindOf(kindName);
  const root = resolve(dir);
  const files = options.files ?? loadProject(dir, options).files;
  const key = kind.key(spec);
  const existing = files.get(projectFileKey(kind.kind, key));
  if (existing?.resource) {
    takenNames.delete(files);
    return writeResourceMember(dir, kind, existing, spec, { ...options, files });
  }
  const relPath = existing?.relPath ?? freeName(root, kind, spec, files);
  const value = { ...(spec as Record<string, unknown>) };

  let handlerFile: { relPath: string; code: unknown } | undefined;
  const codeField = kind.codeFile?.field;
  const codeHolder = codeField === undefined ? undefined : value[codeField];
  if (codeField !== undefined && isPlainObject(codeHolder)) {
    const { code, file, ...rest } = codeHolder;
    const ownFile = `./${basename(relPath).replace(/\.ya?ml$/, '')}${kind.codeFile?.suffix ?? '.js'}`;
    // Only code goes to a file (a cron job's http action has none, even if it once had a file).
    let ref =
      typeof file === 'string'
        ? file
        : typeof code !== 'string'
          ? undefined
          : (existing?.handlerFile?.ref ?? (options.handlers === 'file' && code !== '' ? ownFile : undefined));
    if (ref !== undefined && typeof file !== 'string' && typeof code === 'string' && sharedCodeChanges(root, files, existing, handlerPath(root, relPath, ref), code)) {
      // Another definition runs the code of this file too: changed code here goes to a file of
      // this definition's own (inline when that name is taken), or the other would change with it.
      const own = handlerPath(root, relPath, ownFile);
      ref = someValue(files, (other) => other.handlerFile?.relPath === own) || existsSync(join(root, own)) ? undefined : ownFile;
      if (ref === undefined) value[codeField] = { ...rest, code };
    }
    if (ref !== undefined) {
      value[codeField] = { ...rest, file: ref };
      handlerFile = { relPath: handlerPath(root, relPath, ref), code };
    }
  }

  const schema = readSchema(kind.schemaFile);
  const ordered = orderKeys(value, schema, schema);
  const yamlChanged = writeYaml(join(root, relPath), ordered, () => schemaComment(dir, relPath, kind), options.placeholders, options);
  let codeChanged = false;
  if (handlerFile && typeof handlerFile.code === 'string') {
    const abs = join(root, handlerFile.relPath);
    codeChanged = writeCode(abs, handlerFile.code, options) !== undefined;
  }
  takenNames.get(files)?.add(relPath, handlerFile?.relPath);
  const before = existing?.handlerFile?.relPath;

  files.set(projectFileKey(kind.kind, key), {
    kind: kind.kind,
    key,
    file: join(dir, relPath),
    relPath,
    ...(handlerFile ? { handlerFile: { ref: (value[codeField as string] as { file: string }).file, file: join(dir, handlerFile.relPath), relPath: handlerFile.relPath } } : {}),
  });
  // A handler file the definition no longer names (a cron job's action now http, code moved to a
  // file of its own) goes, unless another definition still names it.
  if (before !== undefined && before !== handlerFile?.relPath && !someValue(files, (other) => other.handlerFile?.relPath === before)) removeFile(join(root, before), 'handler', options);
  return { file: join(dir, relPath), relPath, changed: yamlChanged || codeChanged, ...(handlerFile ? { handlerFile: handlerFile.relPath } : {}) };
}

/** True when `code` would change a handler file that another definition's file also names. */
function sharedCodeChanges(root: string, files: Map<string, ProjectFile>, mine: ProjectFile | undefined, handler: string, code: string): boolean {
  if (!someValue(files, (other) => other !== mine && other.handlerFile?.relPath === handler)) return false;
  const abs = join(root, handler);
  // The loader drops a byte-order mark from the code it reads: so does the comparison.
  return !existsSync(abs) || readFileSync(abs, 'utf8').replace(/^\uFEFF/, '') !== code;
}

/** Deletes a definition's file, and its handler file when no other definition uses it. Returns the relPaths removed. */
export function removeSpec(dir: string, kindName: KindName, key: string, options: Pick<WriteOptions, 'files' | 'maxFileBytes' | 'record' | 'guard'> = {}): string[] {
  const root = resolve(dir);
  const files = options.files ?? loadProject(dir, options).files;
  const fileKey = projectFileKey(kindName, key);
  const entry = files.get(fileKey);
  if (!entry) return [];
  files.delete(fileKey);
  takenNames.delete(files);
  const removed: string[] = [];
  if (entry.resource && removeResourceMethod(join(root, entry.relPath), entry.resource.method, options)) {
    // Other methods remain in the file: only the method's own handler file may go.
  } else {
    removeFile(join(root, entry.relPath), 'yaml', options);
    removed.push(entry.relPath);
  }
  const handler = entry.handlerFile?.relPath;
  if (handler && !someValue(files, (other) => other.handlerFile?.relPath === handler)) {
    removeFile(join(root, handler), 'handler', options);
    removed.push(handler);
  }
  return removed;
}

/** The bundle's definitions per kind, in key order; throws when one key is there twice. */
function wantedSpecs(bundle: Bundle): Array<{ kind: Kind; key: string; spec: object }> {
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
  return wanted;
}

/**
 * The definitions in `dir` that the bundle does not hold, which writeProject would remove (a
 * caller that must not lose them without asking looks first): `kind key (file)` each.
 */
export function definitionsNotIn(dir: string, bundle: Bundle, options: Pick<WriteOptions, 'maxFileBytes'> = {}): string[] {
  if (!existsSync(dir)) return [];
  const keep = new Set(wantedSpecs(bundle).map((entry) => projectFileKey(entry.kind.kind, entry.key)));
  return [...loadProject(dir, options).files].filter(([fileKey]) => !keep.has(fileKey)).map(([, entry]) => `${entry.kind} ${entry.key} (${entry.relPath})`);
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
  const wanted = wantedSpecs(bundle);
  const keep = new Set(wanted.map((entry) => projectFileKey(entry.kind.kind, entry.key)));
  for (const [fileKey, entry] of [...files]) {
    if (!keep.has(fileKey)) result.removed.push(...removeSpec(dir, entry.kind, entry.key, { ...options, files }));
  }
  // Into a directory without definitions every file is new and none is read back meanwhile: written together.
  const batch = files.size === 0 ? new WriteBatch() : undefined;
  const byKey = new Map(wanted.map((entry) => [projectFileKey(entry.kind.kind, entry.key), entry.spec]));
  const writing = (kind: KindName, key: string): object | undefined => byKey.get(projectFileKey(kind, key));
  // A resource file holds several definitions: it is listed once, as written when any of them changed it.
  const written = new Set<string>();
  const unchanged = new Set<string>();
  try {
    for (const entry of wanted) {
      const one = writeSpec(dir, entry.kind.kind, entry.spec, { ...options, files, writing, ...(batch ? { batch } : {}) });
      if (one.changed) {
        written.add(one.relPath);
        unchanged.delete(one.relPath);
      } else if (!written.has(one.relPath)) {
        unchanged.add(one.relPath);
      }
    }
  } catch (error) {
    batch?.abort();
    throw error;
  }
  batch?.commit();
  result.written = [...written];
  result.unchanged = [...unchanged];
  return result;
}

/**
 * The names new files may not take, per files map (freeName), built once and kept up to date by
 * writeSpec; dropped when a removal or a resource file changes the map in other ways.
 */
class TakenNames {
  private readonly names = new Set<string>();

  constructor(files: Map<string, ProjectFile>) {
    for (const entry of files.values()) this.add(entry.relPath, entry.handlerFile?.relPath);
  }

  add(relPath: string, handler: string | undefined): void {
    this.names.add(relPath);
    if (handler !== undefined) this.names.add(handler);
  }

  has(relPath: string): boolean {
    return this.names.has(relPath);
  }
}

const takenNames = new WeakMap<Map<string, ProjectFile>, TakenNames>();

function someValue<V>(map: Map<string, V>, test: (value: V) => boolean): boolean {
  for (const value of map.values()) if (test(value)) return true;
  return false;
}

/** `<dir>/<fileName>`, or `<name>-2.yaml`, ... when another definition (or any file) has it. */
function freeName(root: string, kind: Kind, spec: object, files: Map<string, ProjectFile>): string {
  let taken = takenNames.get(files);
  if (!taken) {
    taken = new TakenNames(files);
    takenNames.set(files, taken);
  }
  const stem = kind.fileName(spec).replace(/\.yaml$/, '');
  for (let n = 1; ; n++) {
    const relPath = `${kind.dir}/${n === 1 ? stem : `${stem}-${n}`}.yaml`;
    const handler = relPath.replace(/\.yaml$/, kind.codeFile?.suffix ?? '.handler.js');
    if (!taken.has(relPath) && !taken.has(handler) && !existsSync(join(root, relPath)) && !existsSync(join(root, handler))) return relPath;
  }
}

