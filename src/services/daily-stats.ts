// Per-day counters behind the dashboard (`dailystats`: one document per UTC day and metric).
// Calls add to an in-memory tally that is written every FLUSH_MS (and on shutdown) as one
// `$inc` upsert per (day, metric) touched, so counting never costs a write per request, and the
// dashboard reads a handful of small documents instead of scanning the audit log. Counters are
// kept whatever `auditApiCalls` says.
import { DuplicateKeyError, type Store } from '../store/types.ts';

/** Where a dynamic-endpoint call came from (the engine request's `source`). */
export const TRAFFIC_SOURCES = ['http', 'mcp', 'cron', 'test'] as const;
export type TrafficSource = (typeof TRAFFIC_SOURCES)[number];

/**
 * Every metric kept. `requests`/`errors` and `source.*` are counted by the engine, `logins` by
 * the auth service; automation calls `bump('cronRuns')`, `bump('cronFailures')`,
 * `bump('webhookDeliveries')` and `bump('webhookErrors')`.
 */
export const METRICS = ['requests', 'errors', 'logins', 'webhookDeliveries', 'webhookErrors', 'cronRuns', 'cronFailures', ...TRAFFIC_SOURCES.map((s) => `source.${s}` as const)] as const;
export type Metric = (typeof METRICS)[number];

/** The metrics countRequest adds to, in the order of its tally. */
const TALLIED: readonly Metric[] = ['requests', 'errors', ...TRAFFIC_SOURCES.map((s) => `source.${s}` as const)];
const REQUESTS = 0;
const ERRORS = 1;
const SOURCE_SLOT = Object.fromEntries(TRAFFIC_SOURCES.map((s, i) => [s, 2 + i])) as Record<TrafficSource, number>;

interface DailyDoc {
  _id: string;
  [key: string]: unknown;
  day: string;
  metric: string;
  count: number;
}

const FLUSH_MS = 1000;
const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of a moment, in UTC. */
export function utcDay(at: Date | number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** The `count` days ending with the day of `now`, oldest first. */
export function lastDays(count: number, now = Date.now()): string[] {
  return Array.from({ length: count }, (_, i) => utcDay(now - (count - 1 - i) * DAY_MS));
}

export class DailyStats {
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  // Today's key prefix, recomputed only when the clock passes midnight UTC (bump is per request).
  private today = '';
  private todayEnds = 0;
  /** Today's `day|metric` keys, so a bump builds no string. */
  private keys = new Map<string, string>();
  // countRequest runs on every request, so it adds to plain numbers (TALLIED order) for the day
  // that ends at tallyEnds; they join `pending` when that day is over, at a flush, or for a read.
  private readonly tally = new Float64Array(TALLIED.length);
  private tallyEnds = 0;
  private readonly store: Store;
  private readonly onError: (error: unknown) => void;
  private readonly clock: () => number;

  constructor(store: Store, onError: (error: unknown) => void, clock: () => number = Date.now) {
    this.store = store;
    this.onError = onError;
    this.clock = clock;
  }

  /** Adds `n` to today's counter of `metric` (in memory; written within FLUSH_MS). */
  bump(metric: Metric, n = 1): void {
    if (!Number.isFinite(n) || n === 0) return;
    this.add(this.keyOf(metric, this.clock()), n);
  }

  private keyOf(metric: Metric, now: number): string {
    if (now >= this.todayEnds || now < this.todayEnds - DAY_MS) {
      this.today = utcDay(now);
      this.todayEnds = (Math.floor(now / DAY_MS) + 1) * DAY_MS;
      this.keys = new Map();
    }
    let key = this.keys.get(metric);
    if (key === undefined) {
      key = `${this.today}|${metric}`;
      this.keys.set(metric, key);
    }
    return key;
  }

  private add(key: string, n: number): void {
    this.pending.set(key, (this.pending.get(key) ?? 0) + n);
    if (!this.timer) this.schedule();
  }

  private schedule(): void {
    this.timer = setTimeout(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  /** One served dynamic-endpoint call: requests, errors (status ≥ 400) and traffic by source. */
  countRequest(source: TrafficSource, status: number): void {
    const now = this.clock();
    if (now >= this.tallyEnds || now < this.tallyEnds - DAY_MS) {
      this.foldTally();
      this.tallyEnds = (Math.floor(now / DAY_MS) + 1) * DAY_MS;
    }
    const tally = this.tally;
    tally[REQUESTS] = (tally[REQUESTS] as number) + 1;
    tally[SOURCE_SLOT[source]] = (tally[SOURCE_SLOT[source]] as number) + 1;
    if (status >= 400) tally[ERRORS] = (tally[ERRORS] as number) + 1;
    if (!this.timer) this.schedule();
  }

  /** Moves the request tallies into `pending`, under the day they were counted on. */
  private foldTally(): void {
    const day = utcDay(this.tallyEnds - DAY_MS);
    for (let slot = 0; slot < TALLIED.length; slot++) {
      const count = this.tally[slot] as number;
      if (count === 0) continue;
      const key = `${day}|${TALLIED[slot]}`;
      this.pending.set(key, (this.pending.get(key) ?? 0) + count);
      this.tally[slot] = 0;
    }
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.foldTally();
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.flushing.then(async () => {
      for (const [key, by] of batch) {
        const [day, metric] = key.split('|') as [string, string];
        try {
          await this.increment(day, metric, by);
        } catch (error) {
          this.onError(error);
        }
      }
    });
    return this.flushing;
  }

  /**
   * Removes the counters of days before the last `days` days (kept as long as the audit log;
   * the dashboard shows seven). Returns how many documents went.
   */
  purgeOlderThan(days: number): Promise<number> {
    const oldestKept = utcDay(this.clock() - (Math.max(days, 7) - 1) * DAY_MS);
    return this.store.collection<DailyDoc>('dailystats').deleteMany({ day: { $lt: oldestKept } });
  }

  /**
   * Daily series of the given metrics over the last `days` UTC days, oldest first, zero-filled.
   * Counts not yet flushed by this instance are included, so a figure is current here at once.
   */
  async series<M extends string>(metrics: readonly M[], days: number): Promise<{ days: string[]; values: Record<M, number[]> }> {
    const range = lastDays(days, this.clock());
    const index = new Map(range.map((day, i) => [day, i]));
    const values = Object.fromEntries(metrics.map((m) => [m, range.map(() => 0)])) as Record<M, number[]>;
    const add = (day: string, metric: string, count: number): void => {
      const i = index.get(day);
      const row = (values as Record<string, number[] | undefined>)[metric];
      if (i !== undefined && row && Object.hasOwn(values, metric)) row[i] = (row[i] ?? 0) + count;
    };
    const docs = await this.store.collection<DailyDoc>('dailystats').find({ day: { $in: range }, metric: { $in: [...metrics] } });
    for (const doc of docs) add(doc.day, doc.metric, typeof doc.count === 'number' ? doc.count : 0);
    this.foldTally();
    for (const [key, count] of this.pending) {
      const [day, metric] = key.split('|') as [string, string];
      add(day, metric, count);
    }
    return { days: range, values };
  }

  private async increment(day: string, metric: string, by: number): Promise<void> {
    const collection = this.store.collection<DailyDoc>('dailystats');
    try {
      await collection.updateOne({ day, metric }, { $inc: { count: by } }, { upsert: true });
    } catch (error) {
      // Another instance created the same day's document first: it exists now, add to it.
      if (!(error instanceof DuplicateKeyError)) throw error;
      await collection.updateOne({ day, metric }, { $inc: { count: by } });
    }
  }
}
