import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isoText } from '../../src/store/sqlite/append-rows.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Doc, FlatDocs, FlatValue, Store } from '../../src/store/types.ts';
import { openEmbeddedTestStore, openMongoTestStore } from './open-stores.ts';

/**
 * appendMany (the audit log's buffered writes) stores what insertMany stores: every document is
 * written both ways and read back through the store, and the two must be equal but for the _id.
 * Runs on the embedded store, and on MongoDB when MONGODB_URL is set.
 */
const HEX_ID = /^[0-9a-f]{24}$/;
const when = new Date('2026-03-04T05:06:07.089Z');
const longMessage = 'GET /api/long → 200 '.repeat(150);

const withProto = JSON.parse('{"action":"api_call","message":"proto","__proto__":{"polluted":true},"createdAt":null}') as Record<string, unknown>;
const withFlatProto = JSON.parse('{"action":"api_call","__proto__":"text","message":"flat proto"}') as Record<string, unknown>;

/** Documents as callers hand them to appendMany, from the audit entry's own shapes to the odd ones. */
const CASES: Array<[string, Record<string, unknown>]> = [
  ['an api_call entry', { action: 'api_call', message: 'GET /api/items/1 → 200', source: 'endpoint', via: 'http', ip: '127.0.0.1', userId: null, method: 'GET', path: '/api/items/1', statusCode: 200, createdAt: when }],
  ['an error entry without via', { action: 'error', message: 'GET /api/x failed with 500', source: 'http', ip: '::1', userId: 'u1', method: 'GET', path: '/api/x', statusCode: 500, createdAt: when }],
  ['unicode and escapes', { action: 'api_call', message: 'héllo → 世界 🎉 "quoted" \\ back\nnew\tline \u0000 \u001f \u2028 \u007f', source: 'endpoint', path: '/ü', createdAt: when }],
  ['lone surrogates', { action: 'api_call', message: 'lone \ud800 and \udc00 end', source: 'endpoint', createdAt: when }],
  ['a long message', { action: 'api_call', message: longMessage, source: 'endpoint', createdAt: when }],
  ['nulls in every column and field', { action: null, message: null, source: null, ip: null, statusCode: null, createdAt: null }],
  ['missing columns', { message: 'no action, no date' }],
  ['undefined and non-finite members', { action: 'x', a: undefined, b: Number.NaN, c: Number.POSITIVE_INFINITY, d: -0, e: 1.5e300, f: true, g: false, createdAt: when }],
  ['a date outside the column', { action: 'x', at: when, early: new Date('1969-12-31T23:59:59.999Z'), createdAt: new Date('1970-01-01T00:00:00.000Z') }],
  ['an invalid date', { action: 'x', bad: new Date(Number.NaN), createdAt: when }],
  ['a far-future date', { action: 'x', createdAt: new Date('+012345-01-01T00:00:00.000Z') }],
  ['nested values', { action: 'x', data: { when, list: [when, 1, 'a', true, null, { deep: 'yes' }] }, createdAt: when }],
  ['an own __proto__ member', withProto],
  ['an own __proto__ member holding text', withFlatProto],
  ['integer-like keys', { action: 'x', '10': 'ten', '2': 'two', b: 'b', a: 'a', createdAt: when }],
  ['a string date column', { action: 'x', createdAt: '2020-01-01T00:00:00.000Z' }],
];

/** The audit log's buffered shape (audit-log.ts): what appendFlat is given for its entries. */
const AUDIT_FIELDS = ['action', 'message', 'source', 'via', 'ip', 'userId', 'method', 'path', 'statusCode', 'createdAt'];
const FLAT_CASES: Array<[string, FlatValue[]]> = [
  ['an api_call entry', ['api_call', 'GET /api/items/1 → 200', 'endpoint', 'http', '127.0.0.1', null, 'GET', '/api/items/1', 200, when.getTime()]],
  ['an error entry without via', ['error', 'GET /api/x failed with 500', 'http', undefined, '::1', 'u1', 'GET', '/api/x', 500, when.getTime()]],
  ['unicode and escapes', ['api_call', 'héllo → 世界 🎉 "quoted" \\ back\nnew\tline \u0000 \u001f \u2028 \u007f', 'endpoint', undefined, null, null, null, '/ü', null, when.getTime()]],
  ['lone surrogates', ['api_call', 'lone \ud800 and \udc00 end', 'endpoint', undefined, undefined, undefined, undefined, undefined, undefined, when.getTime()]],
  ['a long message', ['api_call', longMessage, 'endpoint', undefined, undefined, undefined, undefined, undefined, undefined, when.getTime()]],
  ['nulls in every column and field', [null, null, null, null, null, null, null, null, null, null]],
  ['missing columns', [undefined, 'no action, no date', undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined]],
  ['non-finite numbers and dates at the edges', ['x', 'n', 'endpoint', 'cron', '10.0.0.1', 'u2', 'POST', '/p', Number.NaN, 0]],
  ['a date before 1970 and a far-future one', ['x', 'early', 'endpoint', undefined, undefined, undefined, undefined, undefined, -1, Date.parse('+012345-01-01T00:00:00.000Z')]],
];

/** The document a flat entry stands for: what the audit log's toDoc builds for it. */
function docOfFlat(fields: readonly string[], values: readonly FlatValue[], dates: readonly string[]): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  fields.forEach((field, i) => {
    const value = values[i];
    if (value === undefined) return;
    if (field === '__proto__') Object.defineProperty(doc, field, { value, enumerable: true, writable: true, configurable: true });
    else doc[field] = dates.includes(field) && typeof value === 'number' ? new Date(value) : value;
  });
  return doc;
}

function describeAppendMany(label: string, open: () => Promise<{ store: Store; cleanup: () => Promise<void> }>): void {
  describe(`${label}: appendMany`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    const logs = () => store.collection('logs');
    const withoutId = (doc: Doc | null): Record<string, unknown> => {
      const { _id: _ignored, ...rest } = doc ?? {};
      return rest;
    };

    beforeAll(async () => {
      ({ store, cleanup } = await open());
    });
    afterAll(async () => {
      await cleanup();
    });
    beforeEach(async () => {
      await logs().deleteMany({});
    });

    for (const [name, doc] of CASES) {
      it(`stores ${name} as insertMany does`, async () => {
        const [inserted] = await logs().insertMany([doc]);
        const viaInsert = await logs().findById(inserted!._id);
        await logs().deleteMany({});
        await store.appendMany('logs', [doc]);
        const [viaAppend, ...more] = await logs().find({});
        expect(more).toEqual([]);
        expect(viaAppend!._id).toMatch(HEX_ID);
        expect(withoutId(viaAppend!)).toEqual(withoutId(viaInsert));
        // Same members in the same order (the order a client sees in the JSON).
        expect(Object.keys(viaAppend!)).toEqual(Object.keys(viaInsert!));
      });
    }

    it('stores a batch of every shape at once, in one call, each as insertMany does', async () => {
      const docs = CASES.map(([, doc]) => doc);
      const inserted = await logs().insertMany(docs);
      const viaInsert = await Promise.all(inserted.map((doc) => logs().findById(doc._id)));
      await logs().deleteMany({});
      await store.appendMany('logs', docs);
      const viaAppend = await logs().find({}, { sort: { _id: 1 } });
      expect(viaAppend.map(withoutId)).toEqual(viaInsert.map(withoutId));
    });

    it('stores batches of any size, each entry once, with distinct ids', async () => {
      for (const size of [1, 7, 129, 1000, 1237]) {
        await logs().deleteMany({});
        const docs = Array.from({ length: size }, (_, i) => ({ action: i % 2 ? 'api_call' : 'error', message: `m${i}`, n: i, createdAt: new Date(when.getTime() + i) }));
        await store.appendMany('logs', docs);
        const stored = await logs().find({}, { sort: { n: 1 } });
        expect(stored.map((doc) => doc.n)).toEqual(docs.map((doc) => doc.n));
        expect(new Set(stored.map((doc) => doc._id)).size).toBe(size);
        expect(stored.at(-1)).toMatchObject({ action: docs.at(-1)!.action, createdAt: docs.at(-1)!.createdAt.toISOString() });
      }
    });

    it('stores documents of a collection with JSON columns (records) as insertMany does', async () => {
      const records = () => store.collection('endpointdatas');
      const doc = { resourcePath: '/api/r', endpointId: 'e1', data: { name: 'ä → 🎉', n: 1, list: [1, { deep: null }], when }, createdAt: when, updatedAt: when, extra: 'kept' };
      const [inserted] = await records().insertMany([doc]);
      const viaInsert = await records().findById(inserted!._id);
      await records().deleteMany({});
      await store.appendMany('endpointdatas', [doc, { ...doc, data: null }]);
      const [viaAppend, withNull] = await records().find({}, { sort: { _id: 1 } });
      expect(withoutId(viaAppend!)).toEqual(withoutId(viaInsert));
      expect(withNull).toMatchObject({ resourcePath: '/api/r', data: null });
      await records().deleteMany({});
    });

    for (const [name, values] of FLAT_CASES) {
      it(`appendFlat stores ${name} as appendMany stores its document`, async () => {
        const doc = docOfFlat(AUDIT_FIELDS, values, ['createdAt']);
        await store.appendMany('logs', [doc]);
        const [viaMany] = await logs().find({});
        await logs().deleteMany({});
        await store.appendFlat('logs', { fields: AUDIT_FIELDS, dates: ['createdAt'], values });
        const [viaFlat, ...more] = await logs().find({});
        expect(more).toEqual([]);
        expect(viaFlat!._id).toMatch(HEX_ID);
        expect(withoutId(viaFlat!)).toEqual(withoutId(viaMany!));
        expect(Object.keys(viaFlat!)).toEqual(Object.keys(viaMany!));
      });
    }

    it('appendFlat stores a batch of every flat shape at once, each once and in order', async () => {
      await store.appendFlat('logs', { fields: AUDIT_FIELDS, dates: ['createdAt'], values: FLAT_CASES.flatMap(([, entry]) => entry) });
      const stored = await logs().find({}, { sort: { _id: 1 } });
      expect(stored.map((doc) => doc.message)).toEqual(FLAT_CASES.map(([, entry]) => entry[1]));
    });

    it('appendFlat keeps a field named __proto__ a member, as appendMany does', async () => {
      await store.appendMany('logs', [withFlatProto]);
      const [viaMany] = await logs().find({});
      await logs().deleteMany({});
      await store.appendFlat('logs', { fields: ['action', '__proto__', 'message'], dates: [], values: ['api_call', 'text', 'flat proto'] });
      const [viaFlat] = await logs().find({});
      expect(Object.getPrototypeOf(viaFlat)).toBe(Object.prototype);
      expect(Object.hasOwn(viaFlat!, '__proto__')).toBe(true);
      expect(withoutId(viaFlat!)).toEqual(withoutId(viaMany!));
    });

    it('appendFlat refuses a batch whose values do not fill whole documents, and stores none of it', async () => {
      const batch: FlatDocs = { fields: ['action', 'message'], dates: [], values: ['a', 'one', 'b'] };
      await expect(store.appendFlat('logs', batch)).rejects.toThrow(/2 fields holds 3 values/);
      await expect(store.appendFlat('logs', batch, { inline: true })).rejects.toThrow(/2 fields holds 3 values/);
      expect(await logs().count({})).toBe(0);
    });

    it('appendFlat inline (written by the caller, not the append worker) stores what appendFlat stores', async () => {
      const values = FLAT_CASES.flatMap(([, entry]) => entry);
      await store.appendFlat('logs', { fields: AUDIT_FIELDS, dates: ['createdAt'], values });
      const viaWorker = await logs().find({}, { sort: { _id: 1 } });
      await logs().deleteMany({});
      await store.appendFlat('logs', { fields: AUDIT_FIELDS, dates: ['createdAt'], values }, { inline: true });
      const inline = await logs().find({}, { sort: { _id: 1 } });
      expect(inline.map(withoutId)).toEqual(viaWorker.map(withoutId));
      expect(inline.map((doc) => Object.keys(doc))).toEqual(viaWorker.map((doc) => Object.keys(doc)));
      expect(new Set(inline.map((doc) => doc._id)).size).toBe(FLAT_CASES.length);
      for (const doc of inline) expect(doc._id).toMatch(HEX_ID);
    });

    it('appendFlat inline writes batches of any size (statements of 128, 32, 8 and 1 rows)', async () => {
      const fields = ['action', 'message', 'createdAt'];
      for (const size of [1, 9, 169, 1000]) {
        await logs().deleteMany({});
        const values = Array.from({ length: size }, (_, i) => ['api_call', `m${i}`, when.getTime() + i]).flat();
        await store.appendFlat('logs', { fields, dates: ['createdAt'], values }, { inline: true });
        const stored = await logs().find({}, { sort: { createdAt: 1 } });
        expect(stored.map((doc) => doc.message)).toEqual(Array.from({ length: size }, (_, i) => `m${i}`));
      }
    });

    it('keeps an _id it is given and gives the others new ones', async () => {
      await store.appendMany('logs', [{ _id: 'b00000000000000000000001', message: 'given' }, { message: 'new' }]);
      expect(await logs().findById('b00000000000000000000001')).toEqual({ _id: 'b00000000000000000000001', message: 'given' });
      const fresh = await logs().findOne({ message: 'new' });
      expect(fresh?._id).toMatch(HEX_ID);
    });

    it('entries appended are found by the audit log’s queries: by action, time range, search and page', async () => {
      const base = Date.parse('2026-01-01T00:00:00.000Z');
      const docs = Array.from({ length: 30 }, (_, i) => ({ action: i % 3 === 0 ? 'error' : 'api_call', message: `GET /api/q/${i} → ${i % 3 === 0 ? 500 : 200}`, source: 'endpoint', ip: `10.0.0.${i}`, createdAt: new Date(base + i * 1000) }));
      await store.appendMany('logs', docs);
      const errors = await logs().findPage(
        { action: 'error', createdAt: { $gte: new Date(base + 3000), $lt: new Date(base + 20_000) } },
        { page: 1, limit: 2, sort: { createdAt: -1, _id: -1 } },
      );
      expect(errors.total).toBe(6);
      expect(errors.items.map((doc) => doc.message)).toEqual(['GET /api/q/18 → 500', 'GET /api/q/15 → 500']);
      const found = await logs().findPage({}, { page: 1, limit: 10, sort: { createdAt: -1, _id: -1 }, search: { term: '/q/2', fields: ['message', 'action', 'source', 'ip'] } });
      expect(found.items.map((doc) => doc.message)).toEqual(['GET /api/q/29 → 200', 'GET /api/q/28 → 200', 'GET /api/q/27 → 500', 'GET /api/q/26 → 200', 'GET /api/q/25 → 200', 'GET /api/q/24 → 500', 'GET /api/q/23 → 200', 'GET /api/q/22 → 200', 'GET /api/q/21 → 500', 'GET /api/q/20 → 200']);
      expect(found.total).toBe(11);
    });
  });
}

describeAppendMany('embedded', () => openEmbeddedTestStore('dyn-append-'));

const url = process.env.MONGODB_URL;
describe.skipIf(!url)('MongoDB', () => {
  describeAppendMany('mongodb', () => openMongoTestStore(url as string));
});

describe('embedded: appended rows', () => {
  it('are the very rows insertMany writes: the same document text and column values', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'dyn-append-rows-'));
    const store = openSqliteStore({ dataDir });
    try {
      const docs = CASES.map(([, doc]) => doc);
      await store.collection('logs').insertMany(docs);
      const read = () => {
        const db = new DatabaseSync(join(dataDir, 'dyn.db'), { readOnly: true });
        try {
          return db.prepare('SELECT doc, "action", "createdAt" FROM logs ORDER BY rowid').all();
        } finally {
          db.close();
        }
      };
      const viaInsert = read();
      await store.collection('logs').deleteMany({});
      await store.appendMany('logs', docs);
      expect(read()).toEqual(viaInsert);
    } finally {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('rejects a batch with a value its text column cannot hold, and stores none of it', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'dyn-append-bad-'));
    const store = openSqliteStore({ dataDir });
    try {
      await expect(store.appendMany('logs', [{ action: 'ok' }, { action: 42 }])).rejects.toThrow(/text column/);
      expect(await store.collection('logs').count({})).toBe(0);
    } finally {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('isoText', () => {
  it('writes what toISOString writes, within a second, across seconds and for any year', () => {
    const start = Date.parse('2026-11-25T15:59:59.000Z');
    for (const ms of [start, start + 1, start + 9, start + 10, start + 99, start + 100, start + 999, start + 1000, start + 1001, start - 1, 0, -1, -1001, 253402300799999, 253402300800000, -62167219200001]) {
      expect(isoText(new Date(ms)), String(ms)).toBe(new Date(ms).toISOString());
    }
  });
});
