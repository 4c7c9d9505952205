import { MongoClient, MongoServerError, type Db, type Document } from 'mongodb';
import { newId } from '../../lib/ids.ts';
import { COLLECTIONS, collectionSpec } from '../collections.ts';
import { docsOfFlat } from '../flat-docs.ts';
import { jsonRowOf } from '../json-view.ts';
import { encodeKeys, encodeSet, unwrapEntries } from './key-codec.ts';
import { applyBatch, ensureBatchIndexes, finishPendingBatches, type BatchDriver } from './batches.ts';
import { listFieldIndexes, syncFieldIndexes } from './field-indexes.ts';
import { finishPendingMoves, moveStaged } from './staged-moves.ts';
import { assertFieldPath, equalityFields, escapeRegExp, parseFilter, parseSort, validateUpdate, type FilterNode, type Scalar } from '../filter.ts';
import {
  DuplicateKeyError,
  StoreError,
  type Collection,
  type CollectionSpec,
  type CounterChange,
  type Doc,
  type Filter,
  type FindOptions,
  type FlatDocs,
  type JsonRow,
  type JsonView,
  type NewDoc,
  type ScanOptions,
  type Search,
  type Store,
  type Update,
} from '../types.ts';

/**
 * The MongoDB adapter: a thin translation of the Store interface onto the official driver.
 * Writes use w: "majority" with journaling; ids are stored as 24-hex strings (not ObjectIds)
 * so that both stores hand out the same ids; dates are BSON dates, read back as ISO strings.
 * A driver error is never turned into a success: it propagates as StoreError or DuplicateKeyError.
 * Keys MongoDB cannot hold (`$…`, dotted, `__proto__`, in json values) are wrapped: key-codec.ts.
 */
export async function openMongoStore(url: string): Promise<Store> {
  const client = new MongoClient(url, {
    writeConcern: { w: 'majority', journal: true },
    serverSelectionTimeoutMS: 10_000,
  });
  try {
    await client.connect();
  } catch (error) {
    throw new StoreError('unavailable', `cannot connect to MongoDB: ${(error as Error).message}`, { cause: error });
  }
  const db = client.db(databaseName(url));
  await ensureIndexes(db);
  await guard('pendingbatches', () => ensureBatchIndexes(db));
  const batchDriver: BatchDriver = { filter: (name, filter) => buildFilter(collectionSpec(name), filter), update: toMongoUpdate, guard };

  const collections = new Map<string, Collection>();
  let closed = false;
  const isClosed = (): boolean => closed;
  const appendMany = async (collection: string, docs: readonly NewDoc<Doc>[]): Promise<void> => {
    if (docs.length === 0) return;
    const stored = docs.map((doc) => encodeKeys({ ...doc, _id: doc._id ?? newId() }) as Document);
    await guard(collection, () => db.collection(collectionSpec(collection).name).insertMany(stored, { ordered: true }));
  };
  return {
    kind: 'mongodb',
    collection<T extends Doc>(name: string): Collection<T> {
      let collection = collections.get(name);
      if (!collection) {
        collection = makeCollection(db, collectionSpec(name), isClosed);
        collections.set(name, collection);
      }
      return collection as unknown as Collection<T>;
    },
    appendMany,
    // Written by the caller either way (no background writer): `inline` changes nothing here.
    appendFlat: async (collection: string, docs: FlatDocs) => appendMany(collection, docsOfFlat(docs)),
    foreignWriteVersion(): number | null {
      return null; // other instances' writes are only seen by reading (see Revisions)
    },
    applyBatch(batch) {
      if (closed) return Promise.reject(new StoreError('unavailable', 'the store is closed'));
      return applyBatch(db, batchDriver, batch);
    },
    async finishPendingBatches(minAgeMs) {
      if (closed) return 0;
      return (await finishPendingBatches(db, batchDriver, minAgeMs)) + (await finishPendingMoves(db, guard, batchDriver.filter, minAgeMs));
    },
    moveStaged(move) {
      if (closed) return Promise.reject(new StoreError('unavailable', 'the store is closed'));
      return moveStaged(db, guard, batchDriver.filter, move);
    },
    async syncFieldIndexes(collection, wanted, options = {}) {
      if (closed) throw new StoreError('unavailable', 'the store is closed');
      await syncFieldIndexes(db, collectionSpec(collection), wanted, options, guard);
    },
    async listFieldIndexes(collection) {
      return (await listFieldIndexes(db, collectionSpec(collection), guard)).map(({ scope, field, kind, unique }) => ({ scope, field, kind, unique }));
    },
    async sweepExpired(): Promise<number> {
      // MongoDB's TTL monitor removes expired documents itself (about once a minute); reads filter
      // them out meanwhile. Sweeping here too keeps behaviour identical to the embedded store.
      if (closed) return 0;
      let removed = 0;
      for (const spec of COLLECTIONS.filter((c) => c.ttl)) {
        const result = await guard(spec.name, () => db.collection(spec.name).deleteMany({ expiresAt: { $lte: new Date() } }));
        removed += result.deletedCount;
      }
      return removed;
    },
    async close(): Promise<void> {
      closed = true;
      await client.close();
    },
  };
}

function databaseName(url: string): string {
  const withoutQuery = url.split('?')[0] ?? url;
  const afterHosts = withoutQuery.replace(/^mongodb(\+srv)?:\/\/[^/]*/, '');
  const name = decodeURIComponent(afterHosts.replace(/^\//, ''));
  return name || 'dyn';
}

async function ensureIndexes(db: Db): Promise<void> {
  for (const spec of COLLECTIONS) {
    const collection = db.collection(spec.name);
    for (const index of spec.indexes) {
      const keys = Object.fromEntries(index.fields.map((f) => [f, 1 as const]));
      const first = index.fields[0] as string;
      await guard(spec.name, () =>
        collection.createIndex(keys, {
          name: `${spec.name}__${index.fields.join('_')}`,
          ...(index.unique ? { unique: true, partialFilterExpression: { [first]: { $exists: true } } } : {}),
        }),
      );
    }
    if (spec.ttl) await guard(spec.name, () => collection.createIndex({ expiresAt: 1 }, { name: `${spec.name}__expiresAt`, expireAfterSeconds: 0 }));
  }
}

function toMongoFilter(node: FilterNode): Document {
  switch (node.kind) {
    case 'and':
      return node.children.length === 0 ? {} : { $and: node.children.map(toMongoFilter) };
    case 'or':
      return { $or: node.children.map(toMongoFilter) };
    case 'compare': {
      const { field, op, value } = node;
      if (op === '$exists') return value ? { [field]: { $ne: null } } : { [field]: null };
      if (op === '$has') return { [field]: { $elemMatch: { $eq: value as Scalar } } };
      return { [field]: { [op]: value } };
    }
  }
}

function buildFilter(spec: CollectionSpec, filter: Filter, search?: Search): Document {
  const clauses: Document[] = [toMongoFilter(parseFilter(filter))];
  if (search && search.term !== '') {
    const pattern = escapeRegExp(search.term);
    search.fields.forEach(assertFieldPath);
    // No fields to search: nothing matches (as in the embedded store); $or needs a non-empty list.
    clauses.push(
      search.fields.length > 0
        ? { $or: search.fields.map((field) => ({ [field]: { $regex: pattern, $options: 'i' } })) }
        : { _id: { $in: [] } },
    );
  }
  if (spec.ttl) clauses.push({ $or: [{ expiresAt: null }, { expiresAt: { $gt: new Date() } }] });
  return { $and: clauses };
}

function toMongoUpdate(update: Update): Document {
  validateUpdate(update);
  const out: Document = {};
  if (update.$set && Object.keys(update.$set).length > 0) out.$set = encodeSet(update.$set);
  if (update.$unset && update.$unset.length > 0) out.$unset = Object.fromEntries(update.$unset.map((f) => [f, '']));
  if (update.$inc && Object.keys(update.$inc).length > 0) out.$inc = update.$inc;
  // An update without operators matches and changes nothing (the server accepts an empty $set
  // since 5.0; the driver rejects an update document without any operator).
  if (Object.keys(out).length === 0) out.$set = {};
  return out;
}

function sortOf(sort: FindOptions['sort']): Document {
  const out: Document = {};
  for (const { field, direction } of parseSort(sort)) out[field] = direction;
  if (!('_id' in out)) out._id = 1;
  return out;
}

/**
 * BSON dates become ISO strings so that callers see the same values as from the embedded store;
 * objects with keys MongoDB cannot hold come back from their wrapper (key-codec.ts). Objects are
 * rebuilt with fromEntries (own data properties), so a stored `__proto__` key stays data.
 */
function fromMongo(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(fromMongo);
  if (value && typeof value === 'object') {
    if ((value as { _bsontype?: string })._bsontype === 'ObjectId') return String(value);
    const record = value as Record<string, unknown>;
    return unwrapEntries(record, fromMongo) ?? Object.fromEntries(Object.entries(record).map(([key, inner]) => [key, fromMongo(inner)]));
  }
  return value;
}

async function guard<T>(collection: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof MongoServerError && error.code === 11000) {
      throw new DuplicateKeyError(collection, duplicateKeyFields(collection, error), { cause: error });
    }
    if (error instanceof DuplicateKeyError || error instanceof StoreError) throw error;
    if (error instanceof Error && /Network|ServerSelection|Timeout|PoolCleared/.test(error.name)) {
      throw new StoreError('unavailable', `MongoDB is unavailable: ${error.message}`, { cause: error });
    }
    throw error;
  }
}

/**
 * The fields of the unique index a duplicate-key error is about. insertMany's bulk write error
 * carries no keyPattern, only the server's message naming the index ("... index: users__loginKey dup key: ...").
 */
function duplicateKeyFields(collection: string, error: MongoServerError): string[] {
  const keyPattern = (error as MongoServerError & { keyPattern?: Record<string, unknown> }).keyPattern;
  if (keyPattern) return Object.keys(keyPattern);
  const index = /index: (\S+) dup key/.exec(error.message)?.[1];
  if (index === '_id_') return ['_id'];
  const spec = COLLECTIONS.find((c) => c.name === collection);
  return [...(spec?.indexes.find((i) => `${collection}__${i.fields.join('_')}` === index)?.fields ?? [])];
}

/** The counter write that follows an insert or delete (in order, not atomically: see CounterChange). */
async function applyCounter(db: Db, counter: CounterChange | undefined): Promise<void> {
  if (!counter) return;
  collectionSpec(counter.collection);
  await guard(counter.collection, () =>
    db.collection(counter.collection).updateOne(
      counter.key,
      { $inc: counter.inc, ...(counter.set ? { $set: counter.set } : {}), $setOnInsert: { _id: newId() } },
      { upsert: true },
    ),
  );
}

function makeCollection(db: Db, spec: CollectionSpec, isClosed: () => boolean): Collection {
  const raw = db.collection<Document>(spec.name);
  const read = (doc: Document | null): Doc | null => (doc ? (fromMongo(doc) as Doc) : null);
  const g = <T>(work: () => Promise<T>): Promise<T> =>
    isClosed() ? Promise.reject(new StoreError('unavailable', 'the store is closed')) : guard(spec.name, work);
  // "The first match" is the first in _id order, as for findOne and in the embedded store.
  const firstById = { _id: 1 } as const;

  const findById = (id: string): Promise<Doc | null> => g(async () => read(await raw.findOne(buildFilter(spec, { _id: id }))));
  const find = (filter: Filter, options: FindOptions = {}): Promise<Doc[]> =>
    g(async () => {
      let cursor = raw.find(buildFilter(spec, filter, options.search)).sort(sortOf(options.sort));
      if (options.skip) cursor = cursor.skip(options.skip);
      if (options.limit !== undefined) cursor = cursor.limit(options.limit);
      return (await cursor.toArray()).map((d) => read(d) as Doc);
    });

  /** A driver cursor in (orderBy…, _id) order, handed out a page at a time; closed when the caller stops. */
  async function* scanJson(filter: Filter, view: JsonView, options: ScanOptions = {}): AsyncGenerator<JsonRow[]> {
    if (isClosed()) throw new StoreError('unavailable', 'the store is closed');
    const orderBy = options.orderBy ?? [];
    const batchSize = options.batchSize ?? 1000;
    const scanView: JsonView = { ...view, fields: [...new Set([...(view.fields ?? []), ...orderBy])] };
    const sort: Document = Object.fromEntries(orderBy.map((field) => [field, 1]));
    sort._id = 1;
    const cursor = raw.find(buildFilter(spec, filter)).sort(sort).batchSize(batchSize);
    try {
      let page: JsonRow[] = [];
      for (;;) {
        const doc = await guard(spec.name, () => cursor.next());
        if (!doc) break;
        page.push(jsonRowOf(read(doc) as Doc, scanView));
        if (page.length >= batchSize) {
          yield page;
          page = [];
        }
      }
      if (page.length > 0) yield page;
    } finally {
      await cursor.close();
    }
  }

  return {
    name: spec.name,
    scanJson,
    insertOne: (doc, options) =>
      g(async () => {
        const stored = encodeKeys({ ...doc, _id: doc._id ?? newId() }) as Document;
        await raw.insertOne(stored);
        await applyCounter(db, options?.counter);
        return read(stored) as Doc;
      }),
    insertMany: (docs: readonly NewDoc<Doc>[]) =>
      g(async () => {
        if (docs.length === 0) return [];
        const stored = docs.map((doc) => encodeKeys({ ...doc, _id: doc._id ?? newId() }) as Document);
        await raw.insertMany(stored, { ordered: true });
        return stored.map((d) => read(d) as Doc);
      }),
    findById: (id) => findById(id),
    findOne: (filter, options) => g(async () => read(await raw.findOne(buildFilter(spec, filter), { sort: sortOf(options?.sort) }))),
    find: (filter, options = {}) => find(filter, options),
    findJson: async (filter, options, view) => (await find(filter, options)).map((doc) => jsonRowOf(doc, view)),
    findJsonById: async (id, view) => {
      const doc = await findById(id);
      return doc ? jsonRowOf(doc, view) : null;
    },
    findPage: (filter, options) =>
      g(async () => {
        const query = buildFilter(spec, filter, options.search);
        const [docs, total] = await Promise.all([
          raw
            .find(query)
            .sort(sortOf(options.sort))
            .skip((options.page - 1) * options.limit)
            .limit(options.limit)
            .toArray(),
          raw.countDocuments(query),
        ]);
        return { items: docs.map((d) => read(d) as Doc), total };
      }),
    count: (filter, search) => g(() => raw.countDocuments(buildFilter(spec, filter, search))),
    countUpTo: (filter, cap, search) => g(() => raw.countDocuments(buildFilter(spec, filter, search), { limit: cap })),
    updateOne: (filter, update, options) =>
      g(async () => {
        const mongoUpdate = toMongoUpdate(update);
        // An upsert keeps an _id the filter gives by equality and otherwise gets a string id.
        if (options?.upsert && !('_id' in equalityFields(parseFilter(filter)))) mongoUpdate.$setOnInsert = { _id: newId() };
        const doc = await raw.findOneAndUpdate(buildFilter(spec, filter), mongoUpdate, {
          upsert: options?.upsert ?? false,
          returnDocument: 'after',
          sort: firstById,
        });
        return read(doc);
      }),
    incrementEach: (field, amounts) =>
      g(async () => {
        if (amounts.size === 0) return;
        await raw.bulkWrite([...amounts].map(([id, by]) => ({ updateOne: { filter: buildFilter(spec, { _id: id }), update: toMongoUpdate({ $inc: { [field]: by } }) } })), { ordered: false });
      }),
    updateMany: (filter, update) =>
      g(async () => (await raw.updateMany(buildFilter(spec, filter), toMongoUpdate(update))).matchedCount),
    deleteOne: (filter, options) =>
      g(async () => {
        const deleted = read(await raw.findOneAndDelete(buildFilter(spec, filter), { sort: firstById }));
        if (deleted) await applyCounter(db, options?.counter);
        return deleted;
      }),
    deleteMany: (filter) => g(async () => (await raw.deleteMany(buildFilter(spec, filter))).deletedCount),
  };
}
