// Write-back into resource files (resource-file.ts): a method changed through the API is folded
// back into its file — shared fields stay shared while the methods agree, a field one method no
// longer shares becomes that method's own (`methods: {POST: {accessType: group}}`) — and a method
// deleted through the API leaves the `methods` list. The file stays one file.
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { isMap, isScalar, isSeq, parseDocument } from 'yaml';
import { loadProject, type ProjectFile } from './files.ts';
import { orderKeys } from './key-order.ts';
import type { Kind } from './kinds/index.ts';
import type { NormalEndpoint } from './normalize.ts';
import { resolvePlaceholders } from './placeholders.ts';
import { expandResource, foldResource } from './resource-file.ts';
import { readSchema } from './schema-files.ts';
import { handlerPath, readKeepingBom, removeFile, schemaComment, SCHEMA_LINE, TO_STRING, writeCode, writeIfDifferent, writeYaml, type FileWriteOptions, type WriteOptions, type WriteResult } from './yaml-write.ts';
import { PARSE_OPTIONS, parseYaml } from './yaml-source.ts';

const RESOURCE_SCHEMA = 'resource.schema.json';

type Raw = Record<string, unknown>;
const isPlainObject = (value: unknown): value is Raw => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Writes one method's definition into the resource file that holds it. */
export function writeResourceMember(dir: string, kind: Kind, existing: ProjectFile, spec: object, options: WriteOptions & { files: Map<string, ProjectFile> }): WriteResult {
  const root = resolve(dir);
  const abs = join(root, existing.relPath);
  const handlersBefore = new Set<string>();
  for (const entry of options.files.values()) if (entry.relPath === existing.relPath && entry.handlerFile) handlersBefore.add(entry.handlerFile.relPath);
  const parsed = parseYaml(readFileSync(abs, 'utf8').replace(/^\uFEFF/, ''));
  const expanded = isPlainObject(parsed.value) ? expandResource(parsed.value) : undefined;
  if (!isPlainObject(parsed.value) || !expanded || expanded.problems.length > 0) throw new Error(`${existing.relPath} cannot be read as a resource file; fix it before its methods are written back`);
  const raw = parsed.value;
  const method = (spec as { method: string }).method;
  const members = expanded.members;
  // The methods as the file has them, handler files read: what the file's shared values mean.
  const before = new Map<string, NormalEndpoint>();
  for (const member of members) before.set(member.method, kind.normalize(withHandlerCode(root, existing.relPath, member.spec)) as NormalEndpoint);
  const changed = keepPlaceholders(kind.normalize(spec) as NormalEndpoint, before.get(method), options);
  const after = members
    .map((member) => {
      if (member.method === method) return changed;
      const writing = options.writing?.(kind.kind, kind.key(member.spec));
      return writing ? keepPlaceholders(kind.normalize(writing) as NormalEndpoint, before.get(member.method), options) : before.get(member.method);
    })
    .filter((value) => value !== undefined);
  const folded = foldResource(raw, before, after);

  const stem = basename(existing.relPath).replace(/\.ya?ml$/, '');
  const places: Array<{ value: Raw; old: unknown; suffix: string }> = [{ value: folded, old: raw.handler, suffix: '' }];
  if (isPlainObject(folded.methods)) {
    for (const [name, overrides] of Object.entries(folded.methods)) {
      const old = isPlainObject(raw.methods) && isPlainObject(raw.methods[name]) ? raw.methods[name].handler : undefined;
      places.push({ value: overrides as Raw, old, suffix: `-${name.toLowerCase()}` });
    }
  }
  // A method whose handler differs from the shared one in other fields (disabled) but runs the
  // same code names the same file, rather than a copy that would stop following it.
  const sharedRef = isPlainObject(raw.handler) && typeof raw.handler.file === 'string' ? raw.handler.file : undefined;
  let codeChanged = false;
  for (const place of places) codeChanged = handlerToFile(root, existing.relPath, place, stem, options, place.suffix === '' ? undefined : sharedRef) || codeChanged;

  const schema = readSchema(kind.schemaFile);
  const { methods, ...shared } = folded;
  const ordered = Object.entries(orderKeys(shared, schema, schema) as Raw);
  const at = ordered.findIndex(([key]) => key === 'path') + 1;
  ordered.splice(at, 0, ['methods', isPlainObject(methods) ? Object.fromEntries(Object.entries(methods).map(([name, overrides]) => [name, orderKeys(overrides, schema, schema)])) : methods]);
  const yamlChanged = writeYaml(abs, Object.fromEntries(ordered), () => schemaComment(dir, existing.relPath, kind, RESOURCE_SCHEMA), options.placeholders, options);

  // Handler files may have moved between the shared field and a method's own: read the file's
  // entries anew (that file only: reading every file per method written made a write-back of n
  // methods read n × all files).
  for (const [key, entry] of loadProject(dir, { ...(options.maxFileBytes !== undefined ? { maxFileBytes: options.maxFileBytes } : {}), only: existing.relPath, checks: 'never' }).files) {
    if (entry.relPath === existing.relPath) options.files.set(key, entry);
  }
  // A method's own handler file its code no longer needs (the methods agree again, the code is
  // shared): it goes, unless a definition still names it.
  for (const handler of handlersBefore) {
    if (!namesHandler(options.files, handler)) removeFile(join(root, handler), 'handler', options);
  }
  return { file: join(dir, existing.relPath), relPath: existing.relPath, changed: yamlChanged || codeChanged };
}

/**
 * Takes a method out of its resource file. Returns false when it was the last one: the caller
 * deletes the file.
 */
export function removeResourceMethod(abs: string, method: string, io: FileWriteOptions = {}): boolean {
  const { raw, old = '', bom } = readKeepingBom(abs);
  const schemaLine = SCHEMA_LINE.exec(old)?.[0] ?? '';
  const doc = parseDocument(old.slice(schemaLine.length), PARSE_OPTIONS);
  if (doc.errors.length > 0 || !isMap(doc.contents)) throw new Error(`${abs} cannot be read as a resource file; ${method} was not taken out of it`);
  const methods = doc.contents.get('methods', true);
  let left = 0;
  if (isSeq(methods)) {
    methods.items = methods.items.filter((item) => !(isScalar(item) && item.value === method));
    left = methods.items.length;
  } else if (isMap(methods)) {
    methods.items = methods.items.filter((pair) => !(isScalar(pair.key) && pair.key.value === method));
    left = methods.items.length;
  }
  if (left === 0) return false;
  const text = `${bom}${schemaLine}${doc.toString(TO_STRING)}`;
  if (writeIfDifferent(abs, text, raw, io)) io.record?.({ abs, text, file: 'yaml' });
  return true;
}

/** `handler: {enabled, file}` → `{enabled, code}` with the file's text (an unreadable file: no code). */
function withHandlerCode(root: string, relPath: string, spec: Raw): Raw {
  const handler = spec.handler;
  if (!isPlainObject(handler) || typeof handler.file !== 'string') return spec;
  const { file, ...rest } = handler;
  let code = '';
  try {
    code = readFileSync(join(root, handlerPath(root, relPath, file)), 'utf8').replace(/^\uFEFF/, '');
  } catch {
    // Left to the loader, which reports it.
  }
  return { ...spec, handler: { ...rest, code } };
}

/** A value from the store equal to what a placeholder in the file resolves to keeps the placeholder. */
function keepPlaceholders(spec: NormalEndpoint, before: NormalEndpoint | undefined, options: WriteOptions): NormalEndpoint {
  if (!before) return spec;
  const out = { ...spec } as Raw;
  for (const [field, value] of Object.entries(before)) {
    const resolved = resolvePlaceholders(value, options.placeholders);
    if (resolved.ok && !isDeepStrictEqual(value, out[field]) && isDeepStrictEqual(resolved.value, out[field])) out[field] = value;
  }
  return out as unknown as NormalEndpoint;
}

/**
 * A handler where the file had one in a .js file keeps it there (the new code written into it);
 * a new one goes to `<file>[-<method>].handler.js` when handlers are kept in files. Changed code
 * of a .js file that a definition of another file names too goes to that new name (inline when
 * it is taken), or the other definition would change with it. Returns whether a handler file changed.
 */
function handlerToFile(root: string, relPath: string, place: { value: Raw; old: unknown; suffix: string }, stem: string, options: WriteOptions & { files: Map<string, ProjectFile> }, sharedRef?: string): boolean {
  const handler = place.value.handler;
  if (!isPlainObject(handler) || typeof handler.code !== 'string') return false;
  const { code, ...rest } = handler as Raw & { code: string };
  const ownRef = `./${stem}${place.suffix}.handler.js`;
  let ref = isPlainObject(place.old) && typeof place.old.file === 'string' ? place.old.file : undefined;
  if (ref !== undefined && sharedWithAnotherFile(root, relPath, handlerPath(root, relPath, ref), code, options.files)) {
    const own = handlerPath(root, relPath, ownRef);
    ref = namesHandler(options.files, own) || existsSync(join(root, own)) ? undefined : ownRef;
    if (ref === undefined) return false;
  }
  if (ref === undefined && sharedRef !== undefined && readKeepingBom(join(root, handlerPath(root, relPath, sharedRef))).old === code) ref = sharedRef;
  ref ??= options.handlers === 'file' && code !== '' ? ownRef : undefined;
  if (ref === undefined) return false;
  place.value.handler = { ...rest, file: ref };
  return writeCode(join(root, handlerPath(root, relPath, ref)), code, options) !== undefined;
}

/** True when `code` would change a handler file that a definition outside the resource file also names. */
function sharedWithAnotherFile(root: string, relPath: string, handler: string, code: string, files: Map<string, ProjectFile>): boolean {
  let shared = false;
  for (const other of files.values()) if (other.relPath !== relPath && other.handlerFile?.relPath === handler) shared = true;
  return shared && readKeepingBom(join(root, handler)).old !== code;
}

function namesHandler(files: Map<string, ProjectFile>, handler: string): boolean {
  for (const other of files.values()) if (other.handlerFile?.relPath === handler) return true;
  return false;
}
