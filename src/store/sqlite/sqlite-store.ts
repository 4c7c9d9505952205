import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { newId } from '../../lib/ids.ts';
import { COLLECTIONS, collectionSpec } from '../collections.ts';
import { applyUpdate } from '../document-update.ts';
import { equalityFields, parseFilter, parseSort, validateUpdate, type FilterNode } from '../filter.ts';
import {
  DuplicateKeyError,
  StoreError,
  type Collection,
  type CollectionSpec,
  type CounterChange,
  type Doc,
  type Filter,
  type FindOptions,
  type JsonRow,
  type JsonView,
  type NewDoc,
  type Page,
  type PageOptions,
  type Search,
  type SortSpec,
  type Store,
  type Update,
  type WriteBatch,
} from '../types.ts';
import { checkBatch } from '../batch.ts';
import { AppendWriter } from './append-writer.ts';
import { layoutOf, type Layout, type SqlValue } from './layout.ts';
import { compileSearch, compileWhere } from './sql-filter.ts';
import { jsonRowOf } from '../json-view.ts';

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

export function openSqliteStore(options: SqliteOptions): Store {
  mkdirSync(options.dataDir, { recursive: true });
  const file = join(options.dataDir, 'dyn.db');
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
  db.exec('PRAGMA cache_size = -65536');
  db.exec('PRAGMA mmap_size = 268435456');

  const uniqueIndexFields = new Map<string, string[]>();
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

  function guard<T>(collection: string, work: () => T): T {
    try {
      return work();
    } catch (error) {
      throw translateError(collection, error, uniqueIndexFields);
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
   */
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
    flushScheduled = false;
    const batch = pendingInserts;
    pendingInserts = [];
    if (batch.length === 0) return;
    if (closed) {
      for (const item of batch) item.reject(new StoreError('unavailable', 'the store is closed'));
      return;
    }
    const outcomes: Array<{ item: PendingInsert; doc?: Doc; error?: unknown }> = [];
    try {
      db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      const failure = translateError(batch[0]?.collection ?? '', error, uniqueIndexFields);
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
        outcomes.push({ item, error: translateError(item.collection, error, uniqueIndexFields) });
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
      const failure = translateError(batch[0]?.collection ?? '', error, uniqueIndexFields);
      for (const item of batch) item.reject(failure);
      return;
    }
    for (const outcome of outcomes) {
      if (outcome.error !== undefined) outcome.item.reject(outcome.error);
      else outcome.item.resolve(outcome.doc as Doc);
    }
  }

  const collections = new Map<string, Collection>();
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

    const where = (node: FilterNode, search: Search | undefined, params: SqlValue[]): string => {
      const clauses = [compileWhere(layout, node, params)];
      if (search && search.term !== '') clauses.push(compileSearch(layout, search.term, search.fields, params));
      if (spec.ttl) clauses.push(ttlClause(params));
      return clauses.map((c) => `(${c})`).join(' AND ');
    };

    const orderBy = (sort: SortSpec | undefined): string => {
      const parts = parseSort(sort).map(({ field, direction }) => `${layout.fieldExpr(field)} ${direction === 1 ? 'ASC' : 'DESC'}`);
      parts.push('id ASC');
      return ` ORDER BY ${parts.join(', ')}`;
    };

    const selectRows = (filter: Filter, options: FindOptions): Doc[] => {
      const params: SqlValue[] = [];
      const sql = `SELECT ${layout.selectList} FROM ${table} WHERE ${where(parseFilter(filter), options.search, params)}${orderBy(options.sort)}${limitClause(options)}`;
      return prepare(sql).all(...params).map((row) => layout.fromRow(row));
    };

    const countRows = (filter: Filter, search?: Search): number => {
      const params: SqlValue[] = [];
      const row = prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where(parseFilter(filter), search, params)}`).get(...params);
      return Number(row?.n ?? 0);
    };

    const insertSql = layout.insertSql;
    const insertRow = (doc: NewDoc<Doc>): Doc => {
      const stored = JSON.parse(JSON.stringify({ ...doc, _id: doc._id ?? newId() })) as Doc;
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
      let json = `{"_id":${JSON.stringify(row[0])}`;
      const spread = row[1];
      // Stored by JSON.stringify, so '{}' is the only empty object and members sit between the braces.
      if (typeof spread === 'string' && spread.length > 2) json += `,${spread.slice(1, -1)}`;
      for (let i = 0; i < plan.tailKeys.length; i++) {
        const value = row[2 + i];
        if (value !== null && value !== undefined) json += plan.tailKeys[i] + JSON.stringify(value);
      }
      const fields: Doc = { _id: row[0] as string };
      for (const [field, at] of plan.fields) fields[field] = row[at] ?? null;
      return { json: `${json}}`, fields };
    };
    const selectView = (filter: Filter, options: FindOptions, view: JsonView): JsonRow[] => {
      if (!layout.servesView(view)) return selectRows(filter, options).map((doc) => jsonRowOf(doc, view));
      const plan = planOf(view);
      const params: SqlValue[] = [];
      const sql = `${plan.select}${where(parseFilter(filter), options.search, params)}${orderBy(options.sort)}${limitClause(options)}`;
      return prepareArrays(sql).all(...params).map((row) => jsonRowOfValues(plan, row as unknown as SqlValue[]));
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

    const run = <T>(work: () => T): Promise<T> => {
      if (closed) return Promise.reject(new StoreError('unavailable', 'the store is closed'));
      try {
        return Promise.resolve(guard(spec.name, work));
      } catch (error) {
        return Promise.reject(error);
      }
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
      insertMany: (docs) => run(() => inTransaction(spec.name, () => docs.map(insertRow))),
      findById: (id) => run(() => (typeof id === 'string' ? selectById(id) : null)),
      findOne: (filter, options) => run(() => selectRows(filter, { limit: 1, ...(options?.sort ? { sort: options.sort } : {}) })[0] ?? null),
      find: (filter, options = {}) => run(() => selectRows(filter, options)),
      findJson: (filter, options, view) => run(() => selectView(filter, options, view)),
      findJsonById: (id, view) => run(() => (typeof id === 'string' ? selectViewById(id, view) : null)),
      findPage: (filter, options: PageOptions) =>
        run((): Page<Doc> => {
          const items = selectRows(filter, { ...options, skip: (options.page - 1) * options.limit, limit: options.limit });
          return { items, total: countRows(filter, options.search) };
        }),
      count: (filter, search) => run(() => countRows(filter, search)),
      updateOne: (filter, update: Update, options) =>
        run(() => {
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
        run(() => {
          validateUpdate(update);
          return inTransaction(spec.name, () => {
            const rows = selectRows(filter, {});
            for (const row of rows) writeRow(applyUpdate(row, update));
            return rows.length;
          });
        }),
      deleteOne: (filter, options) =>
        run(() =>
          inTransaction(spec.name, () => {
            const current = selectRows(filter, { limit: 1 })[0];
            if (!current) return null;
            prepare(`DELETE FROM ${table} WHERE id = ?`).run(current._id);
            applyCounter(options?.counter);
            return current;
          }),
        ),
      deleteMany: (filter) =>
        run(() => {
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
    foreignWriteVersion(): number | null {
      if (closed) return null;
      return Number(prepare('PRAGMA data_version').get()?.data_version ?? 0);
    },
    // One transaction: a crash at any moment leaves all of the batch or none of it.
    async applyBatch(batch: WriteBatch): Promise<boolean> {
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
    async sweepExpired(): Promise<number> {
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
      appender ??= new AppendWriter(file, busyTimeoutMs);
      await appender.append(collection, docs);
    },
    async close(): Promise<void> {
      if (closed) return;
      flushInserts(); // inserts queued this turn are written, not dropped
      closed = true;
      await appender?.close();
      statements.clear();
      arrayStatements.clear();
      db.close();
    },
  };
}

const MAX_CACHED_STATEMENTS = 500;

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

function translateError(collection: string, error: unknown, uniqueIndexFields: Map<string, string[]>): unknown {
  if (!(error instanceof Error)) return error;
  const errcode = (error as Error & { errcode?: number }).errcode;
  if (errcode === SQLITE_CONSTRAINT_UNIQUE || errcode === SQLITE_CONSTRAINT_PRIMARYKEY) {
    const index = /index '([^']+)'/.exec(error.message)?.[1];
    const fields = index ? (uniqueIndexFields.get(index) ?? []) : ['_id'];
    return new DuplicateKeyError(collection, fields, { cause: error });
  }
  if (errcode === SQLITE_BUSY || errcode === SQLITE_LOCKED || (errcode !== undefined && (errcode & 0xff) === SQLITE_BUSY)) {
    return new StoreError('busy', 'the database is busy; try again', { cause: error });
  }
  return error;
}
