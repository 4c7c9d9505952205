/**
 * The one storage interface. Services see only this; the embedded (node:sqlite) and MongoDB
 * adapters implement it and are held to the same behaviour by test/store/conformance.
 *
 * - Ids are 24-character hex strings; dates are written as Date and read as ISO 8601 strings.
 * - Filters use a closed operator set (see filter.ts); anything else throws InvalidFilterError.
 * - Documents whose `expiresAt` has passed are never returned by a TTL collection.
 */
export type Doc = { _id: string } & Record<string, unknown>;

export type Filter = Record<string, unknown>;

/** A member's value in a flat document: a primitive, or undefined where the document lacks it. */
export type FlatValue = string | number | boolean | null | undefined;

/** How appendFlat writes a batch. */
export interface AppendOptions {
  /** Written on the calling thread, in a transaction of its own, rather than by a background writer. */
  inline?: boolean;
}

/**
 * Documents of one flat shape, as columns: each document is `fields.length` values in `fields`
 * order, one after the other in `values`. A field named in `dates` holds epoch milliseconds and
 * is stored as a date. This is how the audit log buffers its entries: a few primitives per
 * entry, which cross to the embedded store's append worker by structured clone for a fraction
 * of what objects cost, and become documents (and rows) there, off the request thread.
 */
export interface FlatDocs {
  readonly fields: readonly string[];
  readonly dates: readonly string[];
  readonly values: readonly FlatValue[];
}

export type SortSpec = Record<string, 1 | -1>;

export interface Search {
  term: string;
  fields: readonly string[];
}

export interface FindOptions {
  sort?: SortSpec;
  skip?: number;
  limit?: number;
  search?: Search;
}

export interface PageOptions {
  page: number;
  limit: number;
  sort?: SortSpec;
  search?: Search;
}

export interface Page<T> {
  items: T[];
  total: number;
}

export interface Update {
  $set?: Record<string, unknown>;
  $unset?: readonly string[];
  $inc?: Record<string, number>;
}

export type NewDoc<T extends Doc> = Omit<T, '_id'> & { _id?: string };

/**
 * A counter document changed in the same atomic unit as an insert or delete (upserted by
 * `key`). The embedded store applies both in one transaction; MongoDB applies them in order,
 * so after a crash between the two a counter may drift until it is recomputed.
 */
export interface CounterChange {
  collection: string;
  key: Record<string, string>;
  inc: Record<string, number>;
  set?: Record<string, unknown>;
}

/**
 * One write of a batch: the first document matching `filter` gets `$set` / `$unset`. No `$inc`:
 * a batch interrupted by a crash is replayed from the start, and replaying a write must change
 * nothing twice.
 */
export interface BatchWrite {
  collection: string;
  filter: Filter;
  update: Pick<Update, '$set' | '$unset'>;
}

/** After a batch's writes, `field` of the counter document `key` (upserted) is set to how many documents match `of`. */
export interface BatchRecount {
  collection: string;
  key: Record<string, string>;
  field: string;
  of: { collection: string; filter: Filter };
}

/**
 * Writes that land together or not at all (a definition and the records that follow it). The
 * first write is the anchor: when it matches no document, nothing is written.
 */
export interface WriteBatch {
  writes: readonly BatchWrite[];
  recounts?: readonly BatchRecount[];
}

/**
 * A read-only view of documents as JSON text: `{_id, ...doc[spread], <tail fields that are set>}`,
 * the shape clients see records in. Served from stored text where the store can, so the hot
 * read path need not parse documents and serialize them again.
 */
export interface JsonView {
  /** An object field whose members are lifted to the top level. */
  spread: string;
  /** Top-level fields that follow, left out when null or missing. */
  tail: readonly string[];
  /** Top-level fields returned beside the text, in JsonRow.fields (null when missing). */
  fields?: readonly string[];
}

export interface JsonRow {
  /** The view, as JSON text. */
  json: string;
  /** `_id` and the view's `fields`. */
  fields: Doc;
}

/**
 * A read of every match in keyset pages: each page starts after the last row of the one before
 * (by `orderBy`, then `_id`), so memory stays one page whatever the collection holds, and no
 * OFFSET is ever walked. Not a snapshot: documents written while a scan runs may or may not be in it.
 */
export interface ScanOptions {
  /** Ascending order: these top-level fields, then `_id`. Every matching document must hold a string (or date) in each. */
  orderBy?: readonly string[];
  /** Documents per page (default 1000). */
  batchSize?: number;
}

export interface Collection<T extends Doc = Doc> {
  readonly name: string;
  insertOne(doc: NewDoc<T>, options?: { counter?: CounterChange }): Promise<T>;
  insertMany(docs: readonly NewDoc<T>[]): Promise<T[]>;
  findById(id: string): Promise<T | null>;
  findOne(filter: Filter, options?: { sort?: SortSpec }): Promise<T | null>;
  find(filter: Filter, options?: FindOptions): Promise<T[]>;
  findPage(filter: Filter, options: PageOptions): Promise<Page<T>>;
  findJson(filter: Filter, options: FindOptions, view: JsonView): Promise<JsonRow[]>;
  findJsonById(id: string, view: JsonView): Promise<JsonRow | null>;
  /**
   * findJsonById answered at once, where the store reads without waiting (the embedded store);
   * absent where it cannot (MongoDB). Lets the hot read path skip promises.
   */
  readonly findJsonByIdNow?: (id: string, view: JsonView) => JsonRow | null;
  /** Every match as the view's JSON text, page by page (see ScanOptions); a row's `fields` also hold the `orderBy` fields. */
  scanJson(filter: Filter, view: JsonView, options?: ScanOptions): AsyncIterable<JsonRow[]>;
  count(filter: Filter, search?: Search): Promise<number>;
  /** Counts matches, but at most `cap` of them: a cost bounded however many there are. */
  countUpTo(filter: Filter, cap: number, search?: Search): Promise<number>;
  /** Updates the first match and returns it as it is after the update; null when nothing matched. */
  updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<T | null>;
  updateMany(filter: Filter, update: Update): Promise<number>;
  /**
   * Adds each amount to `field` of the document with that id (unknown ids are skipped): counters
   * of many documents at once, in one transaction on the embedded store, one unordered bulk write
   * on MongoDB (each increment atomic on its own).
   */
  incrementEach(field: string, amounts: ReadonlyMap<string, number>): Promise<void>;
  /** Deletes the first match and returns it; null when nothing matched (then no counter changes). */
  deleteOne(filter: Filter, options?: { counter?: CounterChange }): Promise<T | null>;
  deleteMany(filter: Filter): Promise<number>;
}

export interface IndexSpec {
  fields: readonly string[];
  unique?: boolean;
}

/**
 * How a field index reads its values: only values of this kind are indexed (and compared through
 * the index); a value of another kind (written before a schema change, or by a handler) is left
 * out of the index as if missing.
 */
export type IndexKind = 'number' | 'text' | 'boolean';

/**
 * An index over one field of the documents of one scope (records: one resourcePath), for a
 * collection that declares `fieldIndexes`. Unique: no two documents of the scope hold the same
 * value (documents without it are not compared).
 */
export interface FieldIndexSpec {
  /** The value of the collection's scope field (records: the resourcePath). */
  scope: string;
  /** The document field, a dotted path (records: `data.<field>`). */
  field: string;
  kind: IndexKind;
  unique: boolean;
}

export interface FieldIndexSync {
  /** Create only: drop nothing. */
  keep?: boolean;
  /** Leave the indexes of other scopes alone. */
  scopes?: readonly string[];
}

export interface CollectionSpec {
  name: string;
  indexes: readonly IndexSpec[];
  /**
   * The collection takes per-scope field indexes (Store.syncFieldIndexes): `scope` is the field
   * whose value a scope is, `order` the fields that follow the indexed one in every such index
   * (the tie-breakers of a sort on it, and the default order of a filtered list).
   */
  fieldIndexes?: { scope: string; order: readonly string[] };
  /** Documents expire at their `expiresAt` date. */
  ttl?: boolean;
  /**
   * Top-level fields the embedded store keeps in columns of their own (MongoDB ignores this):
   * `text` for strings and dates, `json` for an object. Queries, indexes and expiry read the
   * columns instead of parsing each document.
   */
  columns?: { text?: readonly string[]; json?: readonly string[] };
  /**
   * Written in bulk and read back once (an import's staging): the embedded store writes it
   * through a small page cache, so a million staged rows do not fill the cache the hot records use.
   * Its documents hold JSON values, dates only at the top level (the embedded store stores them
   * without a JSON round trip).
   */
  bulk?: boolean;
}

/**
 * Documents staged in one collection (an import's records, written batch by batch while a
 * request streams in) moved into their real collection in one step. A staged document is the
 * target document plus three fields: `stageId` (which stage), `targetId` (its `_id` in `to`)
 * and `stagedAt`; every other field is copied as it is, except `remap.field`, whose values are
 * translated through `remap.values` (an owner known by name while staging, by id at commit).
 * The staging collection keeps the target's columns plus those three (embedded store).
 */
export interface StagedMove {
  from: string;
  stageId: string;
  to: string;
  /** true: `to` holds exactly the staged documents afterwards; false: each is inserted, or replaces the document with its id. */
  replace: boolean;
  remap?: { field: string; values: Readonly<Record<string, string>> };
  /** Counters set after the move, in the same step (embedded store: the same transaction). */
  recounts?: readonly BatchRecount[];
}

export interface Store {
  readonly kind: 'embedded' | 'mongodb';
  collection<T extends Doc = Doc>(name: string): Collection<T>;
  /** Removes expired documents from TTL collections; returns how many. */
  sweepExpired(): Promise<number>;
  /**
   * Inserts documents whose ids the caller does not need back (the audit log), possibly off the
   * request thread: the embedded store hands them to a worker thread with its own connection.
   * Resolves when they are stored.
   */
  appendMany(collection: string, docs: readonly NewDoc<Doc>[]): Promise<void>;
  /**
   * `appendMany` for documents of one flat shape given as columns (FlatDocs): the audit log's
   * entries. The embedded store turns them into documents on its append worker, so the request
   * thread only collects primitives. Stores what `appendMany` stores for the same documents.
   * `inline`: written by the calling thread at once, not handed to the append worker — for a
   * caller whose earlier batches are still waiting for that worker (see AuditLog.flush).
   */
  appendFlat(collection: string, docs: FlatDocs, options?: AppendOptions): Promise<void>;
  /**
   * A number that changes whenever another connection (another process, or another store object
   * on the same files) has committed a write — the embedded store's `PRAGMA data_version` — so
   * caches can skip re-reading while it stands still. Null when the store cannot tell cheaply.
   */
  foreignWriteVersion(): number | null;
  /**
   * Applies a batch all or nothing, also across a crash: the embedded store in one transaction;
   * MongoDB (no multi-document transactions without a replica set) records the batch first,
   * then applies it and deletes the record, so an interrupted batch is finished by
   * `finishPendingBatches`. False (and nothing written) when the anchor matches no document.
   */
  applyBatch(batch: WriteBatch): Promise<boolean>;
  /**
   * Finishes batches a crash interrupted (recorded at least `minAgeMs` ago, so a batch another
   * instance is applying right now is left to it); returns how many. Run at start, before serving.
   */
  finishPendingBatches(minAgeMs?: number): Promise<number>;
  /**
   * Brings the field indexes of a collection that declares `fieldIndexes` to `wanted`: creates
   * the missing ones and (unless `keep`) drops the others — of the given `scopes` only, when
   * given (then `wanted` holds indexes of those scopes only). Idempotent (names are derived from the
   * spec), so any instance may run it. Resolves when the indexes exist; the embedded store builds
   * them on a worker thread while reads go on (its writes wait for the build). A unique index
   * over values that are already duplicated is not created: DuplicateKeyError naming the field
   * and one duplicated value.
   */
  syncFieldIndexes(collection: string, wanted: readonly FieldIndexSpec[], options?: FieldIndexSync): Promise<void>;
  /** The field indexes that exist now. */
  listFieldIndexes(collection: string): Promise<FieldIndexSpec[]>;
  /**
   * Moves a stage into its collection (see StagedMove) and deletes the stage; returns how many
   * documents were moved. The embedded store does it in one transaction: readers see the old
   * documents or the new ones. MongoDB records the move first and then runs it server-side
   * (`$merge`); it is not isolated (readers may see it half done for as long as it runs), and a
   * move a crash interrupted is run again from the start by `finishPendingBatches` once it is an
   * hour old (a live move is never raced).
   */
  moveStaged(move: StagedMove): Promise<number>;
  close(): Promise<void>;
}

export class StoreError extends Error {
  readonly code: 'busy' | 'unavailable' | 'internal';
  constructor(code: StoreError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreError';
    this.code = code;
  }
}

export class DuplicateKeyError extends Error {
  readonly collection: string;
  readonly fields: string[];
  /** The duplicated value, when the store knows it (a unique field index refused over existing data). */
  readonly value: unknown;
  /** The scope of the field index that refused it (records: the resourcePath). */
  readonly scope: string | undefined;
  constructor(collection: string, fields: string[], options?: { cause?: unknown; value?: unknown; scope?: string }) {
    super(`duplicate value for unique ${fields.join(', ') || 'key'} in ${collection}`, options);
    this.name = 'DuplicateKeyError';
    this.collection = collection;
    this.fields = fields;
    this.value = options?.value;
    this.scope = options?.scope;
  }
}

export class InvalidFilterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidFilterError';
  }
}
