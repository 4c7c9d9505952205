import type { EventBus, EventName } from '../events/bus.ts';
import { AppError, badRequest, type ErrorDetail } from '../lib/errors.ts';
import { isId } from '../lib/ids.ts';
import { fillPattern, matchSegments, splitPath, type PathPattern } from '../lib/paths.ts';
import type { RecordDoc } from '../model/endpoint.ts';
import type { CompiledRecordSchema, ReferenceValue } from '../model/record-schema.ts';
import { assertFieldPath } from '../store/filter.ts';
import { DuplicateKeyError, InvalidFilterError, type BatchRecount, type BatchWrite, type FindOptions, type Filter, type JsonRow, type JsonView, type SortSpec, type Store } from '../store/types.ts';

/**
 * Records of dynamic endpoints (`endpointdatas`), shared by every endpoint with the same
 * resourcePath. List totals come from a counter per resourcePath (`recordcounts`), kept in step
 * on create and delete, so a page costs one indexed range read instead of a COUNT over all
 * records. Paths whose records expire use an exact COUNT instead, because expiry removes
 * records without going through delete.
 *
 * Every write through an endpoint (CRUD and handlers' db) emits record.created / updated /
 * deleted here, where it happens — and only when someone listens, so the hot path builds no
 * event nobody receives.
 *
 * A list's total (`?total=`): `exact` (the default, the spec's shape) counts — the counter for
 * an unfiltered list, else an indexed count when an index serves the filter; `estimate` counts at
 * most ESTIMATE_CAP matches past the page (`totalExact` says whether it got to the end); `none`
 * counts nothing and reads one record more than the page to say `hasMore`.
 */
export type TotalMode = 'exact' | 'estimate' | 'none';
export const TOTAL_MODES: readonly TotalMode[] = ['exact', 'estimate', 'none'];
const ESTIMATE_CAP = 10_000;

export interface RecordPage<T> {
  items: T[];
  /** null when not counted (`total=none`). */
  total: number | null;
  /** With `total=estimate`: whether `total` is the exact count (else it is a lower bound). */
  totalExact?: boolean;
  /** With `total=none`: whether a next page has records. */
  hasMore?: boolean;
}

/** A list's `meta`: `{page, limit, total}` as the spec has it, plus the flags of the other total modes. */
export function pageMeta(page: number, limit: number, result: RecordPage<unknown>): Record<string, unknown> {
  return {
    page,
    limit,
    total: result.total,
    ...(result.totalExact === undefined ? {} : { totalExact: result.totalExact }),
    ...(result.hasMore === undefined ? {} : { hasMore: result.hasMore }),
  };
}
interface CountDoc {
  _id: string;
  [key: string]: unknown;
  resourcePath: string;
  count: number;
  expiring?: boolean;
}

export interface ListOptions {
  page: number;
  limit: number;
  sort?: SortSpec;
  /** A case-insensitive substring of any of these record fields. */
  search?: { term: string; fields: readonly string[] };
  exactTotal?: boolean;
  /** How `total` is counted (default `exact`). */
  total?: TotalMode;
}

/** How clients see a record, as the store's JSON view (the same shape as flattenRecord). */
const RECORD_VIEW: JsonView = { spread: 'data', tail: ['createdAt', 'updatedAt', 'expiresAt'] };
const RECORD_VIEW_WITH_PATH: JsonView = { ...RECORD_VIEW, fields: ['resourcePath'] };

/** A record's JSON text when it belongs to this path (an id of another path's record is not found). */
const jsonUnder = (row: JsonRow | null, resourcePath: string): string | null => (row?.fields.resourcePath === resourcePath ? row.json : null);

/** `{_id, ...data, createdAt, updatedAt}` plus `expiresAt` when set: how clients see a record. */
export function flattenRecord(record: RecordDoc): Record<string, unknown> {
  return {
    _id: record._id,
    ...record.data,
    createdAt: String(record.createdAt),
    updatedAt: String(record.updatedAt),
    ...(record.expiresAt ? { expiresAt: String(record.expiresAt) } : {}),
  };
}

/**
 * A write a unique field index refused: 409 naming the field and the value written — the one
 * value the caller already knows; nothing of the other record is shown.
 */
export function uniqueConflict(error: unknown, resourcePath: string, data: Record<string, unknown>): unknown {
  if (!(error instanceof DuplicateKeyError) || error.collection !== 'endpointdatas') return error;
  const field = (error.fields[0] ?? '').replace(/^data\./, '');
  const value = Object.hasOwn(data, field) ? data[field] : undefined;
  const message = `${field} must be unique: another record of ${resourcePath} has ${JSON.stringify(value)}`;
  return new AppError(409, message, { details: [{ field, message: 'must be unique' }] });
}

/** Translates a filter over record fields into one over stored documents (`name` → `data.name`). */
export function dataFilter(filter: Filter): Filter {
  const out: Filter = {};
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(value)) throw new InvalidFilterError(`${key} needs a list of filters`);
      out[key] = value.map((inner: Filter) => dataFilter(inner));
    } else if (key === '_id') {
      out._id = value;
    } else if (key === 'createdAt' || key === 'updatedAt') {
      out[key] = value;
    } else {
      if (key.startsWith('$')) throw new InvalidFilterError(`unsupported filter operator "${key}"`);
      assertFieldPath(key);
      out[`data.${key}`] = value;
    }
  }
  return out;
}

/**
 * The order of record lists: the given sort (or creation order), then ties by createdAt and _id
 * in the direction of the last key — the order field indexes hold, so an index serves both
 * directions (a mixed `…DESC, id ASC` could not be read off one index).
 */
export function recordSort(sort: SortSpec | undefined): SortSpec {
  const out: SortSpec = dataSort(sort) ?? { createdAt: 1 };
  const last = Object.values(out).at(-1) ?? 1;
  if (!('createdAt' in out)) out.createdAt = last;
  if (!('_id' in out)) out._id = last;
  return out;
}

export function dataSort(sort: SortSpec | undefined): SortSpec | undefined {
  if (!sort) return undefined;
  const out: SortSpec = {};
  for (const [key, direction] of Object.entries(sort)) {
    assertFieldPath(key);
    out[key === '_id' || key === 'createdAt' || key === 'updatedAt' ? key : `data.${key}`] = direction;
  }
  return out;
}

export class RecordsService {
  private readonly store: Store;
  private readonly events: EventBus | undefined;

  constructor(store: Store, events?: EventBus) {
    this.store = store;
    this.events = events;
  }

  /** Resolves once the event is stored for webhooks (see EventBus.emitDurable). */
  private async emit(event: Extract<EventName, `record.${string}`>, record: RecordDoc, endpointId: string | undefined): Promise<void> {
    if (!this.events?.has(event)) return;
    await this.events.emitDurable(event, { path: record.resourcePath, endpointId: endpointId ?? record.endpointId, recordId: record._id, record: flattenRecord(record) });
  }

  private get records() {
    return this.store.collection<RecordDoc>('endpointdatas');
  }

  private get counts() {
    return this.store.collection<CountDoc>('recordcounts');
  }

  list(resourcePath: string, options: ListOptions, filter: Filter = {}): Promise<RecordPage<RecordDoc>> {
    return this.page(resourcePath, options, filter, (where, find) => this.records.find(where, find));
  }

  /** A page of records as the JSON text clients get (`flattenRecord`'s shape), without parsing them. */
  listJson(resourcePath: string, options: ListOptions, filter: Filter = {}): Promise<RecordPage<string>> {
    return this.page(resourcePath, options, filter, async (where, find) => (await this.records.findJson(where, find, RECORD_VIEW)).map((row) => row.json));
  }

  private async page<T>(resourcePath: string, options: ListOptions, filter: Filter, read: (where: Filter, find: FindOptions) => Promise<T[]>): Promise<RecordPage<T>> {
    const where = { ...dataFilter(filter), resourcePath };
    const search = options.search ? { term: options.search.term, fields: options.search.fields.map((field) => `data.${field}`) } : undefined;
    const mode = options.total ?? 'exact';
    const skip = (options.page - 1) * options.limit;
    const find = { sort: recordSort(options.sort), skip, limit: options.limit, ...(search ? { search } : {}) };
    if (mode === 'none') {
      const items = await read(where, { ...find, limit: options.limit + 1 });
      return { items: items.slice(0, options.limit), total: null, hasMore: items.length > options.limit };
    }
    const filtered = Object.keys(filter).length > 0 || search !== undefined;
    const counter = filtered || options.exactTotal === true ? null : await this.counts.findOne({ resourcePath });
    // A total that must be counted is counted before the page: the embedded store then knows how
    // many match when it plans the page, without probing the index a second time.
    const countedFirst = counter === null && mode === 'exact' ? await this.records.count(where, search) : undefined;
    const items = await read(where, find);
    // The records on this page bound the total from below (one written after a count may be on
    // it); an empty page past the end says nothing.
    const seen = items.length > 0 ? skip + items.length : 0;
    // Once a path has held expiring records, expiry may delete without going through delete():
    // its counter is no longer trusted and the total is counted, as it is for filtered lists.
    if (counter && !counter.expiring) {
      return { items, total: Math.max(counter.count, seen), ...(mode === 'estimate' ? { totalExact: true } : {}) };
    }
    if (mode === 'exact') {
      return { items, total: countedFirst === undefined ? await this.records.count(where, search) : Math.max(countedFirst, seen) };
    }
    const cap = skip + ESTIMATE_CAP;
    const counted = await this.records.countUpTo(where, cap, search);
    return { items, total: Math.max(counted, seen), totalExact: counted < cap && seen <= counted };
  }

  find(resourcePath: string, filter: Filter, options: { sort?: SortSpec; skip?: number; limit?: number } = {}): Promise<RecordDoc[]> {
    return this.records.find({ ...dataFilter(filter), resourcePath }, { ...options, sort: recordSort(options.sort) });
  }

  async get(resourcePath: string, id: string): Promise<RecordDoc | null> {
    const record = await this.records.findById(id);
    return record?.resourcePath === resourcePath ? record : null;
  }

  /** One record as the JSON text clients get, or null. */
  async getJson(resourcePath: string, id: string): Promise<string | null> {
    return jsonUnder(await this.records.findJsonById(id, RECORD_VIEW_WITH_PATH), resourcePath);
  }

  /** Whether getJsonNow answers: the store reads without waiting (the embedded store does). */
  get readsNow(): boolean {
    return this.records.findJsonByIdNow !== undefined;
  }

  /** getJson answered at once, where the store reads without waiting (see readsNow); undefined where it cannot. */
  getJsonNow(resourcePath: string, id: string): string | null | undefined {
    const read = this.records.findJsonByIdNow;
    if (read === undefined) return undefined;
    return jsonUnder(read(id, RECORD_VIEW_WITH_PATH), resourcePath);
  }

  /**
   * 400 unless every reference in `data` (top-level, and inside objects and arrays) names an
   * existing record of its target path: one query per target path. `under` limits the check to
   * some top-level fields; `prefix` goes before the field in the error (`data.` for the raw browser).
   */
  async assertReferencesExist(schema: CompiledRecordSchema, data: Record<string, unknown>, options: { under?: (field: string) => boolean; prefix?: string } = {}): Promise<void> {
    const missing = await this.missingReferences(schema, data, options);
    const first = missing[0];
    if (first) throw badRequest(`Invalid record: ${first.field} references a record that does not exist in ${first.ref}`, missing.map((problem) => problem.detail));
  }

  /**
   * The references in `data` that name no record of their target path, one per field (up to five
   * ids each), in the order of `data`; one query per target path. Also for a body that failed
   * validation (any value, any shape), so that a 400 can list these beside its other problems:
   * `maxValues` bounds how many ids such a body may have looked up.
   */
  async missingReferences(
    schema: CompiledRecordSchema,
    data: Record<string, unknown>,
    options: { under?: (field: string) => boolean; prefix?: string; maxValues?: number } = {},
  ): Promise<Array<{ field: string; ref: string; detail: ErrorDetail }>> {
    const all = schema.referencesIn(data, options.under);
    if (all.length === 0) return [];
    const values = options.maxValues === undefined ? all : all.filter((value) => isId(value.id)).slice(0, options.maxValues);
    const byTarget = new Map<string, ReferenceValue[]>();
    for (const value of values) {
      const same = byTarget.get(value.ref);
      if (same) same.push(value);
      else byTarget.set(value.ref, [value]);
    }
    // By field, in the order of `data` (a Map keeps the order its keys were first set in).
    const missingIds = new Map<string, { ref: string; ids: Set<string> } | null>(values.map((value) => [value.field, null]));
    for (const [ref, sameTarget] of byTarget) {
      const found = new Set((await this.findByIds(ref, sameTarget.map((v) => v.id))).map((r) => r._id));
      for (const value of sameTarget) {
        if (found.has(value.id)) continue;
        const entry = missingIds.get(value.field) ?? { ref, ids: new Set<string>() };
        entry.ids.add(value.id);
        missingIds.set(value.field, entry);
      }
    }
    const out: Array<{ field: string; ref: string; detail: ErrorDetail }> = [];
    for (const [field, entry] of missingIds) {
      if (entry) out.push({ field, ref: entry.ref, detail: { field: `${options.prefix ?? ''}${field}`, message: `unknown record ${[...entry.ids].slice(0, 5).join(', ')} in ${entry.ref}` } });
    }
    return out;
  }

  /** The newest record's id at a path (null when it has none): for sample requests. */
  async newestId(resourcePath: string): Promise<string | null> {
    const [newest] = await this.records.find({ resourcePath }, { limit: 1, sort: { createdAt: -1, _id: -1 } });
    return newest?._id ?? null;
  }

  findByIds(resourcePath: string, ids: readonly string[]): Promise<RecordDoc[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.records.find({ _id: { $in: [...new Set(ids)] }, resourcePath });
  }

  async create(input: { endpointId: string; resourcePath: string; data: Record<string, unknown>; retentionDays: number | null }): Promise<RecordDoc> {
    const now = new Date();
    const expiresAt = input.retentionDays ? new Date(now.getTime() + input.retentionDays * 86_400_000) : null;
    const counter = { collection: 'recordcounts', key: { resourcePath: input.resourcePath }, inc: { count: 1 }, ...(expiresAt ? { set: { expiring: true } } : {}) };
    const record = await this.records.insertOne({
      endpointId: input.endpointId,
      resourcePath: input.resourcePath,
      data: input.data,
      expiresAt,
      createdAt: now,
      updatedAt: now,
    }, { counter }).catch((error: unknown) => Promise.reject(uniqueConflict(error, input.resourcePath, input.data)));
    await this.emit('record.created', record, input.endpointId);
    return record;
  }

  /** Replaces a record's data; `endpointId` names the definition that wrote (for events). */
  async replace(resourcePath: string, id: string, data: Record<string, unknown>, endpointId?: string): Promise<RecordDoc | null> {
    const updated = await this.records.updateOne({ _id: id, resourcePath }, { $set: { data, updatedAt: new Date() } })
      .catch((error: unknown) => Promise.reject(uniqueConflict(error, resourcePath, data)));
    if (updated) await this.emit('record.updated', updated, endpointId);
    return updated;
  }

  /** Deletes a record; `endpointId` names the definition that deleted it (for events). */
  async delete(resourcePath: string, id: string, endpointId?: string): Promise<RecordDoc | null> {
    const deleted = await this.records.deleteOne({ _id: id, resourcePath }, { counter: { collection: 'recordcounts', key: { resourcePath }, inc: { count: -1 } } });
    if (deleted) await this.emit('record.deleted', deleted, endpointId);
    return deleted;
  }

  /** Deletes every record of every path and recounts the counters (a record written meanwhile stays counted); returns how many went. */
  async clearAll(): Promise<number> {
    const removed = await this.records.deleteMany({});
    await this.recountAll();
    return removed;
  }

  countOwn(endpointId: string): Promise<number> {
    return this.records.count({ endpointId });
  }

  /**
   * The writes that move one endpoint's records from its old path pattern to the new one
   * (parameters by name), and the counters to recount after them, for a store batch that lands
   * together with the definition (see EndpointsService.update). Records whose path lacks a
   * parameter of the new pattern stay.
   */
  async planMove(endpointId: string, from: PathPattern, to: PathPattern): Promise<{ writes: BatchWrite[]; recounts: BatchRecount[] }> {
    const own = await this.records.find({ endpointId });
    const touched = new Set<string>();
    const expiring = new Set<string>();
    const writes: BatchWrite[] = [];
    for (const record of own) {
      const params = matchSegments(from, splitPath(record.resourcePath).map(decodeURIComponent));
      if (!params || to.paramNames.some((name) => params[name] === undefined)) continue;
      const resourcePath = fillPattern(to, params);
      writes.push({ collection: 'endpointdatas', filter: { _id: record._id }, update: { $set: { resourcePath } } });
      touched.add(record.resourcePath).add(resourcePath);
      if (record.expiresAt) expiring.add(resourcePath);
    }
    // Before the move lands: a path marked and then left without expiring records (the batch
    // refused) only counts its totals; one holding them unmarked would serve a stale counter.
    await this.markExpiring(expiring);
    const recounts = [...touched].map((resourcePath) => ({ collection: 'recordcounts', key: { resourcePath }, field: 'count', of: { collection: 'endpointdatas', filter: { resourcePath } } }));
    return { writes, recounts };
  }

  /** Recomputes a counter from the records (after moves, and to heal drift). */
  /**
   * All records, as the per-path counters hold them: read off the counters, not counted (a
   * count of a million records reads the whole table). Exact on the embedded store; on MongoDB
   * as exact as the counters (see healCounters). Expired records not yet swept are included.
   */
  async countedTotal(): Promise<number> {
    const counters = await this.counts.find({});
    return counters.reduce((sum, counter) => sum + (typeof counter.count === 'number' ? counter.count : 0), 0);
  }

  async recount(resourcePath: string): Promise<number> {
    const count = await this.records.count({ resourcePath });
    await this.counts.updateOne({ resourcePath }, { $set: { count } }, { upsert: true });
    return count;
  }

  /** Heals every counter that drifted; only those are written (a start with thousands of paths reads, it does not commit thousands of times). */
  async recountAll(): Promise<void> {
    const counters = await this.counts.find({});
    for (const counter of counters) {
      const count = await this.records.count({ resourcePath: counter.resourcePath });
      if (count !== counter.count) await this.counts.updateOne({ resourcePath: counter.resourcePath }, { $set: { count } }, { upsert: true });
    }
  }

  /**
   * At start: heals the counters that may have drifted, and only those. The embedded store
   * changes a counter in the transaction of its insert or delete, so its counters cannot drift
   * and nothing is read (a recount of 1,000,000 records read the whole table, hundreds of MB,
   * at every start). MongoDB applies the two in order, so a crash between them leaves a counter
   * off by one: those are recounted. Paths with expiring records are skipped on both: their
   * totals are counted on every list, the counter is not read.
   */
  async healCounters(): Promise<void> {
    if (this.store.kind === 'embedded') return;
    for (const counter of await this.counts.find({ expiring: { $ne: true } })) {
      const count = await this.records.count({ resourcePath: counter.resourcePath });
      if (count !== counter.count) await this.counts.updateOne({ resourcePath: counter.resourcePath }, { $set: { count } }, { upsert: true });
    }
  }

  /** From now on the totals of these paths are counted, not read off their counters (they hold or will hold expiring records). */
  async markExpiring(resourcePaths: Iterable<string>): Promise<void> {
    for (const resourcePath of resourcePaths) await this.counts.updateOne({ resourcePath }, { $set: { expiring: true } }, { upsert: true });
  }
}
