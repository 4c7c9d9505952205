import type { Store } from '../store/types.ts';

/**
 * Cross-instance cache invalidation. Anything cached in a process (settings, later the route
 * table) carries the revision it was built at; a write bumps the revision in the store, and
 * every instance compares before using its cache. On the embedded store the check is a
 * primary-key read (microseconds), so it runs on every use; on MongoDB it may be throttled
 * with REVISION_CHECK_MS, which bounds how stale another instance can be.
 */
interface RevisionDoc {
  _id: string;
  [key: string]: unknown;
  key: string;
  value: number;
}

export class Revisions {
  private readonly memo = new Map<string, { value: number; checkedAt: number }>();
  private readonly store: Store;
  private readonly checkIntervalMs: number;

  constructor(store: Store, checkIntervalMs: number) {
    this.store = store;
    this.checkIntervalMs = checkIntervalMs;
  }

  async current(key: string): Promise<number> {
    const memo = this.memo.get(key);
    const now = Date.now();
    if (memo && this.checkIntervalMs > 0 && now - memo.checkedAt < this.checkIntervalMs) return memo.value;
    const doc = await this.store.collection<RevisionDoc>('revisions').findOne({ key });
    const value = doc?.value ?? 0;
    this.memo.set(key, { value, checkedAt: now });
    return value;
  }

  async bump(key: string): Promise<number> {
    const doc = await this.store.collection<RevisionDoc>('revisions').updateOne({ key }, { $inc: { value: 1 } }, { upsert: true });
    const value = doc?.value ?? 0;
    this.memo.set(key, { value, checkedAt: Date.now() });
    return value;
  }
}
