import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import { PROJECT_SYNC_ACTOR } from '../model/actor.ts';
import { applyBundle } from './apply.ts';
import type { Bundle } from './bundle.ts';
import { isEmptyBundle } from './bundle-shape.ts';
import { diffBundles } from './diff.ts';
import { bundleOf, kindList, kindOf, KINDS, specsOf } from './kinds/index.ts';
import { exportBundle, secretDigestKey, secretDigests } from './export.ts';
import { formatProblem, hashText, isDefinitionFileName, loadProject, projectFileKey, type LoadedProject, type ProjectFile, type SourceCache, type SourceFile } from './files.ts';
import { DEFAULT_PLACEHOLDER_POLICY, resolvePlaceholders } from './placeholders.ts';
import { allUserGroups, type ProjectServices } from './services.ts';
import type { ProjectStatus } from './status.ts';
import { readSyncCache, writeSyncCache } from './sync-cache.ts';
import { removeSpec, writeProject, writeSpec, type WriteRecorder } from './write.ts';
import { ChangedMeanwhile, type WriteGuard } from './yaml-write.ts';

/**
 * Keeps PROJECT_DIR and the store in step, both ways.
 *
 * | moment                         | direction     | what happens                                          |
 * |--------------------------------|---------------|-------------------------------------------------------|
 * | start, directory has files     | files → store | load, validate, apply with prune (files win)           |
 * | start, directory empty/missing | store → files | the store's definitions are written as files           |
 * | start, a kind's dir missing    | store → files | that kind's definitions are written first (adopted)   |
 * | a file is added/changed/removed| files → store | debounced reconcile: load, validate, apply with prune  |
 * | the store's definitions change | store → files | the changed definitions' files are written / removed   |
 *
 * Store changes are noticed through the store revisions (`endpoints`, `cronjobs`, `webhooks`), which every instance bumps, so a
 * change made through the API of *any* instance on this store is written back by the one that
 * watches. What was last in step is kept (`synced`); a write-back writes the difference between it
 * and the store, except for a definition whose file changed since (edited, moved or deleted): the
 * file wins and the reconcile applies it. A directory with problems changes nothing: the last good state keeps serving, the
 * problems (file, line, message) are in the status, and write-backs wait until it is fixed (so an
 * edit in progress is never overwritten). Writes made by this process are remembered by content
 * hash, so the watcher events they cause do not trigger a reconcile (no reload loop). Changes
 * applied from the files are audited as made by `project-sync` (PROJECT_SYNC_ACTOR).
 *
 * Scale: each in-step moment (after a reconcile that changed nothing, a write-back, filling an
 * empty directory) is remembered in `cacheFile` (sync-cache.ts): every file's content hash and
 * parsed value, and the store's revision. A file whose hash is unchanged is never parsed again,
 * and a start where every file and the store are as they were then applies nothing: it costs a
 * read and a hash of each file instead of a parse, a check and an apply of the whole project.
 */
export interface ProjectSyncOptions {
  dir: string;
  services: ProjectServices;
  status: ProjectStatus;
  /** The store's revision of the project kinds (changes whenever any instance changes a definition). */
  storeRevision: () => Promise<number>;
  /** Debounce of file events before a reconcile. */
  debounceMs?: number;
  /** How often the store revision is checked for write-back. */
  pollMs?: number;
  /** Where the last in-step state is kept between runs (DATA_DIR/project-sync-cache.json). None: every start parses and applies every file. */
  cacheFile?: string;
}

const DEFAULT_DEBOUNCE_MS = 100;
const DEFAULT_POLL_MS = 200;
const TEMP_FILE = /(^|[/\\])(\.|#)|~$|\.sw[a-p]$|\.tmp$/;

export class ProjectSync {
  private readonly dir: string;
  private readonly options: ProjectSyncOptions;
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private queue: Promise<void> = Promise.resolve();
  private poller: NodeJS.Timeout | null = null;
  private polling = false;
  private files = new Map<string, ProjectFile>();
  /** What the last load without problems read: unchanged files are not parsed (or checked) again. */
  private sources: SourceCache | undefined;
  /** The definitions as last known to be the same in the files and the store. */
  private synced: Bundle | null = null;
  /** The stored credentials' digests when `synced` was last in step with the store (export.ts, secretDigests). */
  private syncedSecrets: Map<string, string> | null = null;
  private syncedRevision = -1;
  /**
   * The store revision at which the files could not be brought in step (they have problems, or
   * applying them failed): polls wait for the next store change instead of trying again every
   * poll (a file event still reconciles at once). -1: none.
   */
  private stuckRevision = -1;
  /** The last reconcile found problems (or failed to apply): the next good one says so in the log. */
  private troubled = false;
  /** Content hashes of files this process wrote, by absolute path. */
  private readonly written = new Map<string, string>();
  private closed = false;

  constructor(options: ProjectSyncOptions) {
    this.options = options;
    this.dir = resolve(options.dir);
  }

  /** Brings store and directory in step, then watches. */
  async start(): Promise<void> {
    const { services, status } = this.options;
    if (this.isEmpty()) {
      const revision = await this.options.storeRevision();
      const bundle = await exportBundle(services);
      const compact = bundleOf((kind) => specsOf(bundle, kind).map((spec) => kind.compact(spec)));
      const recorded = this.remember((record) => writeProject(this.dir, compact, { handlers: 'file', record }));
      // What was written is known: read back without parsing (or checking) it again.
      const loaded = loadProject(this.dir, { cache: recorded.sources, checks: 'ifChanged' });
      this.files = loaded.files;
      this.synced = bundle;
      this.syncedSecrets = await secretDigests(services);
      this.syncedRevision = revision;
      if (loaded.problems.length === 0) {
        this.sources = loaded.sources;
        await this.saveCache(loaded, revision);
      }
      services.logger.info(`project: ${this.dir} was empty; wrote ${kindList((kind) => `${specsOf(bundle, kind).length} ${kind.bundleKey}`)} from the store`);
    } else {
      await this.adoptNewKinds();
      const resumed = await this.resume();
      if (resumed !== true) await this.reconcile(resumed ?? undefined);
    }
    this.poller = setInterval(() => void this.poll(), this.options.pollMs ?? DEFAULT_POLL_MS);
    this.poller.unref();
    this.watcher = watch(this.dir, {
      ignoreInitial: true,
      ignored: (path: string) => TEMP_FILE.test(relative(this.dir, path)),
      // Editors save atomically (write a temp file, rename): wait until the file stops changing.
      awaitWriteFinish: { stabilityThreshold: 50, pollInterval: 10 },
    });
    // A new directory holds nothing yet; its files bring their own events.
    this.watcher.on('all', (event, path) => {
      if (event !== 'addDir') this.onFileEvent(path);
    });
    await new Promise<void>((ready) => this.watcher?.once('ready', () => ready()));
    status.update({ watching: true });
  }

  /**
   * A kind whose directory the project does not have yet (a directory from before cron jobs were
   * project definitions) would have all its definitions deleted by the prune of the first
   * reconcile: they are written to files first, so the store's jobs become part of the project.
   */
  private async adoptNewKinds(): Promise<void> {
    const missing = KINDS.filter((kind) => !existsSync(join(this.dir, kind.dir)));
    if (missing.length === 0) return;
    const bundle = await exportBundle(this.options.services);
    for (const kind of missing) {
      const specs = specsOf(bundle, kind);
      if (specs.length === 0) continue;
      this.remember((record) => {
        for (const spec of specs) writeSpec(this.dir, kind.kind, kind.compact(spec), { handlers: 'file', record });
      });
      this.options.services.logger.info(`project: ${this.dir} had no ${kind.dir}/ directory; wrote the store's ${specs.length} ${kind.bundleKey} there`);
    }
  }

  /**
   * Start with the state of the last run: when every file is the one the cache holds and the
   * store is as it was then (same store, same revision, same user groups and placeholder values),
   * files and store are still in step and there is nothing to apply. Returns whether that is so;
   * otherwise the cache still spares parsing the unchanged files, and the directory as it was
   * read (when it was) is returned for the reconcile that follows, which need not read it again.
   */
  private async resume(): Promise<true | LoadedProject | null> {
    const { services, status } = this.options;
    const cache = this.options.cacheFile === undefined ? null : readSyncCache(this.options.cacheFile);
    if (cache === null) return null;
    this.sources = cache.sources;
    const revision = await this.options.storeRevision();
    if (revision !== cache.state.revision || (await this.storeIdentity()) !== cache.state.store) return null;
    // Unchanged files were checked when the cache was made: only changed ones are checked here,
    // as the reconcile would check them.
    const loaded = loadProject(this.dir, { cache: cache.sources, checks: 'ifChanged' });
    if (!loaded.unchanged || loaded.problems.length > 0) return loaded;
    if ((await this.contextDigest(loaded.bundle)) !== cache.state.context) return loaded;
    this.files = loaded.files;
    this.sources = loaded.sources;
    this.synced = loaded.bundle;
    this.syncedSecrets = await secretDigests(services);
    this.syncedRevision = revision;
    status.update({ problems: [], lastReconcile: { at: new Date().toISOString(), ok: true, summary: { create: 0, update: 0, delete: 0 } } });
    services.logger.info(`project: ${this.dir} is as it was at the last sync (${loaded.sources.files.size} files) and so is the store; nothing to apply`);
    return true;
  }

  /**
   * Which store this is: the ids of its revision documents, made once per store. A different
   * database at the same revision numbers has other ids.
   */
  private async storeIdentity(): Promise<string> {
    const docs = await this.options.services.store.collection<{ _id: string; key: string }>('revisions').find({});
    return hashText(docs.map((doc) => `${doc.key}=${doc._id}`).sort().join('\n'));
  }

  /**
   * What an apply of unchanged files depends on besides the store's definitions: the user groups
   * their names resolve to, the placeholder policy, and the values their placeholders resolve to
   * now (a changed environment variable is applied at the next start, as without the cache).
   */
  private async contextDigest(bundle: Bundle): Promise<string> {
    const { services } = this.options;
    const groups = (await allUserGroups(services.groups)).map((group) => `${group._id}=${group.name}`).sort();
    const resolved: unknown[] = [];
    for (const kind of KINDS) {
      for (const spec of specsOf(bundle, kind)) {
        if (!JSON.stringify(spec).includes('${')) continue;
        const result = resolvePlaceholders(spec);
        resolved.push([kind.kind, kind.key(spec), result.ok ? result.value : null]);
      }
    }
    return hashText(JSON.stringify([groups, services.placeholderPolicy ?? DEFAULT_PLACEHOLDER_POLICY, resolved]));
  }

  /** Remembers an in-step state for the next start. A failure only costs that start time. */
  private async saveCache(loaded: LoadedProject, revision: number): Promise<void> {
    const file = this.options.cacheFile;
    if (file === undefined) return;
    try {
      writeSyncCache(file, { state: { revision, store: await this.storeIdentity(), context: await this.contextDigest(loaded.bundle) }, sources: loaded.sources });
    } catch (error) {
      this.options.services.logger.warn(`project: could not save ${file}: ${(error as Error).message}`);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.poller) clearInterval(this.poller);
    await this.watcher?.close();
    await this.queue;
    this.options.status.update({ watching: false });
  }

  /**
   * Files → store: load, validate and apply the directory (serialised with write-backs).
   * `preloaded`: the directory as just read and checked by the caller, with nothing in between.
   */
  reconcile(preloaded?: LoadedProject): Promise<void> {
    return this.enqueue(async () => {
      const { services, status } = this.options;
      // Store changes not yet in the files go there first: otherwise applying the files with
      // prune would undo them (a three-way merge: each side's changes since the last sync win).
      let wroteBack = false;
      if (this.synced !== null && (await this.options.storeRevision()) !== this.syncedRevision) {
        await this.writeBack();
        wroteBack = true;
      }
      const before = await this.options.storeRevision();
      // What the caller read is stale once a write-back may have changed the files.
      const loaded = preloaded && !wroteBack ? preloaded : loadProject(this.dir, { cache: this.sources, checks: 'ifChanged' });
      if (loaded.problems.length > 0) {
        this.troubled = true;
        this.stuckRevision = before;
        for (const problem of loaded.problems) services.logger.warn(`project: ${formatProblem(problem)}`);
        status.update({ problems: loaded.problems, lastReconcile: { at: new Date().toISOString(), ok: false, summary: { create: 0, update: 0, delete: 0 }, error: `${loaded.problems.length} problem(s) in the project files; nothing was changed` } });
        return;
      }
      try {
        const result = await applyBundle(services, loaded.bundle, { prune: true, dryRun: false, actor: PROJECT_SYNC_ACTOR });
        // Only an applied load is what the files are compared with: after a failed one, a file
        // deleted or edited since the last good state still counts as changed (never written over).
        this.files = loaded.files;
        this.synced = loaded.bundle;
        this.syncedSecrets = await secretDigests(services);
        this.sources = loaded.sources;
        const after = await this.options.storeRevision();
        if (result.changes.length === 0 && after === before) {
          // Nothing to apply and nobody wrote meanwhile: files and store are in step at this revision.
          this.syncedRevision = after;
          await this.saveCache(loaded, after);
        } else {
          // The files are what is in step now; the next poll writes back anything the store has
          // beyond them (an API change that raced this reconcile).
          this.syncedRevision = -1;
        }
        this.stuckRevision = -1;
        status.update({ problems: [], lastReconcile: { at: new Date().toISOString(), ok: true, summary: result.summary } });
        const { create, update, delete: removed } = result.summary;
        // Whoever watched the warnings go by needs to see them end too.
        if (this.troubled) services.logger.info(`project: the problems in ${this.dir} are fixed; the files are applied again`);
        this.troubled = false;
        if (create + update + removed > 0) services.logger.info(`project: applied ${create} create, ${update} update, ${removed} delete from ${this.dir}`);
      } catch (error) {
        this.troubled = true;
        this.stuckRevision = before;
        const message = error instanceof Error ? error.message : String(error);
        const details = (error as { details?: Array<{ field: string; message: string }> }).details ?? [];
        services.logger.warn(`project: the files could not be applied: ${message}`, { details });
        status.update({
          problems: details.map((d) => ({ path: d.field, message: d.message })),
          lastReconcile: { at: new Date().toISOString(), ok: false, summary: { create: 0, update: 0, delete: 0 }, error: message },
        });
      }
    });
  }

  private isEmpty(): boolean {
    if (!existsSync(this.dir)) return true;
    return !KINDS.some((kind) => {
      const path = join(this.dir, kind.dir);
      return existsSync(path) && readdirSync(path).some(isDefinitionFileName);
    });
  }

  private onFileEvent(path: string): void {
    if (this.closed || this.isOwnWrite(path)) return;
    this.scheduleReconcile();
  }

  /** A reconcile after the debounce (a later file event moves it on). */
  private scheduleReconcile(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.reconcile();
    }, this.options.debounceMs ?? DEFAULT_DEBOUNCE_MS);
  }

  private isOwnWrite(path: string): boolean {
    const abs = resolve(path);
    const expected = this.written.get(abs);
    if (expected === undefined) return false;
    const actual = existsSync(abs) ? hash(readFileSync(abs)) : 'deleted';
    if (actual === expected) return true;
    // Changed by someone else since: forget the write, so that restoring its exact bytes later
    // (`git checkout`, an editor's undo) is a change like any other.
    this.written.delete(abs);
    return false;
  }

  private async poll(): Promise<void> {
    if (this.polling || this.closed || this.synced === null) return;
    this.polling = true;
    try {
      const revision = await this.options.storeRevision();
      if (revision === this.syncedRevision || revision === this.stuckRevision) return;
      let filesChanged = false;
      await this.enqueue(async () => {
        filesChanged = await this.writeBack();
      });
      // Files changed since the last sync kept their content: applying them is what brings the
      // store in step. Their watcher events normally do that; this does not rely on it (one
      // debounced reconcile either way: a pending one is left to run, a later event moves it on).
      if (filesChanged && !this.closed && this.timer === null) this.scheduleReconcile();
    } catch (error) {
      this.options.services.logger.warn('project: could not check the store for changes', { error });
    } finally {
      this.polling = false;
    }
  }

  /**
   * Store → files: writes the definitions that differ from the last in-step state, except those
   * whose file changed since then (the file wins: the reconcile applies it). Returns whether any
   * file changed since the last sync; then the in-step state is left as it was, so those files
   * stay "changed" (never overwritten) until a reconcile applies them.
   */
  private async writeBack(): Promise<boolean> {
    if (this.closed || this.synced === null) return false;
    const { services } = this.options;
    const loaded = loadProject(this.dir, { cache: this.sources, checks: 'ifChanged' });
    // An edit in progress: wait until the files are valid (the fix's file event reconciles). A
    // directory emptied of the definitions it had is refused (it would delete every one): writing
    // one back would turn that refusal into deleting all the others.
    if (loaded.problems.length > 0 || (isEmptyBundle(loaded.bundle) && !isEmptyBundle(this.synced))) {
      this.stuckRevision = await this.options.storeRevision();
      return false;
    }
    const edited = this.changedFiles(loaded);
    if (edited.size === 0) this.files = loaded.files;
    const revision = await this.options.storeRevision();
    const current = await exportBundle(services);
    const secrets = await secretDigests(services);
    const changes = diffBundles(this.synced, current, { prune: true });
    // A credential changed in the store reads `(secret)` before and after: its digest tells.
    for (const kind of KINDS) {
      if (!kind.secrets) continue;
      for (const spec of specsOf(current, kind)) {
        const key = kind.key(spec);
        const before = this.syncedSecrets?.get(secretDigestKey(kind.kind, key));
        if (before === undefined || before === secrets.get(secretDigestKey(kind.kind, key))) continue;
        if (!changes.some((change) => change.kind === kind.kind && change.key === key)) changes.push({ kind: kind.kind, key, action: 'update' });
      }
    }
    // What this write-back wrote, by absolute path: a file that holds neither that nor what the
    // load read was saved by someone meanwhile.
    const ours = new Map<string, string>();
    for (const change of changes) {
      const kind = kindOf(change.kind);
      const fileKey = projectFileKey(change.kind, change.key);
      // Changed in its file too since the last sync (or while the store was read): the file's side
      // wins, it is not overwritten.
      if (edited.has(fileKey)) continue;
      if (!this.asRead(loaded, fileKey, ours)) {
        edited.add(fileKey);
        continue;
      }
      const guard = this.guardFor(loaded, ours);
      if (change.action === 'delete') {
        if (this.remember((record) => removeSpec(this.dir, change.kind, change.key, { files: loaded.files, record, guard }), ours).interrupted) edited.add(fileKey);
        continue;
      }
      const stored = specsOf(current, kind).find((candidate) => kind.key(candidate) === change.key);
      if (!stored) continue;
      // A write-only field the store exports without (a webhook secret set through the API) keeps
      // what its file says (its placeholder): it is not written back, and a change of it alone
      // writes the file as it is.
      const inFile = specsOf(loaded.bundle, kind).find((candidate) => kind.key(candidate) === change.key) as Record<string, unknown> | undefined;
      const kept = kind.fields.filter((field) => field.writeOnly && (stored as Record<string, unknown>)[field.name] === undefined && inFile?.[field.name] !== undefined);
      const spec = kept.length === 0 ? stored : { ...stored, ...Object.fromEntries(kept.map((field) => [field.name, inFile?.[field.name]])) };
      const writing = (kindName: string, key: string): object | undefined => {
        const other = kindOf(kindName);
        return specsOf(current, other).find((candidate) => other.key(candidate) === key);
      };
      if (this.remember((record) => writeSpec(this.dir, change.kind, kind.compact(spec), { files: loaded.files, handlers: 'file', writing, record, guard }), ours).interrupted) edited.add(fileKey);
    }
    // The reconcile that follows applies the changed files and records the in-step state.
    if (edited.size > 0) return true;
    this.synced = current;
    this.syncedSecrets = secrets;
    this.syncedRevision = revision;
    // The files now hold the store's state: only what changed since the load is parsed (and
    // checked: a file saved meanwhile by someone else is not known to be valid).
    const written = changes.length === 0 ? loaded : loadProject(this.dir, { cache: loaded.sources, checks: 'ifChanged' });
    if (written.problems.length > 0) return false;
    this.files = written.files;
    this.sources = written.sources;
    await this.saveCache(written, revision);
    return false;
  }

  /**
   * The definitions (projectFileKey) whose file differs from what the last sync read or wrote:
   * edited (its YAML or handler file), renamed, deleted, or new. Without a last sync's sources, none.
   */
  private changedFiles(loaded: LoadedProject): Set<string> {
    const changed = new Set<string>();
    const before = this.sources;
    if (before === undefined) return changed;
    const same = (was: ProjectFile, now: ProjectFile | undefined): boolean =>
      now !== undefined &&
      now.relPath === was.relPath &&
      before.files.get(was.relPath)?.hash === loaded.sources.files.get(now.relPath)?.hash &&
      now.handlerFile?.relPath === was.handlerFile?.relPath &&
      (was.handlerFile === undefined || before.handlers.get(was.handlerFile.relPath) === loaded.sources.handlers.get(was.handlerFile.relPath));
    for (const [key, was] of this.files) if (!same(was, loaded.files.get(key))) changed.add(key);
    for (const key of loaded.files.keys()) if (!this.files.has(key)) changed.add(key);
    return changed;
  }

  /**
   * Whether a definition's files (YAML and handler) still hold what `loaded` read, or what this
   * write-back wrote into them since (`ours`): an edit saved while the store was read is not
   * written over. A definition without a file yet gets a new one (a free name): nothing to lose.
   */
  private asRead(loaded: LoadedProject, fileKey: string, ours: ReadonlyMap<string, string>): boolean {
    const entry = loaded.files.get(fileKey);
    if (entry === undefined) return true;
    const same = (relPath: string): boolean => {
      const abs = resolve(this.dir, relPath);
      return this.holdsAsRead(loaded, ours, abs, existsSync(abs) ? readFileSync(abs, 'utf8') : undefined);
    };
    return same(entry.relPath) && (entry.handlerFile === undefined || same(entry.handlerFile.relPath));
  }

  /**
   * The write guard of a write-back (WriteOptions.guard): a file changes only while it holds what
   * the load read or this write-back wrote; else someone saved it meanwhile (ChangedMeanwhile).
   */
  private guardFor(loaded: LoadedProject, ours: ReadonlyMap<string, string>): WriteGuard {
    return (abs, text) => {
      if (!this.holdsAsRead(loaded, ours, resolve(abs), text)) throw new ChangedMeanwhile(abs);
    };
  }

  /** Whether `text` (undefined: no file) is what `loaded` read at `abs`, or what this write-back wrote there (`ours`); true for a file the load did not read. */
  private holdsAsRead(loaded: LoadedProject, ours: ReadonlyMap<string, string>, abs: string, text: string | undefined): boolean {
    const own = ours.get(abs);
    if (own !== undefined) return own === (text === undefined ? 'deleted' : hashText(text));
    const relPath = relative(this.dir, abs).split(sep).join('/');
    const read = loaded.sources.files.get(relPath)?.hash ?? loaded.sources.handlers.get(relPath);
    // A file the load did not read (a new file's name, a stray file no definition names) is
    // written as before: nobody's edit of a definition is in it.
    return read === undefined || (text !== undefined && read === hashText(text.replace(/^\uFEFF/, '')));
  }

  /**
   * Runs a write and remembers the content of every file it wrote or removed (as the write tells
   * it, never by looking at the directory: a file someone else saved meanwhile is theirs, and
   * its watcher event must bring a reconcile). `ours` collects them too. Returns what was written.
   */
  private remember(write: (record: WriteRecorder) => unknown, ours?: Map<string, string>): SourceRecorder {
    // `ours` learns each write as it happens: a write may change one file twice (the guard asks).
    const recorded = new SourceRecorder(this.dir, ours);
    try {
      write(recorded.record);
    } catch (error) {
      // Someone's save won (the file wins): its watcher event brings the reconcile that applies it.
      if (error instanceof ChangedMeanwhile) {
        recorded.interrupted = true;
        this.options.services.logger.info(`project: ${relative(this.dir, error.abs)} was saved while the server wrote a change back into it; the saved file wins`);
      } else this.options.services.logger.warn(`project: could not write back to ${this.dir}: ${(error as Error).message}`);
    }
    for (const [path, content] of recorded.hashes) this.written.set(path, content);
    return recorded;
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    const next = this.queue.then(work, work).catch((error: unknown) => {
      this.options.services.logger.error('project sync failed', { error });
    });
    this.queue = next;
    return next;
  }
}

function hash(content: Buffer | string): string {
  return createHash('sha256').update(content).digest('hex');
}

/** What a write told it wrote (WriteRecorder), as a load's cache and as content hashes by absolute path. */
class SourceRecorder {
  readonly sources = { files: new Map<string, SourceFile>(), handlers: new Map<string, string>() };
  readonly hashes = new Map<string, string>();
  /** The write stopped at a file someone else changed meanwhile (ChangedMeanwhile). */
  interrupted = false;
  private readonly dir: string;
  private readonly also: Map<string, string> | undefined;

  /** `also`: another map told each content hash as it is recorded. */
  constructor(dir: string, also?: Map<string, string>) {
    this.dir = dir;
    this.also = also;
  }

  private setHash(abs: string, content: string): void {
    const path = resolve(abs);
    this.hashes.set(path, content);
    this.also?.set(path, content);
  }

  readonly record: WriteRecorder = ({ abs, text, file, value }) => {
    const relPath = relative(this.dir, abs).split(sep).join('/');
    if (text === null) {
      this.setHash(abs, 'deleted');
      this.sources.handlers.delete(relPath);
      this.sources.files.delete(relPath);
      return;
    }
    this.setHash(abs, hashText(text));
    // The loader hashes a file's text without its byte-order mark.
    const digest = hashText(text.replace(/^\uFEFF/, ''));
    if (file === 'handler') this.sources.handlers.set(relPath, digest);
    else if (value !== undefined) this.sources.files.set(relPath, { hash: digest, value });
    // Merged into an existing file: its value is known by parsing it back.
    else this.sources.files.delete(relPath);
  };
}
