import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fieldIndexName } from '../../src/store/field-index-name.ts';
import { openSqliteStore, type EmbeddedStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { FieldIndexSpec } from '../../src/store/types.ts';

// The plans SQLite runs list queries with on the embedded store, read with EXPLAIN QUERY PLAN:
// a partial index is only used when the query names its path as a literal, so these pin that
// filters, sorts and counts on an indexed field go through its index, and that creation order
// is read off the path's own index in both directions.
const PATH = '/api/shop/products';
const QUOTED = "/api/it's";
const price: FieldIndexSpec = { scope: PATH, field: 'data.price', kind: 'number', unique: false };
const sku: FieldIndexSpec = { scope: PATH, field: 'data.sku', kind: 'text', unique: true };
const quoted: FieldIndexSpec = { scope: QUOTED, field: 'data.price', kind: 'number', unique: false };
const PRICE_INDEX = fieldIndexName('endpointdatas', price);
const SKU_INDEX = fieldIndexName('endpointdatas', sku);
const PATH_INDEX = 'endpointdatas__resourcePath_createdAt__id';

let dataDir: string;
let store: EmbeddedStore;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'dyn-plans-'));
  store = openSqliteStore({ dataDir });
  const docs = Array.from({ length: 4000 }, (_, n) => {
    const at = new Date(Date.UTC(2026, 0, 1) + n * 1000);
    return {
      endpointId: 'e',
      resourcePath: n % 4 === 0 ? QUOTED : PATH,
      data: { title: `t${n}`, price: (n * 37) % 1000, price2: (n * 37) % 1000, sku: `S-${n}` },
      expiresAt: null,
      createdAt: at,
      updatedAt: at,
    };
  });
  await store.collection('endpointdatas').insertMany(docs);
  await store.syncFieldIndexes('endpointdatas', [price, sku, quoted]);
});

afterAll(async () => {
  await store.close();
  await rm(dataDir, { recursive: true, force: true });
});

const oneWay = (direction: 1 | -1) => ({ createdAt: direction, _id: direction });

describe('the embedded store plans list queries on indexed fields through their indexes', () => {
  it('indexes exist in sqlite_schema as partial indexes over the path', () => {
    const db = new DatabaseSync(join(dataDir, 'dyn.db'), { readOnly: true });
    try {
      const row = db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?").get(PRICE_INDEX);
      expect(String(row?.sql)).toContain(`WHERE "resourcePath" = '${PATH}'`);
      expect(db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?").get(SKU_INDEX)?.sql).toMatch(/^CREATE UNIQUE INDEX/);
    } finally {
      db.close();
    }
  });

  it('?price[gte]=…&limit=20: the page and its count go through the price index', () => {
    const plan = store.explain('endpointdatas', { resourcePath: PATH, 'data.price': { $gte: 900 } }, { sort: oneWay(1), limit: 20 });
    expect(plan.find.join('\n')).toContain(PRICE_INDEX);
    expect(plan.count.join('\n')).toContain(PRICE_INDEX);
  });

  it('a range most records match, on a page sorted by creation: read in creation order off the path index; the count still through the price index', () => {
    const plan = store.explain('endpointdatas', { resourcePath: PATH, 'data.price': { $gte: 0 } }, { sort: oneWay(1), limit: 1 });
    expect(plan.find.join('\n')).toContain(PATH_INDEX);
    expect(plan.find.join('\n')).not.toContain('TEMP B-TREE');
    expect(plan.count.join('\n')).toContain(PRICE_INDEX);
  });

  it('sort=-price: read off the price index, no sorting step', () => {
    const plan = store.explain('endpointdatas', { resourcePath: PATH }, { sort: { 'data.price': -1, ...oneWay(-1) }, limit: 20 });
    expect(plan.find.join('\n')).toContain(PRICE_INDEX);
    expect(plan.find.join('\n')).not.toContain('TEMP B-TREE');
  });

  it('sort=-createdAt and sort=createdAt, on any page: read off the path index, no sorting step', () => {
    for (const direction of [1, -1] as const) {
      const plan = store.explain('endpointdatas', { resourcePath: PATH }, { sort: oneWay(direction), skip: 1000, limit: 20 });
      expect(plan.find.join('\n')).toContain(PATH_INDEX);
      expect(plan.find.join('\n')).not.toContain('TEMP B-TREE');
    }
  });

  it('an equality on a unique field goes through its unique index', () => {
    const plan = store.explain('endpointdatas', { resourcePath: PATH, 'data.sku': 'S-5' }, { sort: oneWay(1), limit: 20 });
    expect(plan.find.join('\n')).toContain(SKU_INDEX);
  });

  it('a field without an index, or a value of another type, is not read through one', () => {
    const unindexed = store.explain('endpointdatas', { resourcePath: PATH, 'data.price2': { $gte: 900 } }, { sort: oneWay(1), limit: 20 });
    expect(unindexed.find.join('\n')).not.toContain('__fx_');
    const mistyped = store.explain('endpointdatas', { resourcePath: PATH, 'data.price': { $gte: '900' } }, { sort: oneWay(1), limit: 20 });
    expect(mistyped.find.join('\n')).not.toContain('__fx_');
  });

  it('a path holding a quote is a safely quoted literal, and its index is used', async () => {
    const filter = { resourcePath: QUOTED, 'data.price': { $gte: 900 } };
    expect(store.explain('endpointdatas', filter, { sort: oneWay(1), limit: 20 }).find.join('\n')).toContain(fieldIndexName('endpointdatas', quoted));
    const found = await store.collection('endpointdatas').find(filter, { sort: oneWay(1) });
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((doc) => doc.resourcePath === QUOTED && (doc.data as { price: number }).price >= 900)).toBe(true);
  });

  it('the same results through the index as through a full read of the path', async () => {
    const records = store.collection('endpointdatas');
    for (const [field, unindexed] of [['data.price', 'data.price2']] as const) {
      const through = await records.find({ resourcePath: PATH, [field]: { $gte: 500, $lt: 700 } }, { sort: { [field]: -1, ...oneWay(-1) } });
      const without = await records.find({ resourcePath: PATH, [unindexed]: { $gte: 500, $lt: 700 } }, { sort: { [unindexed]: -1, ...oneWay(-1) } });
      expect(through.map((doc) => doc._id)).toEqual(without.map((doc) => doc._id));
      expect(await records.count({ resourcePath: PATH, [field]: { $gte: 500 } })).toBe(await records.count({ resourcePath: PATH, [unindexed]: { $gte: 500 } }));
    }
  });
});

describe('a filtered page and then its total', () => {
  // The page's range probe counts the matches; the total that follows reuses that count only
  // while nothing was written, by this store or by another connection.
  const filter = { resourcePath: PATH, 'data.price': { $gte: 990 } };
  const page = { sort: oneWay(-1), limit: 20 };
  const at = new Date(Date.UTC(2027, 0, 1));
  const newRecord = (price: number) => ({ endpointId: 'e', resourcePath: PATH, data: { title: 'new', price, price2: price, sku: `N-${price}-${Math.random()}` }, expiresAt: null, createdAt: at, updatedAt: at });

  it('is the count of the matches, and counts a record written between the page and the total', async () => {
    const records = store.collection('endpointdatas');
    const expected = (await records.find(filter)).length;
    await records.find(filter, page);
    expect(await records.count(filter)).toBe(expected);

    await records.find(filter, page);
    await records.insertOne(newRecord(995));
    expect(await records.count(filter)).toBe(expected + 1);

    await records.find(filter, page);
    const other = openSqliteStore({ dataDir });
    try {
      await other.collection('endpointdatas').insertOne(newRecord(999));
    } finally {
      await other.close();
    }
    expect(await records.count(filter)).toBe(expected + 2);
    // A record that does not match changes the stamp, not the total.
    await records.find(filter, page);
    await records.insertOne(newRecord(5));
    expect(await records.count(filter)).toBe(expected + 2);
  });
});

describe('writes while an index is built', () => {
  it('wait for the build and are all stored; the index holds them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dyn-build-'));
    const other = openSqliteStore({ dataDir: dir });
    try {
      const records = other.collection('endpointdatas');
      const at = new Date();
      const doc = (n: number) => ({ endpointId: 'e', resourcePath: PATH, data: { sku: `S-${n}`, price: n }, expiresAt: null, createdAt: at, updatedAt: at });
      await records.insertMany(Array.from({ length: 20_000 }, (_, n) => doc(n)));
      const build = other.syncFieldIndexes('endpointdatas', [sku, price]);
      const writes = [records.insertOne(doc(20_000)), records.insertOne(doc(20_001)), records.updateOne({ 'data.sku': 'S-5' }, { $set: { 'data.price': -1 } }), other.appendMany('logs', [{ action: 'x', createdAt: at }])];
      await Promise.all([build, ...writes]);
      expect(await records.count({ resourcePath: PATH })).toBe(20_002);
      expect(await records.count({ resourcePath: PATH, 'data.sku': 'S-20001' })).toBe(1);
      expect(other.explain('endpointdatas', { resourcePath: PATH, 'data.price': -1 }, { sort: oneWay(1), limit: 20 }).find.join('\n')).toContain(PRICE_INDEX);
      expect((await records.find({ resourcePath: PATH, 'data.price': -1 })).map((d) => (d.data as { sku: string }).sku)).toEqual(['S-5']);
      await expect(records.insertOne(doc(1))).rejects.toMatchObject({ fields: ['data.sku'] });
    } finally {
      await other.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('two stores on one data directory', () => {
  it('an index one builds is used by the other at once; one the other drops is no longer planned, and queries keep working', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dyn-two-'));
    const a = openSqliteStore({ dataDir: dir });
    const b = openSqliteStore({ dataDir: dir });
    try {
      const at = new Date();
      await a.collection('endpointdatas').insertMany(Array.from({ length: 100 }, (_, n) => ({ endpointId: 'e', resourcePath: PATH, data: { price: n }, expiresAt: null, createdAt: at, updatedAt: at })));
      const filter = { resourcePath: PATH, 'data.price': { $gte: 90 } };
      const page = { sort: oneWay(1), limit: 20 };
      expect(await b.collection('endpointdatas').count(filter)).toBe(10); // b has planned without the index
      await a.syncFieldIndexes('endpointdatas', [price]);
      expect(b.explain('endpointdatas', filter, page).find.join('\n')).toContain(PRICE_INDEX);
      expect(await b.collection('endpointdatas').find(filter, page)).toHaveLength(10);
      await a.syncFieldIndexes('endpointdatas', []);
      expect(await b.collection('endpointdatas').find(filter, page)).toHaveLength(10);
      expect(b.explain('endpointdatas', filter, page).find.join('\n')).not.toContain(PRICE_INDEX);
      expect(await b.listFieldIndexes('endpointdatas')).toEqual([]);
    } finally {
      await a.close();
      await b.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
