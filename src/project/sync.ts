import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { EventBus } from '../events/bus.ts';
import { applyBundle } from './apply.ts';
import type { Bundle } from './bundle.ts';
import { compactEndpoint, compactGroup } from './compact.ts';
import { endpointKey, groupKey } from './bundle.ts';
import { exportBundle } from './export.ts';
import { formatProblem, isDefinitionFileName, loadProject, type ProjectFile } from './files.ts';
import type { ProjectServices } from './services.ts';
import type { ProjectStatus } from './status.ts';
import { removeSpec, writeProject, writeSpec } from './write.ts';

/**
 * Keeps PROJECT_DIR and the store in step, both ways.
 *
 * | moment                         | direction     | what happens                                          |
 * |--------------------------------|---------------|-------------------------------------------------------|
 * | start, directory has files     | files → store | load, validate, apply with prune (files win)           |
 * | start, directory empty/missing | store → files | the store's definitions are written as files           |
 * | a file is added/changed/removed| files → store | debounced reconcile: load, validate, apply with prune  |
 * | the API changes a definition   | store → files | that definition's file is written (or removed)         |
 *
 * A directory with problems changes nothing: the last good state keeps serving and the problems
 * (file, line, message) are in the status. Writes made by this process are remembered by content
 * hash, so the watcher events they cause do not trigger a reconcile (no reload loop); changes made
 * by a reconcile are not written back (they came from the files).
 */
export interface ProjectSyncOptions {
  dir: string;
  services: ProjectServices;
  events: EventBus;
  status: ProjectStatus;
  /** Debounce of file events before a reconcile. */
  debounceMs?: number;
}

const DEFAULT_DEBOUNCE_MS = 100;
const TEMP_FILE = /(^|[/\\])(\.|#)|~$|\.sw[a-p]$|\.tmp$/;

export class ProjectSync {
  private readonly dir: string;
  private readonly options: ProjectSyncOptions;
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private queue: Promise<void> = Promise.resolve();
  private reconciling = false;
  private files = new Map<string, ProjectFile>();
  /** Content hashes of files this process wrote, by absolute path. */
  private readonly written = new Map<string, string>();
  private readonly unsubscribe: Array<() => void> = [];
  private closed = false;

  constructor(options: ProjectSyncOptions) {
    this.options = options;
    this.dir = resolve(options.dir);
  }

  /** Brings store and directory in step, then watches. */
  async start(): Promise<void> {
    const { services, status } = this.options;
    if (this.isEmpty()) {
      const bundle = await exportBundle(services);
      const compact = { groups: bundle.groups.map(compactGroup), endpoints: bundle.endpoints.map(compactEndpoint) };
      this.remember(() => writeProject(this.dir, compact, { handlers: 'file' }));
      this.files = loadProject(this.dir).files;
      services.logger.info(`project: ${this.dir} was empty; wrote ${bundle.endpoints.length} endpoints and ${bundle.groups.length} groups from the store`);
    } else {
      await this.reconcile();
    }
    this.subscribe();
    this.watcher = watch(this.dir, {
      ignoreInitial: true,
      ignored: (path: string) => TEMP_FILE.test(relative(this.dir, path)),
      // Editors save atomically (write a temp file, rename): wait until the file stops changing.
      awaitWriteFinish: { stabilityThreshold: 50, pollInterval: 10 },
    });
    this.watcher.on('all', (_event, path) => this.onFileEvent(path));
    await new Promise<void>((ready) => this.watcher?.once('ready', () => ready()));
    status.update({ watching: true });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    for (const off of this.unsubscribe.splice(0)) off();
    await this.watcher?.close();
    await this.queue;
    this.options.status.update({ watching: false });
  }

  /** Files → store: load, validate and apply the directory (serialised with write-backs). */
  reconcile(): Promise<void> {
    return this.enqueue(async () => {
      const { services, status } = this.options;
      const loaded = loadProject(this.dir);
      if (loaded.problems.length > 0) {
        for (const problem of loaded.problems) services.logger.warn(`project: ${formatProblem(problem)}`);
        status.update({ problems: loaded.problems, lastReconcile: { at: new Date().toISOString(), ok: false, summary: { create: 0, update: 0, delete: 0 }, error: `${loaded.problems.length} problem(s) in the project files; nothing was changed` } });
        return;
      }
      this.files = loaded.files;
      this.reconciling = true;
      try {
        const result = await applyBundle(services, loaded.bundle, { prune: true, dryRun: false });
        status.update({ problems: [], lastReconcile: { at: new Date().toISOString(), ok: true, summary: result.summary } });
        const { create, update, delete: removed } = result.summary;
        if (create + update + removed > 0) services.logger.info(`project: applied ${create} create, ${update} update, ${removed} delete from ${this.dir}`);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const details = (error as { details?: Array<{ field: string; message: string }> }).details ?? [];
        services.logger.warn(`project: the files could not be applied: ${message}`, { details });
        status.update({
          problems: details.map((d) => ({ path: d.field, message: d.message })),
          lastReconcile: { at: new Date().toISOString(), ok: false, summary: { create: 0, update: 0, delete: 0 }, error: message },
        });
      } finally {
        this.reconciling = false;
      }
    });
  }

  private isEmpty(): boolean {
    if (!existsSync(this.dir)) return true;
    return !['endpoints', 'groups'].some((sub) => {
      const path = join(this.dir, sub);
      return existsSync(path) && readdirSync(path).some(isDefinitionFileName);
    });
  }

  private onFileEvent(path: string): void {
    if (this.closed || this.isOwnWrite(path)) return;
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

  /** Store → files, for changes made through the API (not by a reconcile). */
  private subscribe(): void {
    const { events } = this.options;
    const later = (work: (bundle: Bundle) => void) => {
      if (this.reconciling || this.closed) return;
      void this.enqueue(async () => work(await exportBundle(this.options.services)));
    };
    const writeEndpoint = (bundle: Bundle, key: string) => {
      const spec = bundle.endpoints.find((e) => endpointKey(e) === key);
      if (spec) this.remember(() => writeSpec(this.dir, 'endpoint', compactEndpoint(spec), { files: this.files, handlers: 'file' }));
    };
    this.unsubscribe.push(
      events.on('endpoint.created', ({ path, method }) => later((bundle) => writeEndpoint(bundle, `${method} ${path}`))),
      events.on('endpoint.updated', ({ path, method, previousPath, previousMethod }) =>
        later((bundle) => {
          const previous = `${previousMethod} ${previousPath}`;
          if (previous !== `${method} ${path}`) this.remember(() => removeSpec(this.dir, 'endpoint', previous, { files: this.files }));
          writeEndpoint(bundle, `${method} ${path}`);
        }),
      ),
      events.on('endpoint.deleted', ({ path, method }) => later(() => this.remember(() => removeSpec(this.dir, 'endpoint', `${method} ${path}`, { files: this.files })))),
      events.on('endpointgroup.created', ({ name }) => later((bundle) => this.writeGroup(bundle, name))),
      events.on('endpointgroup.updated', ({ name, previousName }) =>
        later((bundle) => {
          if (groupKey({ name: previousName }) !== groupKey({ name })) {
            this.remember(() => removeSpec(this.dir, 'group', groupKey({ name: previousName }), { files: this.files }));
            // Endpoints name their group: a rename rewrites them too.
            for (const endpoint of bundle.endpoints.filter((e) => e.group === name)) writeEndpoint(bundle, endpointKey(endpoint));
          }
          this.writeGroup(bundle, name);
        }),
      ),
      events.on('endpointgroup.deleted', ({ name }) => later(() => this.remember(() => removeSpec(this.dir, 'group', groupKey({ name }), { files: this.files })))),
    );
  }

  private writeGroup(bundle: Bundle, name: string): void {
    const spec = bundle.groups.find((g) => groupKey(g) === groupKey({ name }));
    if (spec) this.remember(() => writeSpec(this.dir, 'group', compactGroup(spec), { files: this.files }));
  }

  /** Runs a write and records the content of every file it touched. */
  private remember(write: () => unknown): void {
    const before = snapshot(this.dir);
    try {
      write();
    } catch (error) {
      this.options.services.logger.warn(`project: could not write back to ${this.dir}: ${(error as Error).message}`);
    }
    const after = snapshot(this.dir);
    for (const [path, content] of after) if (before.get(path) !== content) this.written.set(path, content);
    for (const path of before.keys()) if (!after.has(path)) this.written.set(path, 'deleted');
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

/** Content hashes of the definition and handler files (small directories: read fully). */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const sub of ['endpoints', 'groups']) {
    const path = join(dir, sub);
    if (!existsSync(path)) continue;
    for (const name of readdirSync(path)) {
      if (TEMP_FILE.test(name)) continue;
      const file = resolve(path, name);
      try {
        out.set(file, hash(readFileSync(file)));
      } catch {
        // vanished meanwhile
      }
    }
  }
  return out;
}
