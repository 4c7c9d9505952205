import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { newId } from '../../lib/ids.ts';
import { jsonString } from '../../lib/json-string.ts';
import { COLLECTIONS, collectionSpec } from '../collections.ts';
import { applyUpdate } from '../document-update.ts';
import { assertFieldPath, equalityFields, parseFilter, parseSort, validateUpdate, type FilterNode } from '../filter.ts';
import {
  DuplicateKeyError,
  type FieldIndexSpec,
  type FieldIndexSync,
  StoreError,
  type AppendOptions,
  type Collection,
  type CollectionSpec,
  type CounterChange,
  type Doc,
  type Filter,
  type FlatDocs,
  type FindOptions,
  type JsonRow,
  type JsonView,
  type NewDoc,
  type Page,
  type PageOptions,
  type ScanOptions,
  type Search,
  type SortSpec,
  type StagedMove,
  type Store,
  type Update,
  type WriteBatch,
} from '../types.ts';
import { checkBatch } from '../batch.ts';
import { docsOfFlat } from '../flat-docs.ts';
import { rowInserter } from './append-insert.ts';
import { encodeRows } from './append-rows.ts';
import { AppendWriter } from './append-writer.ts';
import { layoutOf, type Layout, type SqlValue } from './layout.ts';
import { JSON_LIKE, compileSearch, compileWhere } from './sql-filter.ts';
import { jsonRowOf } from '../json-view.ts';
import { createFieldIndexSql, duplicateValueSql, fieldIndexName, parseFieldIndex, type FieldIndex } from './field-indexes.ts';
import { IndexBuilder } from './index-builder.ts';
import { planIndex, scopeOf, type IndexPlan } from './index-plan.ts';

/**
 * The embedded store: one SQLite database in DATA_DIR holding a table per collection, each row
 * the JSON text of one document (some fields in columns of their own: see layout.ts).
 * node:sqlite is synchronous, so a statement never interleaves with another in this process;
 * BEGIN IMMEDIATE serialises read-modify-write against other processes on the same file.
 */
export interface SqliteOptions {
  dataDir: string;
  synchronous?: 'FULL' | 'NORMAL';
  busyTimeoutMs?: number;
}

const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_CONSTRAINT_UNIQUE = 2067;
const SQLITE_CONSTRAINT_PRIMARYKEY = 1555;

function indexName(spec: CollectionSpec, fields: readonly string[]): string {
  return `${spec.name}__${fields.join('_')}`;
}

/** The embedded store, plus what its tests and benchmark check: the plan SQLite runs a query with. */
export interface EmbeddedStore extends Store {
  /** EXPLAIN QUERY PLAN of a page read (`find`) and of its count, as SQLite words them. */
  explain(collection: string, filter: Filter, options?: FindOptions): { find: string[]; count: string[] };
}

export function openSqliteStore(options: SqliteOptions): EmbeddedStore {
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const file = join(options.dataDir, 'dyn.db');
  // The store holds webhook secrets, credential headers and password hashes: a new database is
  // created readable by its owner only, and SQLite gives its -wal and -shm files the same mode.
  // An existing file keeps the mode its operator chose.
  closeSync(openSync(file, 'a', 0o600));
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const db = new DatabaseSync(file);
  let appender: AppendWriter | undefined;
  // A locked database waits this long and then fails with a bounded "busy" error, never hangs.
  db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  setWalMode(db, options.busyTimeoutMs ?? 5000);
  // FULL: a write acknowledged to a client survives kill -9 and power loss (see README).
  db.exec(`PRAGMA synchronous = ${options.synchronous ?? 'FULL'}`);
  db.exec('PRAGMA foreign_keys = OFF');
  // A larger page cache and memory-mapped reads keep hot records in memory while the audit log
  // grows beside them (the default 2 MB cache is churned by log inserts).
  db.exec(`PRAGMA cache_size = -${CACHE_KB}`);
  db.exec(`PRAGMA mmap_size = ${MMAP_BYTES}`);

  const uniqueIndexFields = new Map<string, string[]>();
  const builder = new IndexBuilder(file, busyTimeoutMs);
  /** The append worker (started on first use), once no index build holds writes back. */
  const appendWriter = async (): Promise<AppendWriter> => {
    while (builder.writesWait) await builder.writesWait;
    return (appender ??= new AppendWriter(file, busyTimeoutMs));
  };
  /** appendFlat's `inline` batches: inserted on this connection as the worker inserts on its own. */
  const insertAppended = rowInserter(db);

  /*
   * The field indexes that exist, read from sqlite_schema again whenever the schema cookie moves
   * (this or another connection created or dropped an index), so a query goes through an index
   * as soon as it is built, whoever built it.
   */
  let fieldIndexCache = { version: -1, byScope: new Map<string, Map<string, FieldIndex>>(), byName: new Map<string, FieldIndex & { collection: string }>() };
  let fieldIndexesCheckedAt = -Infinity;
  const loadFieldIndexes = (fresh = false): typeof fieldIndexCache => {
    // The pragma is a read transaction of its own (~10 µs under load, two per list request), so one
    // check serves every query within a millisecond: an index another connection built is used from
    // the next millisecond on (this connection's builds reset the cache), and a plan naming an index
    // dropped meanwhile is planned again (`planned`). Either way the rows are the same.
    const now = performance.now();
    if (!fresh && fieldIndexCache.version !== -1 && now - fieldIndexesCheckedAt < 1) return fieldIndexCache;
    fieldIndexesCheckedAt = now;
    const version = Number(prepare('PRAGMA schema_version').get()?.schema_version ?? 0);
    if (version === fieldIndexCache.version) return fieldIndexCache;
    const next = { version, byScope: new Map<string, Map<string, FieldIndex>>(), byName: new Map<string, FieldIndex & { collection: string }>() };
    for (const row of prepare("SELECT name, tbl_name, sql FROM sqlite_schema WHERE type = 'index' AND name GLOB '*__fx_*'").all()) {
      const index = parseFieldIndex(row.name as string, row.sql as string | null);
      if (!index) continue;
      const collection = row.tbl_name as string;
      next.byName.set(index.name, { ...index, collection });
      const key = `${collection}\0${index.scope}`;
      if (!next.byScope.has(key)) next.byScope.set(key, new Map());
      next.byScope.get(key)?.set(index.field, index);
    }
    fieldIndexCache = next;
    return next;
  };
  const fieldIndexesOf = (collection: string, scope: string): ReadonlyMap<string, FieldIndex> | undefined => loadFieldIndexes().byScope.get(`${collection}\0${scope}`);
  const uniqueFieldsOf = (name: string): UniqueIndex | undefined => {
    const fields = uniqueIndexFields.get(name);
    if (fields) return { fields };
    // Named by a constraint SQLite just enforced: an index built a moment ago elsewhere is looked up afresh.
    const index = loadFieldIndexes().byName.get(name) ?? loadFieldIndexes(true).byName.get(name);
    return index?.unique ? { fields: [index.field], scope: index.scope, collection: index.collection } : undefined;
  };

  guard('schema', () => {
    db.exec('BEGIN IMMEDIATE');
    try {
      for (const spec of COLLECTIONS) {
        const layout = layoutOf(spec);
        const created = createTable(db, layout);
        if (!created) moveToColumns(db, spec, layout);
        for (const index of spec.indexes) {
          const name = indexName(spec, index.fields);
          if (index.unique) uniqueIndexFields.set(name, [...index.fields]);
          const columns = index.fields.map((field) => layout.fieldExpr(field)).join(', ');
          db.exec(`CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS "${name}" ON "${spec.name}" (${columns})`);
        }
        if (spec.ttl) db.exec(`CREATE INDEX IF NOT EXISTS "${spec.name}__expiresAt" ON "${spec.name}" (${layout.fieldExpr('expiresAt')})`);
      }
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
  });

  // Prepared statements by SQL text. Page bounds are part of the text (see limitClause), so the
  // cache is emptied when it grows past a bound instead of growing with every page visited.
  const statements = new Map<string, StatementSync>();
  const arrayStatements = new Map<string, StatementSync>();
  const cached = (cache: Map<string, StatementSync>, sql: string, arrays: boolean): StatementSync => {
    let statement = cache.get(sql);
    if (!statement) {
      if (cache.size >= MAX_CACHED_STATEMENTS) cache.clear();
      statement = db.prepare(sql);
      if (arrays) statement.setReturnArrays(true);
      cache.set(sql, statement);
    }
    return statement;
  };
  const prepare = (sql: string): StatementSync => cached(statements, sql, false);
  // Rows come back as arrays of values in select-list order, cheaper to build than objects.
  const prepareArrays = (sql: string): StatementSync => cached(arrayStatements, sql, true);
  /** Changes when anything is written to the database: by this connection, or by any other. */
  const writeStamp = (): string => `${Number(prepare('SELECT total_changes() AS n').get()?.n ?? 0)}:${Number(prepare('PRAGMA data_version').get()?.data_version ?? 0)}`;

  function guard<T>(collection: string, work: () => T): T {
    try {
      return work();
    } catch (error) {
      throw translateError(collection, error, uniqueFieldsOf);
    }
  }

  /**
   * Bulk work (an export's scan, an import's staging and move) reads through a small page cache,
   * not the memory map: read through the map, every page of a big table would stay resident in
   * this process (counted in its RSS); through the full cache, it would fill all CACHE_KB of it
   * with pages read once (measured: an import of 1,000,000 records peaked 60 MB higher).
   */
  function bulk<T>(work: () => T): T {
    db.exec('PRAGMA mmap_size = 0');
    db.exec(`PRAGMA cache_size = -${BULK_CACHE_KB}`);
    try {
      return work();
    } finally {
      db.exec(`PRAGMA cache_size = -${CACHE_KB}`);
      db.exec(`PRAGMA mmap_size = ${MMAP_BYTES}`);
    }
  }

  function inTransaction<T>(collection: string, work: () => T): T {
    return guard(collection, () => {
      db.exec('BEGIN IMMEDIATE');
      try {
        const result = work();
        db.exec('COMMIT');
        return result;
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
    });
  }

  /*
   * Group commit: inserts issued in the same event-loop turn share one transaction, so one fsync
   * makes many of them durable; each is acknowledged only after that commit. An insert that fails
   * (a duplicate, say) is rolled back to its own savepoint and rejected alone.
   *
   * Those savepoints keep the original of each page an insert changes in SQLite's sub-journal,
   * which SQLite moves to a temporary file once one savepoint passes 64 KiB (an insert that
   * splits pages in several indexes does; under concurrent POSTs, about one group in ten), and
   * from then on every page it journals in that transaction costs two writes. A group's
   * transaction keeps it in memory instead (temp_store = MEMORY for that transaction only: other
   * statements on this connection, a purge or an import's move over millions of rows, keep the
   * file). At most MAX_GROUP inserts share a transaction, which bounds what one can journal; the
   * rest go in the next group at once.
   */
  const MAX_GROUP = 256;
  interface PendingInsert {
    collection: string;
    work: () => Doc;
    resolve: (doc: Doc) => void;
    reject: (error: unknown) => void;
  }
  let pendingInserts: PendingInsert[] = [];
  let flushScheduled = false;

  const queueInsert = (collection: string, work: () => Doc): Promise<Doc> =>
    new Promise<Doc>((resolve, reject) => {
      pendingInserts.push({ collection, work, resolve, reject });
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(flushInserts);
      }
    });

  function flushInserts(): void {
    // While an index is built, its write lock would hold this thread in SQLite's busy handler:
    // the inserts wait for the build instead (flushScheduled stays set, so nothing else flushes).
    const building = builder.writesWait;
    if (building && !closed) {
      void building.then(flushInserts);
      return;
    }
    flushScheduled = false;
    let batch = pendingInserts;
    pendingInserts = [];
    if (batch.length === 0) return;
    if (closed) {
      for (const item of batch) item.reject(new StoreError('unavailable', 'the store is closed'));
      return;
    }
    if (batch.length > MAX_GROUP) {
      pendingInserts = batch.slice(MAX_GROUP);
      batch = batch.slice(0, MAX_GROUP);
      flushScheduled = true;
      setImmediate(flushInserts);
    }
    journalInMemory(() => commitGroup(batch));
  }

  /**
   * Runs a transaction of bounded size (a group of inserts, an appended batch) with its statement
   * journals and savepoints in memory: SQLite spills them to a temporary file past 64 KiB and
   * writes every journaled page there. Read by SQLite when the transaction begins, and switched
   * back whatever happens to it (the switch fails only inside a transaction that uses temporary
   * tables, which this store never makes). Other work keeps file journals: purges and import
   * moves are single statements over up to millions of rows.
   */
  function journalInMemory<T>(work: () => T): T {
    db.exec('PRAGMA temp_store = MEMORY');
    try {
      return work();
    } finally {
      db.exec('PRAGMA temp_store = DEFAULT');
    }
  }

  function commitGroup(batch: readonly PendingInsert[]): void {
    const outcomes: Array<{ item: PendingInsert; doc?: Doc; error?: unknown }> = [];
    try {
      db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      const failure = translateError(batch[0]?.collection ?? '', error, uniqueFieldsOf);
      for (const item of batch) item.reject(failure);
      return;
    }
    for (const item of batch) {
      db.exec('SAVEPOINT dyn_insert');
      try {
        outcomes.push({ item, doc: item.work() });
        db.exec('RELEASE dyn_insert');
      } catch (error) {
        db.exec('ROLLBACK TO dyn_insert');
        db.exec('RELEASE dyn_insert');
        outcomes.push({ item, error: translateError(item.collection, error, uniqueFieldsOf) });
      }
    }
    try {
      db.exec('COMMIT');
    } catch (error) {
      try {
        db.exec('ROLLBACK');
      } catch {
        // the transaction is already gone
      }
      const failure = translateError(batch[0]?.collection ?? '', error, uniqueFieldsOf);
      for (const item of batch) item.reject(failure);
      return;
    }
    for (const outcome of outcomes) {
      if (outcome.error !== undefined) outcome.item.reject(outcome.error);
      else outcome.item.resolve(outcome.doc as Doc);
    }
  }

  const collections = new Map<string, Collection>();
  type Explain = (filter: Filter, options?: FindOptions) => { find: string[]; count: string[] };
  const explainers = new Map<string, Explain>();
  // Synchronous upserts per collection, so one transaction can span two collections.
  const upserters = new Map<string, (filter: Filter, update: Update) => void>();
  // Synchronous updates and counts per collection, for batches (one transaction across collections).
  const batchOps = new Map<string, { update: (filter: Filter, update: Update) => Doc | null; count: (filter: Filter) => number }>();
  const batchOpsOf = (name: string) => {
    if (!batchOps.has(name)) makeCollection(collectionSpec(name));
    return batchOps.get(name) as NonNullable<ReturnType<typeof batchOps.get>>;
  };
  let closed = false;

  const applyCounter = (counter: CounterChange | undefined): void => {
    if (!counter) return;
    if (!upserters.has(counter.collection)) makeCollection(collectionSpec(counter.collection));
    const upsert = upserters.get(counter.collection) as (filter: Filter, update: Update) => void;
    upsert(counter.key, { $inc: counter.inc, ...(counter.set ? { $set: counter.set } : {}) });
  };

  function makeCollection(spec: CollectionSpec): Collection {
    const layout = layoutOf(spec);
    const table = layout.table;

    const ttlClause = (params: SqlValue[]): string => {
      const expires = layout.fieldExpr('expiresAt');
      params.push(new Date().toISOString());
      return `${expires} IS NULL OR ${expires} > ?`;
    };

    /**
     * The last exact count of a query's matches, from a count or from a range probe that counted
     * every match (below its bound): a filtered list's total and its page's probe (RecordsService
     * counts first) read the range's index entries once, not twice. Keyed by the query text and
     * its values but the expiry check's clock (the last value of a TTL collection's WHERE), and
     * recalled once, only while nothing has been written since and for COUNT_REUSE_MS: it pairs
     * a count with the plan that follows it, and is no cache of counts across requests.
     */
    let lastCount: { query: string; values: string; n: number; stamp: string; at: number } | null = null;
    const valuesKey = (params: readonly SqlValue[]): string => JSON.stringify(spec.ttl ? params.slice(0, -1) : params);
    // Only where a plan may read it (a collection with field indexes), and not inside a
    // transaction: a rollback undoes writes without moving total_changes() back.
    const rememberCount = (query: string, params: readonly SqlValue[], n: number): void => {
      lastCount = !spec.fieldIndexes || db.isTransaction ? null : { query, values: valuesKey(params), n, stamp: writeStamp(), at: Date.now() };
    };
    const recalledCount = (query: string, params: readonly SqlValue[]): number | undefined => {
      const known = lastCount;
      lastCount = null;
      if (!known || db.isTransaction || known.query !== query || Date.now() - known.at > COUNT_REUSE_MS || known.values !== valuesKey(params) || known.stamp !== writeStamp()) return undefined;
      return known.n;
    };

    // Queries scoped by the collection's scope field may go through a field index (index-plan.ts).
    const planFor = (node: FilterNode, sort: SortSpec | undefined, page?: FindOptions): IndexPlan | null => {
      if (!spec.fieldIndexes) return null;
      const scope = scopeOf(spec, node);
      const plan = scope === undefined ? null : planIndex(spec, layout, node, parseSort(sort), fieldIndexesOf(spec.name, scope));
      if (!plan || plan.via !== 'range' || plan.servesSort || page?.limit === undefined || sort === undefined) return plan;
      // A page of a range sorted otherwise (index-plan.ts): when many records match, the scope's
      // own order is the faster read. The probe reads at most `bound` entries of the field's index.
      const bound = Math.min(RANGE_PROBE_MAX, Math.max(RANGE_PROBE_MIN, RANGE_PROBE_PER_ROW * ((page.skip ?? 0) + page.limit)));
      const params: SqlValue[] = [];
      const query = `FROM ${from(plan)} WHERE ${where(node, undefined, params, plan)}`;
      const known = recalledCount(query, params);
      const matches = known ?? Number(prepare(`SELECT COUNT(*) AS n FROM (SELECT 1 ${query} LIMIT ${bound})`).get(...params)?.n ?? 0);
      if (matches >= bound) return null;
      if (known === undefined) rememberCount(query, params, matches);
      return plan;
    };
    const from = (plan: IndexPlan | null): string => (plan ? `${table} INDEXED BY "${plan.index.name}"` : table);
    // An index another connection dropped between the plan and the statement: plan again.
    const planned = <T>(work: () => T): T => {
      try {
        return work();
      } catch (error) {
        if (!(error instanceof Error) || !/no such index|no query solution/.test(error.message)) throw error;
        fieldIndexCache.version = -1;
        return work();
      }
    };

    const where = (node: FilterNode, search: Search | undefined, params: SqlValue[], plan: IndexPlan | null = null): string => {
      const clauses = [compileWhere(layout, node, params, plan?.fields)];
      if (search && search.term !== '') clauses.push(compileSearch(layout, search.term, search.fields, params));
      if (spec.ttl) clauses.push(ttlClause(params));
      return clauses.map((c) => `(${c})`).join(' AND ');
    };

    // Ties are broken by id, unless the sort names it (records sort by (…, createdAt, _id) in one direction).
    const orderBy = (sort: SortSpec | undefined, plan: IndexPlan | null = null): string => {
      const parsed = parseSort(sort);
      const parts = parsed.map(({ field, direction }, at) => {
        const expr = at === 0 && plan?.servesSort ? (plan.fields.typed.get(field)?.expr ?? layout.fieldExpr(field)) : layout.fieldExpr(field);
        return `${expr} ${direction === 1 ? 'ASC' : 'DESC'}`;
      });
      if (!parsed.some(({ field }) => field === '_id')) parts.push('id ASC');
      return ` ORDER BY ${parts.join(', ')}`;
    };

    const selectSql = (node: FilterNode, options: FindOptions, params: SqlValue[]): string => {
      const plan = planFor(node, options.sort, options);
      return `SELECT ${layout.selectList} FROM ${from(plan)} WHERE ${where(node, options.search, params, plan)}${orderBy(options.sort, plan)}${limitClause(options)}`;
    };
    const selectRows = (filter: Filter, options: FindOptions): Doc[] => {
      const node = parseFilter(filter);
      return planned(() => {
        const params: SqlValue[] = [];
        return prepare(selectSql(node, options, params)).all(...params).map((row) => layout.fromRow(row));
      });
    };

    /*
     * findOne by the one field of a unique index (a path's record counter on every list, a
     * session, an API key, a setting): the SQL for a string value is the same text whatever the
     * value, so it is compiled once per field instead of on every call (~10 µs a lookup).
     * A JSON-like string compiles differently (equalsAny's type guard) and takes the general way.
     */
    const uniqueFields = new Set(spec.fieldIndexes ? [] : spec.indexes.filter((index) => index.unique && index.fields.length === 1).map((index) => index.fields[0] as string));
    const uniqueLookups = new Map<string, string>();
    const selectUnique = (filter: Filter): Doc[] | undefined => {
      let field: string | undefined;
      for (const key in filter) {
        if (field !== undefined) return undefined;
        field = key;
      }
      if (field === undefined || !uniqueFields.has(field)) return undefined;
      const value = filter[field];
      if (typeof value !== 'string' || JSON_LIKE.test(value)) return undefined;
      let sql = uniqueLookups.get(field);
      if (sql === undefined) {
        sql = selectSql(parseFilter({ [field]: 'a' }), { limit: 1 }, []);
        uniqueLookups.set(field, sql);
      }
      const params: SqlValue[] = [value];
      if (spec.ttl) params.push(new Date().toISOString());
      return prepare(sql).all(...params).map((row) => layout.fromRow(row));
    };

    const countQuery = (node: FilterNode, search: Search | undefined, params: SqlValue[]): string => {
      const plan = planFor(node, undefined);
      return `FROM ${from(plan)} WHERE ${where(node, search, params, plan)}`;
    };
    const countSql = (node: FilterNode, search: Search | undefined, params: SqlValue[]): string => `SELECT COUNT(*) AS n ${countQuery(node, search, params)}`;
    const countRows = (filter: Filter, search?: Search): number => {
      const node = parseFilter(filter);
      return planned(() => {
        const params: SqlValue[] = [];
        const query = countQuery(node, search, params);
        const known = recalledCount(query, params);
        if (known !== undefined) return known;
        const n = Number(prepare(`SELECT COUNT(*) AS n ${query}`).get(...params)?.n ?? 0);
        rememberCount(query, params, n);
        return n;
      });
    };
    explainers.set(spec.name, (filter, options = {}) => {
      const node = parseFilter(filter);
      const explain = (sql: string, params: SqlValue[]): string[] => db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params).map((row) => String(row.detail));
      const findParams: SqlValue[] = [];
      const countParams: SqlValue[] = [];
      return { find: explain(selectSql(node, options, findParams), findParams), count: explain(countSql(node, options.search, countParams), countParams) };
    });

    /** Counts at most `cap` matches: a bounded cost however many there are. */
    const countRowsUpTo = (filter: Filter, search: Search | undefined, cap: number): number => {
      const node = parseFilter(filter);
      return planned(() => {
        const plan = planFor(node, undefined);
        const params: SqlValue[] = [];
        const row = prepare(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${from(plan)} WHERE ${where(node, search, params, plan)} LIMIT ${Math.trunc(cap)})`).get(...params);
        return Number(row?.n ?? 0);
      });
    };

    const insertSql = layout.insertSql;
    const insertRow = (doc: NewDoc<Doc>): Doc => {
      const stored = JSON.parse(JSON.stringify({ ...doc, _id: doc._id ?? newId() })) as Doc;
      prepare(insertSql).run(...layout.toRow(stored));
      return stored;
    };

    // A bulk collection's documents are JSON values with dates at the top level only (CollectionSpec.bulk):
    // stored without the JSON round trip insertRow makes, one object tree less per row.
    const insertBulkRow = (doc: NewDoc<Doc>): Doc => {
      const stored: Doc = { _id: doc._id ?? newId() };
      for (const [key, value] of Object.entries(doc)) {
        if (key !== '_id' && value !== undefined) stored[key] = value instanceof Date ? value.toISOString() : value;
      }
      prepare(insertSql).run(...layout.toRow(stored));
      return stored;
    };

    const updateSql = `UPDATE ${table} SET ${['doc', ...layout.columns.map((c) => `"${c}"`)].map((c) => `${c} = ?`).join(', ')} WHERE id = ?`;
    const writeRow = (doc: Record<string, unknown>): Doc => {
      const stored = JSON.parse(JSON.stringify(doc)) as Doc;
      const [id, ...values] = layout.toRow(stored);
      prepare(updateSql).run(...values, id as string);
      return stored;
    };

    const updateOneSync = (filter: Filter, update: Update, upsert: boolean): Doc | null => {
      const current = selectRows(filter, { limit: 1 })[0];
      if (current) return writeRow(applyUpdate(current, update));
      if (!upsert) return null;
      const seed = applyUpdate({ _id: newId() }, { $set: equalityFields(parseFilter(filter)) });
      return insertRow(applyUpdate(seed, update) as NewDoc<Doc>);
    };
    upserters.set(spec.name, (filter, update) => {
      validateUpdate(update);
      updateOneSync(filter, update, true);
    });
    batchOps.set(spec.name, { update: (filter, update) => updateOneSync(filter, update, false), count: (filter) => countRows(filter) });

    const expired = (doc: Doc): boolean => spec.ttl === true && typeof doc.expiresAt === 'string' && doc.expiresAt <= new Date().toISOString();

    // Reading by id is the hot path of record reads: a primary-key lookup, expiry checked here.
    const selectByIdSql = `SELECT ${layout.selectList} FROM ${table} WHERE id = ?`;
    const selectById = (id: string): Doc | null => {
      const row = prepare(selectByIdSql).get(id);
      if (!row) return null;
      const doc = layout.fromRow(row);
      return expired(doc) ? null : doc;
    };

    /**
     * A view read straight from columns when the layout keeps its fields there: only the columns
     * it shows are selected, as arrays (cheaper than row objects), and none is parsed.
     */
    const viewPlans = new WeakMap<JsonView, ViewPlan>();
    const planOf = (view: JsonView): ViewPlan => {
      let plan = viewPlans.get(view);
      if (!plan) {
        const shown = [view.spread, ...view.tail, ...(view.fields ?? [])];
        // Expiry of one row is checked here rather than in SQL (no clock parameter to bind).
        if (spec.ttl && !shown.includes('expiresAt')) shown.push('expiresAt');
        const select = `SELECT id, ${shown.map((field) => `"${field}"`).join(', ')} FROM ${table} WHERE `;
        plan = {
          select,
          byIdSql: `${select}id = ?`,
          expiresAt: spec.ttl ? 1 + shown.indexOf('expiresAt') : -1,
          tailKeys: view.tail.map((field) => `,${JSON.stringify(field)}:`),
          fields: (view.fields ?? []).map((field) => [field, 1 + shown.indexOf(field)] as const),
        };
        viewPlans.set(view, plan);
      }
      return plan;
    };
    const jsonRowOfValues = (plan: ViewPlan, row: SqlValue[]): JsonRow => {
      let json = `{"_id":${jsonString(row[0] as string)}`;
      const spread = row[1];
      // Stored by JSON.stringify, so '{}' is the only empty object and members sit between the braces.
      if (typeof spread === 'string' && spread.length > 2) json += `,${spread.slice(1, -1)}`;
      for (let i = 0; i < plan.tailKeys.length; i++) {
        const value = row[2 + i];
        if (value !== null && value !== undefined) json += plan.tailKeys[i] + (typeof value === 'string' ? jsonString(value) : JSON.stringify(value));
      }
      const fields: Doc = { _id: row[0] as string };
      for (const [field, at] of plan.fields) fields[field] = row[at] ?? null;
      return { json: `${json}}`, fields };
    };
    /*
     * The page of a list filtered by its scope alone (every unfiltered list of a path: the most
     * common read after one record): its SQL and values depend only on the scope's value, the
     * sort, the page and the field indexes there are, so they are compiled once for those
     * (~10 µs of planning and SQL text a page) and kept while the indexes stay as they are.
     */
    const scopePages = new Map<string, { sql: string; params: SqlValue[] }>();
    const scopePageKey = (filter: Filter, options: FindOptions): string | undefined => {
      const scope = spec.fieldIndexes?.scope;
      if (scope === undefined || options.search !== undefined) return undefined;
      let only: string | undefined;
      for (const key in filter) {
        if (only !== undefined) return undefined;
        only = key;
      }
      const value = only === scope ? filter[scope] : undefined;
      if (typeof value !== 'string' || JSON_LIKE.test(value)) return undefined;
      let sort = '';
      if (options.sort) for (const field in options.sort) sort += `${field}:${String(options.sort[field])},`;
      return `${loadFieldIndexes().version}\0${value}\0${sort}\0${options.skip ?? ''}\0${options.limit ?? ''}`;
    };
    const selectView = (filter: Filter, options: FindOptions, view: JsonView): JsonRow[] => {
      if (!layout.servesView(view)) return selectRows(filter, options).map((doc) => jsonRowOf(doc, view));
      const plan = planOf(view);
      return planned(() => {
        const key = scopePageKey(filter, options);
        let page = key === undefined ? undefined : scopePages.get(key);
        if (page) {
          // The expiry check's clock is the last value (see where).
          if (spec.ttl) page = { sql: page.sql, params: [...page.params.slice(0, -1), new Date().toISOString()] };
        } else {
          const node = parseFilter(filter);
          const index = planFor(node, options.sort, options);
          const params: SqlValue[] = [];
          const select = index ? plan.select.replace(` FROM ${table} WHERE `, ` FROM ${from(index)} WHERE `) : plan.select;
          page = { sql: `${select}${where(node, options.search, params, index)}${orderBy(options.sort, index)}${limitClause(options)}`, params };
          if (key !== undefined) {
            if (scopePages.size >= MAX_CACHED_STATEMENTS) scopePages.clear();
            scopePages.set(key, { sql: page.sql, params: [...params] });
          }
        }
        return prepareArrays(page.sql).all(...page.params).map((row) => jsonRowOfValues(plan, row as unknown as SqlValue[]));
      });
    };
    const selectViewById = (id: string, view: JsonView): JsonRow | null => {
      if (!layout.servesView(view)) {
        const doc = selectById(id);
        return doc ? jsonRowOf(doc, view) : null;
      }
      const plan = planOf(view);
      const row = prepareArrays(plan.byIdSql).get(id) as unknown as SqlValue[] | undefined;
      if (!row) return null;
      const expiresAt = plan.expiresAt >= 0 ? row[plan.expiresAt] : null;
      if (typeof expiresAt === 'string' && Date.parse(expiresAt) <= Date.now()) return null;
      return jsonRowOfValues(plan, row);
    };

    /**
     * One keyset page of a scan: rows after `after` (the last row's order values and id) in
     * (orderBy…, id) order. A row value comparison, so SQLite walks the matching index as a
     * range instead of skipping rows the way OFFSET does.
     */
    const scanPage = (filter: Filter, view: JsonView, orderBy: readonly string[], after: SqlValue[] | null, limit: number): JsonRow[] => {
      const keys = [...orderBy.map((field) => layout.fieldExpr(field)), 'id'];
      const params: SqlValue[] = [];
      let clause = where(parseFilter(filter), undefined, params);
      if (after) {
        clause += ` AND (${keys.join(', ')}) > (${keys.map(() => '?').join(', ')})`;
        params.push(...after);
      }
      const tail = ` ORDER BY ${keys.map((key) => `${key} ASC`).join(', ')} LIMIT ${limit}`;
      if (!layout.servesView(view)) return prepare(`SELECT ${layout.selectList} FROM ${table} WHERE ${clause}${tail}`).all(...params).map((row) => jsonRowOf(layout.fromRow(row), view));
      const plan = planOf(view);
      return prepareArrays(`${plan.select}${clause}${tail}`).all(...params).map((row) => jsonRowOfValues(plan, row as unknown as SqlValue[]));
    };
    async function* scanJson(filter: Filter, view: JsonView, options: ScanOptions = {}): AsyncGenerator<JsonRow[]> {
      const orderBy = options.orderBy ?? [];
      const limit = options.batchSize ?? SCAN_BATCH;
      if (!Number.isSafeInteger(limit) || limit < 1) throw new StoreError('internal', 'batchSize must be a positive integer');
      const scanView: JsonView = { ...view, fields: [...new Set([...(view.fields ?? []), ...orderBy])] };
      let after: SqlValue[] | null = null;
      for (;;) {
        const page = await run(() => bulk(() => scanPage(filter, scanView, orderBy, after, limit)));
        if (page.length === 0) return;
        yield page;
        if (page.length < limit) return;
        const last = page[page.length - 1] as JsonRow;
        after = [...orderBy.map((field) => (last.fields[field] ?? null) as SqlValue), last.fields._id];
      }
    }

    const run = <T>(work: () => T): Promise<T> => {
      if (closed) return Promise.reject(new StoreError('unavailable', 'the store is closed'));
      try {
        return Promise.resolve(guard(spec.name, work));
      } catch (error) {
        return Promise.reject(error);
      }
    };
    // A write waits for an index build's write lock off the event loop (see flushInserts).
    const runWrite = <T>(work: () => T): Promise<T> => {
      const building = builder.writesWait;
      return building ? building.then(() => runWrite(work)) : run(work);
    };

    return {
      name: spec.name,
      insertOne: (doc, options) => {
        if (closed) return Promise.reject(new StoreError('unavailable', 'the store is closed'));
        return queueInsert(spec.name, () => {
          const stored = insertRow(doc);
          applyCounter(options?.counter);
          return stored;
        });
      },
      insertMany: (docs) => runWrite(() => {
        const write = () => inTransaction(spec.name, () => docs.map(spec.bulk ? insertBulkRow : insertRow));
        return spec.bulk ? bulk(write) : write();
      }),
      findById: (id) => run(() => (typeof id === 'string' ? selectById(id) : null)),
      findOne: (filter, options) => run(() => ((options?.sort ? undefined : selectUnique(filter)) ?? selectRows(filter, { limit: 1, ...(options?.sort ? { sort: options.sort } : {}) }))[0] ?? null),
      find: (filter, options = {}) => run(() => selectRows(filter, options)),
      findJson: (filter, options, view) => run(() => selectView(filter, options, view)),
      findJsonById: (id, view) => run(() => (typeof id === 'string' ? selectViewById(id, view) : null)),
      findJsonByIdNow: (id, view) => {
        if (closed) throw new StoreError('unavailable', 'the store is closed');
        return guard(spec.name, () => selectViewById(id, view));
      },
      scanJson,
      findPage: (filter, options: PageOptions) =>
        run((): Page<Doc> => {
          const items = selectRows(filter, { ...options, skip: (options.page - 1) * options.limit, limit: options.limit });
          return { items, total: countRows(filter, options.search) };
        }),
      count: (filter, search) => run(() => countRows(filter, search)),
      countUpTo: (filter, cap, search) => run(() => countRowsUpTo(filter, search, cap)),
      updateOne: (filter, update: Update, options) =>
        runWrite(() => {
          validateUpdate(update);
          return inTransaction(spec.name, () => updateOneSync(filter, update, options?.upsert ?? false));
        }),
      incrementEach: (field, amounts) =>
        run(() => {
          if (amounts.size === 0) return;
          validateUpdate({ $inc: { [field]: 0 } });
          inTransaction(spec.name, () => {
            for (const [id, by] of amounts) {
              const current = selectById(id);
              if (current) writeRow(applyUpdate(current, { $inc: { [field]: by } }));
            }
          });
        }),
      updateMany: (filter, update) =>
        runWrite(() => {
          validateUpdate(update);
          return inTransaction(spec.name, () => {
            const rows = selectRows(filter, {});
            for (const row of rows) writeRow(applyUpdate(row, update));
            return rows.length;
          });
        }),
      deleteOne: (filter, options) =>
        runWrite(() =>
          inTransaction(spec.name, () => {
            const current = selectRows(filter, { limit: 1 })[0];
            if (!current) return null;
            prepare(`DELETE FROM ${table} WHERE id = ?`).run(current._id);
            applyCounter(options?.counter);
            return current;
          }),
        ),
      deleteMany: (filter) =>
        runWrite(() => {
          const params: SqlValue[] = [];
          const result = prepare(`DELETE FROM ${table} WHERE ${where(parseFilter(filter), undefined, params)}`).run(...params);
          return Number(result.changes);
        }),
    };
  }

  return {
    kind: 'embedded',
    collection<T extends Doc>(name: string): Collection<T> {
      let collection = collections.get(name);
      if (!collection) {
        collection = makeCollection(collectionSpec(name));
        collections.set(name, collection);
      }
      return collection as unknown as Collection<T>;
    },
    explain(collection, filter, options) {
      this.collection(collection);
      return (explainers.get(collection) as Explain)(filter, options);
    },
    foreignWriteVersion(): number | null {
      if (closed) return null;
      return Number(prepare('PRAGMA data_version').get()?.data_version ?? 0);
    },
    // One transaction: a crash at any moment leaves all of the batch or none of it.
    async applyBatch(batch: WriteBatch): Promise<boolean> {
      while (builder.writesWait) await builder.writesWait;
      if (closed) throw new StoreError('unavailable', 'the store is closed');
      checkBatch(batch);
      const [anchor, ...rest] = batch.writes;
      if (!anchor) return true;
      return inTransaction(anchor.collection, () => {
        if (!batchOpsOf(anchor.collection).update(anchor.filter, anchor.update)) return false;
        for (const write of rest) batchOpsOf(write.collection).update(write.filter, write.update);
        for (const recount of batch.recounts ?? []) {
          const count = batchOpsOf(recount.of.collection).count(recount.of.filter);
          applyCounter({ collection: recount.collection, key: recount.key, inc: {}, set: { [recount.field]: count } });
        }
        return true;
      });
    },
    async finishPendingBatches(): Promise<number> {
      return 0; // batches commit in one transaction: none is ever left half done
    },
    // One transaction: readers on any connection see the old documents or all of the new ones.
    async moveStaged(move: StagedMove): Promise<number> {
      if (closed) throw new StoreError('unavailable', 'the store is closed');
      const { sql, params } = moveSql(move);
      for (const recount of move.recounts ?? []) {
        collectionSpec(recount.collection);
        collectionSpec(recount.of.collection);
      }
      return bulk(() =>
        inTransaction(move.to, () => {
          if (move.replace) db.exec(`DELETE FROM "${move.to}"`);
          const moved = Number(db.prepare(sql).run(...params, move.stageId).changes);
          db.prepare(`DELETE FROM "${move.from}" WHERE "stageId" = ?`).run(move.stageId);
          for (const recount of move.recounts ?? []) {
            const count = batchOpsOf(recount.of.collection).count(recount.of.filter);
            applyCounter({ collection: recount.collection, key: recount.key, inc: {}, set: { [recount.field]: count } });
          }
          return moved;
        }),
      );
    },
    async sweepExpired(): Promise<number> {
      while (builder.writesWait) await builder.writesWait;
      if (closed) return 0;
      const now = new Date().toISOString();
      let removed = 0;
      for (const spec of COLLECTIONS.filter((c) => c.ttl)) {
        const result = guard(spec.name, () => prepare(`DELETE FROM "${spec.name}" WHERE ${layoutOf(spec).fieldExpr('expiresAt')} <= ?`).run(now));
        removed += Number(result.changes);
      }
      return removed;
    },
    async appendMany(collection: string, docs: readonly NewDoc<Doc>[]): Promise<void> {
      if (closed) throw new StoreError('unavailable', 'the store is closed');
      collectionSpec(collection);
      if (docs.length === 0) return;
      await (await appendWriter()).append(collection, docs);
    },
    async appendFlat(collection: string, docs: FlatDocs, options?: AppendOptions): Promise<void> {
      if (closed) throw new StoreError('unavailable', 'the store is closed');
      collectionSpec(collection);
      if (docs.values.length === 0) return;
      if (!options?.inline) {
        await (await appendWriter()).appendFlat(collection, docs);
        return;
      }
      // The rows the worker would make, encoded before the transaction as it does, inserted here.
      const rows = encodeRows(collection, docsOfFlat(docs));
      while (builder.writesWait) await builder.writesWait;
      if (closed) throw new StoreError('unavailable', 'the store is closed');
      journalInMemory(() => inTransaction(collection, () => insertAppended(rows)));
    },
    async syncFieldIndexes(collection: string, wanted: readonly FieldIndexSpec[], options: FieldIndexSync = {}): Promise<void> {
      if (closed) throw new StoreError('unavailable', 'the store is closed');
      const spec = collectionSpec(collection);
      if (!spec.fieldIndexes) throw new StoreError('internal', `${collection} takes no field indexes`);
      const layout = layoutOf(spec);
      const byName = new Map<string, FieldIndexSpec>();
      for (const index of wanted) {
        assertFieldPath(index.field);
        byName.set(fieldIndexName(collection, index), index);
      }
      const reply = await builder.run(() => {
        const existing = [...loadFieldIndexes(true).byName.values()].filter((index) => index.collection === collection && (!options.scopes || options.scopes.includes(index.scope)));
        return {
          drop: options.keep ? [] : existing.filter((index) => !byName.has(index.name)).map((index) => index.name),
          create: [...byName]
            .filter(([name]) => !existing.some((index) => index.name === name))
            .map(([name, index]) => ({ name, sql: createFieldIndexSql(spec, layout, index), duplicateSql: duplicateValueSql(spec, layout, index) })),
        };
      });
      fieldIndexCache.version = -1;
      if (reply.ok) return;
      const refused = reply.duplicate ? byName.get(reply.duplicate.name) : undefined;
      if (refused && reply.duplicate) {
        const value = refused.kind === 'boolean' ? reply.duplicate.value === 1 : reply.duplicate.value;
        throw new DuplicateKeyError(collection, [refused.field], { value, scope: refused.scope });
      }
      throw new StoreError('internal', `building field indexes failed: ${reply.message}`);
    },
    async listFieldIndexes(collection: string): Promise<FieldIndexSpec[]> {
      collectionSpec(collection);
      return [...loadFieldIndexes(true).byName.values()]
        .filter((index) => index.collection === collection)
        .map(({ scope, field, kind, unique }) => ({ scope, field, kind, unique }));
    },
    async close(): Promise<void> {
      if (closed) return;
      await builder.idle();
      // Inserts already queued are written, not dropped: every group of them.
      do flushInserts();
      while (pendingInserts.length > 0 && !builder.writesWait);
      closed = true;
      await appender?.close();
      statements.clear();
      arrayStatements.clear();
      db.close();
    },
  };
}

const MAX_CACHED_STATEMENTS = 500;
/**
 * Reads of the database file are memory-mapped up to this size (hot records stay in memory).
 * Kept after measuring without it (`npm run bench`, 300,000 records, getById and list): GET by id
 * cost ~10% more CPU per request (78 µs instead of 71 µs), lists the same. The mapped pages
 * count in RSS as file-backed memory the kernel drops under pressure; nothing at start and no
 * bulk work (see bulk()) reads through the map, so it grows only with the records actually read.
 */
const MMAP_BYTES = 268435456;
/** The page cache (per connection), and its bound while bulk work runs (see bulk()). */
const CACHE_KB = 65536;
const BULK_CACHE_KB = 4096;
const SCAN_BATCH = 1000;
const STAGE_FIELDS = ['stageId', 'targetId', 'stagedAt'];

/**
 * `INSERT INTO <to> … SELECT … FROM <from> WHERE stageId = ? ON CONFLICT(id) DO UPDATE …`, the
 * remap as a CASE; params before the stage id. An upsert on the id, not `INSERT OR REPLACE`: that
 * would also delete every other row a staged record clashes with on a unique field, silently.
 */
function moveSql(move: StagedMove): { sql: string; params: SqlValue[] } {
  const from = layoutOf(collectionSpec(move.from));
  const to = layoutOf(collectionSpec(move.to));
  const missing = [...to.columns, ...STAGE_FIELDS].filter((column) => !from.columns.includes(column));
  if (missing.length > 0) throw new StoreError('internal', `${move.from} cannot stage ${move.to}: it lacks the columns ${missing.join(', ')}`);
  if (move.remap && !to.columns.includes(move.remap.field)) throw new StoreError('internal', `${move.to}.${move.remap.field} is not a column: it cannot be remapped`);
  const params: SqlValue[] = [];
  const values = to.columns.map((column) => {
    const entries = move.remap?.field === column ? Object.entries(move.remap.values) : [];
    if (entries.length === 0) return `"${column}"`;
    for (const [key, value] of entries) params.push(key, value);
    return `CASE "${column}" ${entries.map(() => 'WHEN ? THEN ?').join(' ')} ELSE "${column}" END`;
  });
  const columns = ['doc', ...to.columns].map((c) => `"${c}"`);
  const sql = `INSERT INTO "${move.to}" (id, ${columns.join(', ')}) SELECT "targetId", doc, ${values.join(', ')} FROM "${move.from}" WHERE "stageId" = ? ON CONFLICT(id) DO UPDATE SET ${columns.map((c) => `${c} = excluded.${c}`).join(', ')}`;
  return { sql, params };
}

/**
 * How many matches of a range make the scope's own order the better read for a page sorted by
 * something else: 1,000 per row asked for (skip + limit), within these bounds. Reading in the
 * scope's order costs about (records of the path / matches) rows per row of the page, each
 * parsed (~1.5 µs); through the index, every match costs ~0.15 µs (an index entry, the row read
 * only for the page): on a million records the two meet near 15,000 matches for a page of 20.
 */
const RANGE_PROBE_PER_ROW = 1000;
const RANGE_PROBE_MIN = 2000;
const RANGE_PROBE_MAX = 200_000;
/** How long a count may answer the same count again (in practice within one request, a microtask later). */
const COUNT_REUSE_MS = 100;

/** How one JsonView is read from a collection's columns (built once per view). */
interface ViewPlan {
  /** `SELECT id, <spread>, <tail…>, <fields…>[, expiresAt] FROM <table> WHERE ` */
  select: string;
  byIdSql: string;
  /** Index of expiresAt in a row, -1 when the collection does not expire documents. */
  expiresAt: number;
  tailKeys: string[];
  fields: ReadonlyArray<readonly [string, number]>;
}

/**
 * LIMIT and OFFSET as literals: SQLite plans a known LIMIT better (a bound one made a page read
 * half again as slow). The values are checked integers, never client text.
 */
function limitClause(options: FindOptions): string {
  if (options.limit === undefined && options.skip === undefined) return '';
  const limit = options.limit ?? -1;
  const skip = options.skip ?? 0;
  if (!Number.isSafeInteger(limit) || !Number.isSafeInteger(skip) || skip < 0) throw new StoreError('internal', 'limit and skip must be integers');
  return ` LIMIT ${limit} OFFSET ${skip}`;
}

/** Creates the collection's table; false when it already existed. */
function createTable(db: DatabaseSync, layout: Layout): boolean {
  const exists = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?").get(layout.table.slice(1, -1));
  if (exists) return false;
  db.exec(`CREATE TABLE ${layout.table} (${['id TEXT PRIMARY KEY', 'doc TEXT NOT NULL', ...layout.columnDefinitions].join(', ')}) STRICT`);
  return true;
}

/**
 * A table written before its spec gave some fields columns of their own (whole documents in
 * `doc`) is rebuilt in the new layout, inside the opening transaction, so no row is lost.
 */
function moveToColumns(db: DatabaseSync, spec: CollectionSpec, layout: Layout): void {
  const present = new Set(db.prepare(`PRAGMA table_info(${layout.table})`).all().map((row) => row.name as string));
  if (layout.columns.every((column) => present.has(column))) return;
  const indexes = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL").all(spec.name);
  for (const index of indexes) db.exec(`DROP INDEX "${index.name as string}"`);
  const previous = `"${spec.name}__previous_layout"`;
  db.exec(`ALTER TABLE ${layout.table} RENAME TO ${previous}`);
  createTable(db, layout);
  const insert = db.prepare(layout.insertSql);
  for (const row of db.prepare(`SELECT id, doc FROM ${previous}`).iterate()) {
    const doc = JSON.parse(row.doc as string) as Record<string, unknown>;
    insert.run(...layout.toRow({ ...doc, _id: row.id as string }));
  }
  db.exec(`DROP TABLE ${previous}`);
}

/**
 * Switching a fresh file to WAL needs an exclusive lock that SQLite takes without calling the
 * busy handler, so processes opening the same new database together get SQLITE_BUSY at once:
 * retry, within the busy timeout. (Only at open time, hence the synchronous sleep.)
 */
function setWalMode(db: DatabaseSync, timeoutMs: number): void {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      db.exec('PRAGMA journal_mode = WAL');
      return;
    } catch (error) {
      const errcode = (error as Error & { errcode?: number }).errcode;
      if (errcode === undefined || (errcode & 0xff) !== SQLITE_BUSY || Date.now() >= deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

/**
 * The fields of a unique index by its name (and its scope and table, for a field index: a write
 * to one collection can break another's index, e.g. a definition saved with its records moved).
 */
type UniqueIndex = { fields: string[]; scope?: string; collection?: string };

function translateError(collection: string, error: unknown, uniqueFieldsOf: (name: string) => UniqueIndex | undefined): unknown {
  if (!(error instanceof Error)) return error;
  const errcode = (error as Error & { errcode?: number }).errcode;
  if (errcode === SQLITE_CONSTRAINT_UNIQUE || errcode === SQLITE_CONSTRAINT_PRIMARYKEY) {
    const index = /index '([^']+)'/.exec(error.message)?.[1];
    const unique = index ? uniqueFieldsOf(index) : { fields: ['_id'] };
    return new DuplicateKeyError(unique?.collection ?? collection, unique?.fields ?? [], { cause: error, ...(unique?.scope === undefined ? {} : { scope: unique.scope }) });
  }
  if (errcode === SQLITE_BUSY || errcode === SQLITE_LOCKED || (errcode !== undefined && (errcode & 0xff) === SQLITE_BUSY)) {
    return new StoreError('busy', 'the database is busy; try again', { cause: error });
  }
  return error;
}
