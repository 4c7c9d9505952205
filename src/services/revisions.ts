import type { Store } from '../store/types.ts';

/**
 * Cross-instance cache invalidation. Anything cached in a process (settings, the route table)
 * carries the revision it was built at; a write bumps the revision in the store, and every
 * instance compares before using its cache. On the embedded store the check costs a
 * `PRAGMA data_version` (has any other connection written?) and a read only when one has; on
 * MongoDB it is an indexed read, which REVISION_CHECK_MS (default 0: none) may let a process skip
 * for that long, bounding how stale another instance can be.
 */
interface RevisionDoc {
  _id: string;
  [key: string]: unknown;
  key: string;
  value: number;
}

export class Revisions {
  private readonly memo = new Map<string, { value: number; checkedAt: number; foreign: number | null }>();
  private foreign: { value: number | null; at: number } | null = null;
  private readonly store: Store;
  private readonly checkIntervalMs: number;

  constructor(store: Store, checkIntervalMs: number) {
    this.store = store;
    this.checkIntervalMs = checkIntervalMs;
  }

  async current(key: string): Promise<number> {
    return this.known(key) ?? this.read(key);
  }

  /**
   * The revision when it is known without reading the store (nobody else wrote since it was
   * read), else null: lets hot paths skip an await when nothing changed.
   */
  known(key: string): number | null {
    const memo = this.memo.get(key);
    if (!memo) return null;
    // Our own bumps update the memo directly; the store says whether anyone else wrote since.
    const foreign = this.foreignVersion();
    if (foreign !== null && memo.foreign === foreign) return memo.value;
    if (foreign === null && this.checkIntervalMs > 0 && Date.now() - memo.checkedAt < this.checkIntervalMs) return memo.value;
    return null;
  }

  /**
   * The newest revision this instance has read or written for the key, without a check: revisions
   * only grow, so the current one is at least this. Null before the first read.
   */
  atLeast(key: string): number | null {
    return this.memo.get(key)?.value ?? null;
  }

  private async read(key: string): Promise<number> {
    const now = Date.now();
    const foreign = this.foreignVersion();
    const doc = await this.store.collection<RevisionDoc>('revisions').findOne({ key });
    const value = doc?.value ?? 0;
    this.memo.set(key, { value, checkedAt: now, foreign });
    return value;
  }

  /** One check of the store's foreign-write version serves every lookup within a millisecond. */
  private foreignVersion(): number | null {
    const now = performance.now();
    if (this.foreign && now - this.foreign.at < 1) return this.foreign.value;
    const value = this.store.foreignWriteVersion();
    this.foreign = { value, at: now };
    return value;
  }

  async bump(key: string): Promise<number> {
    const doc = await this.store.collection<RevisionDoc>('revisions').updateOne({ key }, { $inc: { value: 1 } }, { upsert: true });
    const value = doc?.value ?? 0;
    this.foreign = null;
    this.memo.set(key, { value, checkedAt: Date.now(), foreign: this.foreignVersion() });
    return value;
  }
}
