import type { Logger } from '../lib/logger.ts';
import type { Actor } from '../model/actor.ts';
import { principalUserId } from '../model/principal.ts';
import type { LogDoc } from '../model/records.ts';
import type { Filter, FlatValue, Page, Store } from '../store/types.ts';

/**
 * The audit log (`logs` collection). Management actions are written before the response is
 * sent (`record`); high-volume entries (api_key_used now, api_call later) are buffered
 * (`enqueue`) and flushed every FLUSH_MS, when the buffer fills, and on shutdown.
 */
export interface AuditEntry {
  action: string;
  message: string;
  source: string;
  /** Who called a dynamic endpoint: http, test, mcp or cron (endpoint calls only). */
  via?: string;
  ip?: string | null;
  userId?: string | null;
  method?: string | null;
  path?: string | null;
  statusCode?: number | null;
}

export interface LogQuery {
  page: number;
  limit: number;
  action?: string;
  search?: string;
  /** Entries created at or after this time. */
  from?: Date;
  /** Entries created before this time. */
  to?: Date;
}

const FLUSH_MS = 500;
const MAX_BUFFER = 1000;
/** Batches that may wait for the store's writer before the next is written by the caller (flush). */
const MAX_WAITING_BATCHES = 4;
/**
 * A buffered entry's members, in the order a stored entry has them (toDoc's): the buffer holds
 * these values per entry, primitives only (`createdAt` as epoch milliseconds), and the store
 * makes the documents when it writes them (the embedded store on its append worker).
 */
const BUFFERED_FIELDS = ['action', 'message', 'source', 'via', 'ip', 'userId', 'method', 'path', 'statusCode', 'createdAt'] as const;
const BUFFERED_DATES = ['createdAt'] as const;
const MAX_MESSAGE = 2000;
const SEARCH_FIELDS = ['message', 'action', 'source', 'ip'] as const;

export class AuditLog {
  /** Entries waiting for the next flush, BUFFERED_FIELDS.length values each. */
  private buffer: FlatValue[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  /** Batches in `flushing` not yet written (see flush). */
  private waiting = 0;
  private readonly store: Store;
  private readonly logger: Logger;

  constructor(store: Store, logger: Logger) {
    this.store = store;
    this.logger = logger;
  }

  /** The stored entry; `via` only when given (two literal shapes rather than a spread). */
  private toDoc(entry: AuditEntry): Omit<LogDoc, '_id'> {
    const message = clip(entry.message);
    return entry.via
      ? { action: entry.action, message, source: entry.source, via: entry.via, ip: entry.ip ?? null, userId: entry.userId ?? null, method: entry.method ?? null, path: entry.path ?? null, statusCode: entry.statusCode ?? null, createdAt: new Date() }
      : { action: entry.action, message, source: entry.source, ip: entry.ip ?? null, userId: entry.userId ?? null, method: entry.method ?? null, path: entry.path ?? null, statusCode: entry.statusCode ?? null, createdAt: new Date() };
  }

  async record(entry: AuditEntry): Promise<void> {
    await this.store.collection<LogDoc>('logs').insertOne(this.toDoc(entry));
  }

  /**
   * A change made by a service, for `actor`: an API caller's entry carries its user and request
   * (and `statusCode`, what the API answers for such a change); a change the platform makes for
   * nobody on the line (the project file sync) is named by the actor's `source` instead of `source`.
   * A caller's entry is written before its response; the platform's own are buffered like
   * `api_call` (no response waits for them, and a file sync stays as quick as before).
   */
  async change(actor: Actor, entry: { action: string; message: string; source: string; statusCode?: number }): Promise<void> {
    const principal = actor.principal ?? undefined;
    const userId = principalUserId(principal);
    // A key has no user to name: the message names the key (by id too, as names may repeat).
    const message = principal?.kind === 'apiKey' ? `${entry.message} by API key "${principal.name}" (${principal.keyId})` : entry.message;
    if (!actor.request) {
      this.enqueue({ action: entry.action, message, source: actor.source ?? entry.source, userId });
      return;
    }
    await this.record({ action: entry.action, message, source: entry.source, userId, ...actor.request, statusCode: entry.statusCode ?? 200 });
  }

  /** Buffers the entry (written within FLUSH_MS): the members toDoc would give it, as values. */
  enqueue(entry: AuditEntry): void {
    this.buffer.push(entry.action, clip(entry.message), entry.source, entry.via || undefined, entry.ip ?? null, entry.userId ?? null, entry.method ?? null, entry.path ?? null, entry.statusCode ?? null, Date.now());
    if (this.buffer.length >= MAX_BUFFER * BUFFERED_FIELDS.length) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  /**
   * Hands the buffered entries to the store; resolves once they and every batch before them are
   * written. Batches are written one after another, so they wait in memory while the store's
   * writer is behind: the embedded store's append worker runs at the lowest CPU priority, and
   * on busy cores it may get little. Past MAX_WAITING_BATCHES, a batch is written by this thread
   * at once instead (`inline`), which bounds what waits and slows the requests that made it.
   */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length === 0) return this.flushing;
    if (this.waiting >= MAX_WAITING_BATCHES) {
      const written = this.write(batch, true);
      this.flushing = Promise.all([this.flushing, written]).then(() => undefined);
      return this.flushing;
    }
    this.waiting++;
    this.flushing = this.flushing.then(async () => {
      await this.write(batch, false);
      this.waiting--;
    });
    return this.flushing;
  }

  private async write(batch: FlatValue[], inline: boolean): Promise<void> {
    try {
      await this.store.appendFlat('logs', { fields: BUFFERED_FIELDS, dates: BUFFERED_DATES, values: batch }, inline ? { inline } : undefined);
    } catch (error) {
      this.logger.error('audit log flush failed', { error, entries: batch.length / BUFFERED_FIELDS.length });
    }
  }

  async list(query: LogQuery): Promise<Page<LogDoc>> {
    const filter: Filter = query.action ? { action: query.action } : {};
    if (query.from || query.to) filter.createdAt = { ...(query.from ? { $gte: query.from } : {}), ...(query.to ? { $lt: query.to } : {}) };
    return this.store.collection<LogDoc>('logs').findPage(filter, {
      page: query.page,
      limit: query.limit,
      sort: { createdAt: -1, _id: -1 },
      ...(query.search ? { search: { term: query.search, fields: SEARCH_FIELDS } } : {}),
    });
  }

  count(): Promise<number> {
    return this.store.collection<LogDoc>('logs').count({});
  }

  /** Empties the log; the first entry after is who did it. */
  async clear(actor: Actor): Promise<number> {
    await this.flush();
    const deleted = await this.store.collection<LogDoc>('logs').deleteMany({});
    await this.change(actor, { action: 'logs_cleared', message: `Audit log cleared (${deleted} entries)`, source: 'settings' });
    return deleted;
  }

  /** Removes one entry (the raw collection browser); true when it existed. */
  async deleteOne(id: string): Promise<boolean> {
    return (await this.store.collection<LogDoc>('logs').deleteOne({ _id: id })) !== null;
  }

  /** Removes entries older than `days`; audited when an actor asks (the hourly sweep is not). */
  async purgeOlderThan(days: number, actor?: Actor): Promise<number> {
    const cutoff = new Date(Date.now() - days * 86_400_000);
    const deleted = await this.store.collection<LogDoc>('logs').deleteMany({ createdAt: { $lt: cutoff } });
    if (actor) await this.change(actor, { action: 'logs_purged', message: `Audit log entries older than ${days} days removed (${deleted})`, source: 'settings' });
    return deleted;
  }
}

function clip(message: string): string {
  return message.length > MAX_MESSAGE ? message.slice(0, MAX_MESSAGE) : message;
}
