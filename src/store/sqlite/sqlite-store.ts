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
  type NewDoc,
  type Page,
  type PageOptions,
  type Search,
  type SortSpec,
  type Store,
  type Update,
} from '../types.ts';
import { AppendWriter } from './append-writer.ts';
import { compileSearch, compileWhere, fieldExpr, type SqlValue } from './sql-filter.ts';

/**
 * The embedded store: one SQLite database in DATA_DIR holding a table per collection, each row
 * the JSON text of one document. node:sqlite is synchronous, so a statement never interleaves
 * with another in this process; BEGIN IMMEDIATE serialises read-modify-write against other
 * processes on the same file.
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
        db.exec(`CREATE TABLE IF NOT EXISTS "${spec.name}" (id TEXT PRIMARY KEY, doc TEXT NOT NULL) STRICT`);
        for (const index of spec.indexes) {
          const name = indexName(spec, index.fields);
          if (index.unique) uniqueIndexFields.set(name, [...index.fields]);
          const columns = index.fields.map(fieldExpr).join(', ');
          db.exec(`CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS "${name}" ON "${spec.name}" (${columns})`);
        }
        if (spec.ttl) db.exec(`CREATE INDEX IF NOT EXISTS "${spec.name}__expiresAt" ON "${spec.name}" (${fieldExpr('expiresAt')})`);
      }
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
  });

  const statements = new Map<string, StatementSync>();
  const prepare = (sql: string): StatementSync => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };

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
  let closed = false;

  const applyCounter = (counter: CounterChange | undefined): void => {
    if (!counter) return;
    if (!upserters.has(counter.collection)) makeCollection(collectionSpec(counter.collection));
    const upsert = upserters.get(counter.collection) as (filter: Filter, update: Update) => void;
    upsert(counter.key, { $inc: counter.inc, ...(counter.set ? { $set: counter.set } : {}) });
  };

  function makeCollection(spec: CollectionSpec): Collection {
    const table = `"${spec.name}"`;

    const where = (node: FilterNode, search: Search | undefined, params: SqlValue[]): string => {
      const clauses = [compileWhere(node, params)];
      if (search && search.term !== '') clauses.push(compileSearch(search.term, search.fields, params));
      if (spec.ttl) {
        const expires = fieldExpr('expiresAt');
        params.push(new Date().toISOString());
        clauses.push(`${expires} IS NULL OR ${expires} > ?`);
      }
      return clauses.map((c) => `(${c})`).join(' AND ');
    };

    const orderBy = (sort: SortSpec | undefined): string => {
      const parts = parseSort(sort).map(({ field, direction }) => `${fieldExpr(field)} ${direction === 1 ? 'ASC' : 'DESC'}`);
      parts.push('id ASC');
      return ` ORDER BY ${parts.join(', ')}`;
    };

    const selectRows = (filter: Filter, options: FindOptions): Doc[] => {
      const params: SqlValue[] = [];
      let sql = `SELECT doc FROM ${table} WHERE ${where(parseFilter(filter), options.search, params)}${orderBy(options.sort)}`;
      if (options.limit !== undefined || options.skip !== undefined) {
        sql += ' LIMIT ? OFFSET ?';
        params.push(options.limit ?? -1, options.skip ?? 0);
      }
      return prepare(sql).all(...params).map((row) => JSON.parse(row.doc as string) as Doc);
    };

    const countRows = (filter: Filter, search?: Search): number => {
      const params: SqlValue[] = [];
      const row = prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where(parseFilter(filter), search, params)}`).get(...params);
      return Number(row?.n ?? 0);
    };

    const insertRow = (doc: NewDoc<Doc>): Doc => {
      const stored = JSON.parse(JSON.stringify({ ...doc, _id: doc._id ?? newId() })) as Doc;
      prepare(`INSERT INTO ${table} (id, doc) VALUES (?, ?)`).run(stored._id, JSON.stringify(stored));
      return stored;
    };

    const writeRow = (doc: Record<string, unknown>): Doc => {
      const stored = JSON.parse(JSON.stringify(doc)) as Doc;
      prepare(`UPDATE ${table} SET doc = ? WHERE id = ?`).run(JSON.stringify(stored), stored._id);
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

    // Reading by id is the hot path of record reads: a primary-key lookup, expiry checked here.
    const selectById = (id: string): Doc | null => {
      const row = prepare(`SELECT doc FROM ${table} WHERE id = ?`).get(id);
      if (!row) return null;
      const doc = JSON.parse(row.doc as string) as Doc;
      if (spec.ttl && typeof doc.expiresAt === 'string' && doc.expiresAt <= new Date().toISOString()) return null;
      return doc;
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
    async sweepExpired(): Promise<number> {
      if (closed) return 0;
      const now = new Date().toISOString();
      let removed = 0;
      for (const spec of COLLECTIONS.filter((c) => c.ttl)) {
        const result = guard(spec.name, () => prepare(`DELETE FROM "${spec.name}" WHERE ${fieldExpr('expiresAt')} <= ?`).run(now));
        removed += Number(result.changes);
      }
      return removed;
    },
    async appendMany(collection: string, docs: readonly NewDoc<Doc>[]): Promise<void> {
      if (closed) throw new StoreError('unavailable', 'the store is closed');
      collectionSpec(collection);
      if (docs.length === 0) return;
      const rows = docs.map((doc): [string, string] => {
        const id = doc._id ?? newId();
        return [id, JSON.stringify({ ...doc, _id: id })];
      });
      appender ??= new AppendWriter(file, busyTimeoutMs);
      await appender.append(collection, rows);
    },
    async close(): Promise<void> {
      if (closed) return;
      flushInserts(); // inserts queued this turn are written, not dropped
      closed = true;
      await appender?.close();
      statements.clear();
      db.close();
    },
  };
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
