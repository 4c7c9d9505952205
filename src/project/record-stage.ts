// An import's records on their way into the store: written in batches to the `importrecords`
// staging collection while the request streams in (no read of records looks there), then moved
// into `endpointdatas` in one step when the import commits (Store.moveStaged), or deleted when it
// fails. Memory holds one batch, the set of paths seen and the owners named — never the records.
import { AppError, badRequest } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { DuplicateKeyError, type Store } from '../store/types.ts';
import type { StagedRow } from './data.ts';

const STAGING = 'importrecords';
const RECORDS = 'endpointdatas';
const COUNTERS = 'recordcounts';
export const STAGE_BATCH = 1000;
/** Stages older than this belong to an import whose process died: swept when the next import starts. */
const STALE_AFTER_MS = 24 * 60 * 60_000;

interface Pending {
  doc: Record<string, unknown>;
  /** Where the record came from, for errors: `line 12` or `data./api/x[3]`. */
  at: string;
}

export class RecordStage {
  readonly stageId = newId();
  /** Records staged so far (flushed or waiting). */
  count = 0;
  /** Collection paths the records go to, and those with an expiry (their counters need a recount). */
  readonly paths = new Set<string>();
  readonly expiring = new Set<string>();
  /** Owner keys the records name: translated to ids at commit. */
  readonly owners = new Set<string>();
  private pending: Pending[] = [];
  private readonly store: Store;
  private readonly mode: 'merge' | 'replace';

  /** `merge`: a record may overwrite the stored one with its id only on the same path (see `assertSamePaths`). */
  constructor(store: Store, mode: 'merge' | 'replace') {
    this.store = store;
    this.mode = mode;
  }

  /** Deletes stages left by imports whose process died (older than a day). */
  static async sweepStale(store: Store): Promise<void> {
    await store.collection(STAGING).deleteMany({ stagedAt: { $lt: new Date(Date.now() - STALE_AFTER_MS) } });
  }

  /** Adds a checked record; writes a batch when one is full (true then: progress to report). */
  async add(row: StagedRow, at: string): Promise<boolean> {
    const { _id, ownerKey, ...fields } = row;
    this.pending.push({ doc: { stageId: this.stageId, targetId: _id, stagedAt: new Date(), ...fields, endpointId: ownerKey }, at });
    this.count++;
    this.paths.add(row.resourcePath);
    if (row.expiresAt) this.expiring.add(row.resourcePath);
    if (ownerKey) this.owners.add(ownerKey);
    if (this.pending.length < STAGE_BATCH) return false;
    await this.flush();
    return true;
  }

  async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    if (this.mode === 'merge') await this.assertSamePaths(batch);
    try {
      await this.store.collection(STAGING).insertMany(batch.map((item) => item.doc));
    } catch (error) {
      if (error instanceof DuplicateKeyError) throw await this.repeated(batch);
      throw error;
    }
  }

  /**
   * Moves the stage into the records (replace: they become the only records) with owner keys
   * translated to the endpoints' ids, and recounts in the same step the totals of every path
   * written and every path that had one (replace empties some); returns how many records were written.
   */
  async commit(mode: 'merge' | 'replace', endpointIds: ReadonlyMap<string, string>): Promise<number> {
    await this.flush();
    const values = Object.fromEntries([...this.owners].map((key) => [key, endpointIds.get(key) ?? '']));
    const counted = (await this.store.collection(COUNTERS).find({})).map((counter) => counter.resourcePath as string);
    const recounts = [...new Set([...counted, ...this.paths])].map((resourcePath) => ({
      collection: COUNTERS,
      key: { resourcePath },
      field: 'count',
      of: { collection: RECORDS, filter: { resourcePath } },
    }));
    try {
      return await this.store.moveStaged({ from: STAGING, stageId: this.stageId, to: RECORDS, replace: mode === 'replace', remap: { field: 'endpointId', values }, recounts });
    } catch (error) {
      throw uniqueClash(error);
    }
  }

  /** Deletes whatever is staged (after a failure, or a commit: then nothing is left). */
  async discard(): Promise<void> {
    this.pending = [];
    await this.store.collection(STAGING).deleteMany({ stageId: this.stageId });
  }

  /**
   * A merged record overwrites the stored record with its id, which must be a record of the same
   * path: else the import would silently take a record away from a path the bundle never named
   * (and from whatever refers to it there). A 400 naming both paths instead; nothing is written.
   * One indexed lookup per path in the batch, and nothing read when no id clashes.
   */
  private async assertSamePaths(batch: Pending[]): Promise<void> {
    const byPath = new Map<string, Pending[]>();
    for (const item of batch) {
      const path = item.doc.resourcePath as string;
      const items = byPath.get(path);
      if (items) items.push(item);
      else byPath.set(path, [item]);
    }
    for (const [path, items] of byPath) {
      const [clash] = await this.store.collection(RECORDS).find({ _id: { $in: items.map((item) => item.doc.targetId as string) }, resourcePath: { $ne: path } }, { limit: 1 });
      if (!clash) continue;
      const item = items.find((candidate) => candidate.doc.targetId === clash._id) ?? items[0];
      const field = item?.at.startsWith('line ') ? `${item.at}: record._id` : `${item?.at ?? 'a record'}._id`;
      const message = `is the id of a record of ${String(clash.resourcePath)}; an import cannot move it to ${path}`;
      throw badRequest(`Invalid bundle: ${field} ${message}`, [{ field, message }]);
    }
  }

  /** The 400 for a batch refused as a duplicate: the first record whose id came before (in this batch or an earlier one). */
  private async repeated(batch: Pending[]): Promise<Error> {
    const seen = new Set<string>();
    for (const item of batch) {
      const id = item.doc.targetId as string;
      if (seen.has(id)) return repeats(item.at, id);
      seen.add(id);
    }
    const earlier = await this.store.collection(STAGING).find({ stageId: this.stageId, targetId: { $in: [...seen] } }, { limit: 1 });
    const id = earlier[0]?.targetId as string | undefined;
    const item = batch.find((candidate) => candidate.doc.targetId === id) ?? batch[0];
    return repeats(item?.at ?? 'a record', id ?? '');
  }
}

function repeats(at: string, id: string): Error {
  const field = at.startsWith('line ') ? `${at}: record._id` : `${at}._id`;
  return badRequest(`Invalid bundle: ${field} repeats the id ${id}`, [{ field, message: `repeats the id ${id}` }]);
}

/**
 * A record the move refused for a unique field: a 409 naming the field and the path (the store
 * does not say which records clash: two in the bundle, or one in it and one kept in the store).
 */
function uniqueClash(error: unknown): unknown {
  if (!(error instanceof DuplicateKeyError) || error.collection !== RECORDS || !error.scope) return error;
  const field = (error.fields[0] ?? '').replace(/^data\./, '');
  const message = `${field} must be unique on ${error.scope}: two records of the import, or one of it and one kept in the store, have the same ${field}`;
  return new AppError(409, `Import refused: ${message}; nothing was imported`, { details: [{ field: `data[${error.scope}].${field}`, message: 'must be unique' }] });
}
