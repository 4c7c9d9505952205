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
  count(filter: Filter, search?: Search): Promise<number>;
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

export interface CollectionSpec {
  name: string;
  indexes: readonly IndexSpec[];
  /** Documents expire at their `expiresAt` date. */
  ttl?: boolean;
  /**
   * Top-level fields the embedded store keeps in columns of their own (MongoDB ignores this):
   * `text` for strings and dates, `json` for an object. Queries, indexes and expiry read the
   * columns instead of parsing each document.
   */
  columns?: { text?: readonly string[]; json?: readonly string[] };
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
  constructor(collection: string, fields: string[], options?: { cause?: unknown }) {
    super(`duplicate value for unique ${fields.join(', ') || 'key'} in ${collection}`, options);
    this.name = 'DuplicateKeyError';
    this.collection = collection;
    this.fields = fields;
  }
}

export class InvalidFilterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidFilterError';
  }
}
