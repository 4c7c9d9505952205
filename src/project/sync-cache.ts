import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { SourceCache, SourceFile } from './files.ts';

/**
 * What the file sync last knew to be in step, kept between runs in DATA_DIR (never in the
 * project directory, which is the user's): each YAML file's content hash and parsed value, each
 * handler file's hash, and the store's state at that moment. A start reads and hashes every
 * file (cheap) instead of parsing it (about 1 ms a file): files whose hash matches are not
 * parsed, and when every file matches and the store has not changed since, there is nothing to
 * apply at all.
 *
 * It is only a cache: missing, unreadable, from another dyn version or for another store, it is
 * ignored and every file is parsed and applied as without it. Content hashes, not sizes and
 * times, decide what changed, so an edit with the same size and mtime is still seen.
 */
export const SYNC_CACHE_FILE = 'project-sync-cache.json';

/** Bumped when the cache's meaning changes; another format is ignored. */
const FORMAT = 1;
/** Another dyn version may read or check files differently: its cache is ignored. src/ and dist/ are both two levels below package.json. */
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export interface SyncState {
  /** The store's project revision (the sum ProjectSync watches) when files and store were in step. */
  revision: number;
  /** Which store that was (see ProjectSync: a different database has different revision ids). */
  store: string;
  /** What else the apply depends on (user group names, placeholder policy and values), as a digest. */
  context: string;
}

export interface SyncCache {
  state: SyncState;
  sources: SourceCache;
}

interface CacheJson {
  format: number;
  version: string;
  state: SyncState;
  files: Array<[relPath: string, hash: string, value: unknown]>;
  handlers: Array<[relPath: string, hash: string]>;
}

/** The cache in `file`, or null when there is none usable (missing, corrupt, another format or version). */
export function readSyncCache(file: string): SyncCache | null {
  let json: CacheJson;
  try {
    json = JSON.parse(readFileSync(file, 'utf8')) as CacheJson;
  } catch {
    return null;
  }
  if (json?.format !== FORMAT || json.version !== VERSION || !isState(json.state) || !Array.isArray(json.files) || !Array.isArray(json.handlers)) return null;
  const files = new Map<string, SourceFile>();
  for (const entry of json.files) {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string' || typeof entry[1] !== 'string') return null;
    files.set(entry[0], { hash: entry[1], value: entry[2] });
  }
  const handlers = new Map<string, string>();
  for (const entry of json.handlers) {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string' || typeof entry[1] !== 'string') return null;
    handlers.set(entry[0], entry[1]);
  }
  return { state: json.state, sources: { files, handlers } };
}

/** Writes the cache atomically (temp file, rename). Not fsynced: losing it only costs a slower start. */
export function writeSyncCache(file: string, cache: SyncCache): void {
  const json: CacheJson = {
    format: FORMAT,
    version: VERSION,
    state: cache.state,
    files: [...cache.sources.files].map(([relPath, source]) => [relPath, source.hash, source.value]),
    handlers: [...cache.sources.handlers],
  };
  mkdirSync(dirname(file), { recursive: true });
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    writeFileSync(temp, JSON.stringify(json));
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

export function removeSyncCache(file: string): void {
  rmSync(file, { force: true });
}

function isState(value: unknown): value is SyncState {
  const state = value as SyncState | null;
  return typeof state === 'object' && state !== null && typeof state.revision === 'number' && typeof state.store === 'string' && typeof state.context === 'string';
}
