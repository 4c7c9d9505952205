import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { DuplicateKeyError, StoreError, type Store } from '../../src/store/types.ts';
import { describeStoreConformance } from './conformance.ts';
import { openEmbeddedTestStore } from './open-stores.ts';

const run = promisify(execFile);

async function freshDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'dyn-store-'));
}

describeStoreConformance('embedded', () => openEmbeddedTestStore());

describe('embedded store', () => {
  const dirs: string[] = [];
  const stores: Store[] = [];

  async function dir(): Promise<string> {
    const d = await freshDir();
    dirs.push(d);
    return d;
  }

  function open(dataDir: string, options: { busyTimeoutMs?: number } = {}): Store {
    const store = openSqliteStore({ dataDir, ...options });
    stores.push(store);
    return store;
  }

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
  });

  it('a new DATA_DIR and database are readable by their owner only, the -wal and -shm files too', async () => {
    const dataDir = join(await dir(), 'data');
    const logs = open(dataDir).collection('logs');
    await logs.insertOne({ name: 'secret-bearing' });
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    for (const name of ['dyn.db', 'dyn.db-wal', 'dyn.db-shm']) expect(statSync(join(dataDir, name)).mode & 0o777, name).toBe(0o600);
  });

  it('two stores opened on the same directory see each other’s writes', async () => {
    const dataDir = await dir();
    const a = open(dataDir).collection('logs');
    const b = open(dataDir).collection('logs');

    const doc = await a.insertOne({ name: 'from a' });
    expect(await b.findById(doc._id)).toEqual(doc);

    await b.updateOne({ _id: doc._id }, { $set: { name: 'from b' } });
    expect((await a.findById(doc._id))?.name).toBe('from b');

    await a.deleteOne({ _id: doc._id });
    expect(await b.count({})).toBe(0);
  });

  it('foreignWriteVersion stands still for the store\'s own writes and moves when another store writes', async () => {
    const dataDir = await dir();
    const a = open(dataDir);
    const b = open(dataDir);
    const before = a.foreignWriteVersion();
    await a.collection('logs').insertOne({ name: 'own write' });
    expect(a.foreignWriteVersion()).toBe(before);
    await b.collection('logs').insertOne({ name: 'other write' });
    expect(a.foreignWriteVersion()).not.toBe(before);
  });

  it('inserts issued together commit together, and a duplicate among them fails alone', async () => {
    const users = open(await dir()).collection('users');
    const results = await Promise.allSettled([
      users.insertOne({ loginKey: 'a' }),
      users.insertOne({ loginKey: 'b' }),
      users.insertOne({ loginKey: 'a' }),
      users.insertOne({ loginKey: 'c' }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateKeyError);
    expect((await users.find({}, { sort: { loginKey: 1 } })).map((u) => u.loginKey)).toEqual(['a', 'b', 'c']);
  });

  it('more inserts than one group commits are all stored, and each duplicate among them fails alone', async () => {
    const users = open(await dir()).collection('users');
    // Large enough that a group's savepoints journal well past SQLite's in-memory spill size.
    const padding = 'x'.repeat(2_000);
    const logins = Array.from({ length: 600 }, (_, i) => `user-${i}`);
    const duplicated = new Set([10, 300, 590]);
    const results = await Promise.allSettled(logins.map((login, i) => users.insertOne({ loginKey: duplicated.has(i) ? logins[i - 1] : login, padding })));
    expect(results.flatMap((r, i) => (r.status === 'rejected' ? [i] : []))).toEqual([...duplicated]);
    for (const i of duplicated) expect((results[i] as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateKeyError);
    const stored = await users.find({});
    expect(stored.map((u) => u.loginKey).sort()).toEqual(logins.filter((_, i) => !duplicated.has(i)).sort());
  });

  it('two stores on the same directory enforce the same unique indexes', async () => {
    const dataDir = await dir();
    await open(dataDir).collection('users').insertOne({ loginKey: 'ann' });
    await expect(open(dataDir).collection('users').insertOne({ loginKey: 'ann' })).rejects.toMatchObject({ name: 'DuplicateKeyError' });
  });

  it('interleaved $inc updates from two stores on the same directory lose no increments', async () => {
    const dataDir = await dir();
    const a = open(dataDir).collection('revisions');
    const b = open(dataDir).collection('revisions');
    await a.insertOne({ key: 'counter', n: 0 });

    const rounds = 200;
    await Promise.all(
      Array.from({ length: rounds }, (_, i) => (i % 2 === 0 ? a : b).updateOne({ key: 'counter' }, { $inc: { n: 1 } })),
    );
    expect((await a.findOne({ key: 'counter' }))?.n).toBe(rounds);
  });

  it('concurrent $inc upserts from separate processes on the same directory lose no increments', async () => {
    const dataDir = await dir();
    open(dataDir); // creates the schema before the workers race
    const storeModule = new URL('../../src/store/sqlite/sqlite-store.ts', import.meta.url).href;
    const perProcess = 150;
    const processes = 4;
    const script = `
      const { openSqliteStore } = await import(${JSON.stringify(storeModule)});
      const store = openSqliteStore({ dataDir: process.argv[1], busyTimeoutMs: 20000 });
      const revisions = store.collection('revisions');
      for (let i = 0; i < ${perProcess}; i++) {
        await revisions.updateOne({ key: 'counter' }, { $inc: { n: 1 } }, { upsert: true });
      }
      await store.close();
    `;
    // allSettled: every process has ended before the directory is removed, even when one fails.
    const results = await Promise.allSettled(
      Array.from({ length: processes }, () => run(process.execPath, ['--input-type=module', '-e', script, dataDir], { timeout: 60_000 })),
    );
    for (const result of results) if (result.status === 'rejected') throw result.reason;
    const revisions = open(dataDir).collection('revisions');
    expect(await revisions.find({ key: 'counter' })).toEqual([expect.objectContaining({ n: perProcess * processes })]);
  });

  it('inserts queued when the store closes are all written, more than one group of them too', async () => {
    const dataDir = await dir();
    const first = openSqliteStore({ dataDir });
    const inserts = Array.from({ length: 600 }, (_, i) => first.collection('users').insertOne({ loginKey: `user-${i}` }));
    await first.close();
    expect((await Promise.allSettled(inserts)).filter((r) => r.status === 'rejected')).toEqual([]);
    expect(await open(dataDir).collection('users').count({})).toBe(600);
  });

  it('data persists across close and reopen', async () => {
    const dataDir = await dir();
    const first = openSqliteStore({ dataDir });
    const doc = await first.collection('users').insertOne({ loginKey: 'ann', createdAt: new Date('2024-01-02T03:04:05.006Z') });
    await first.close();

    const second = open(dataDir);
    expect(await second.collection('users').findById(doc._id)).toEqual({
      _id: doc._id,
      loginKey: 'ann',
      createdAt: '2024-01-02T03:04:05.006Z',
    });
    await expect(second.collection('users').insertOne({ loginKey: 'ann' })).rejects.toMatchObject({ name: 'DuplicateKeyError' });
  });

  it('a records table written in the old layout (whole documents in doc) is moved to columns when the store opens', async () => {
    const dataDir = await dir();
    const later = new Date(Date.now() + 60 * 60 * 1000).toISOString();
    const old = [
      {
        _id: 'a00000000000000000000001',
        endpointId: 'e1',
        resourcePath: '/old',
        data: { x: 1, title: 'one', nested: { deep: [1, { k: 'v' }, null], flag: true }, none: null },
        expiresAt: null,
        createdAt: '2024-01-02T00:00:00.000Z',
        updatedAt: '2024-01-05T00:00:00.000Z',
      },
      {
        _id: 'a00000000000000000000002',
        endpointId: 'e1',
        resourcePath: '/old',
        data: { x: 2, tags: ['a', 'b'] },
        expiresAt: later,
        createdAt: '2024-01-01T00:00:00.000Z',
        updatedAt: '2024-01-01T00:00:00.000Z',
      },
      // No expiresAt at all, and an empty data.
      { _id: 'a00000000000000000000003', endpointId: 'e2', resourcePath: '/other', data: {}, createdAt: '2024-01-03T00:00:00.000Z', updatedAt: '2024-01-03T00:00:00.000Z' },
    ];
    const legacy = new DatabaseSync(join(dataDir, 'dyn.db'));
    legacy.exec('CREATE TABLE "endpointdatas" (id TEXT PRIMARY KEY, doc TEXT NOT NULL) STRICT');
    legacy.exec(`CREATE INDEX "endpointdatas__endpointId" ON "endpointdatas" (json_extract(doc, '$.endpointId'))`);
    legacy.exec(
      `CREATE INDEX "endpointdatas__resourcePath_createdAt__id" ON "endpointdatas" (json_extract(doc, '$.resourcePath'), json_extract(doc, '$.createdAt'), id)`,
    );
    legacy.exec(`CREATE INDEX "endpointdatas__expiresAt" ON "endpointdatas" (json_extract(doc, '$.expiresAt'))`);
    const insert = legacy.prepare('INSERT INTO "endpointdatas" (id, doc) VALUES (?, ?)');
    for (const doc of old) insert.run(doc._id, JSON.stringify(doc));
    legacy.close();

    const first = openSqliteStore({ dataDir });
    try {
      const records = first.collection('endpointdatas');
      for (const doc of old) expect(await records.findById(doc._id)).toStrictEqual(doc);
      expect(await records.findById(old[2]?._id as string)).not.toHaveProperty('expiresAt');
      expect(await records.find({ resourcePath: '/old' }, { sort: { createdAt: 1 } })).toStrictEqual([old[1], old[0]]);
      expect(await records.find({ 'data.x': 1 })).toStrictEqual([old[0]]);
      expect(await records.find({ 'data.x': { $gte: 1 } }, { sort: { 'data.x': -1 } })).toStrictEqual([old[1], old[0]]);
      expect(await records.find({ 'data.nested.flag': true, 'data.tags': { $exists: false } })).toStrictEqual([old[0]]);
      expect(await records.find({ 'data.tags': { $has: 'b' } })).toStrictEqual([old[1]]);
      expect(await records.find({ expiresAt: null })).toStrictEqual([old[0], old[2]]);
      expect(await records.count({ endpointId: 'e1' })).toBe(2);
      const view = { spread: 'data', tail: ['createdAt', 'updatedAt', 'expiresAt'] };
      expect(JSON.parse((await records.findJsonById(old[0]?._id as string, view))?.json ?? 'null')).toStrictEqual({
        _id: old[0]?._id,
        ...old[0]?.data,
        createdAt: old[0]?.createdAt,
        updatedAt: old[0]?.updatedAt,
      });

      const added = await records.insertOne({ endpointId: 'e2', resourcePath: '/other', data: { y: 1 }, expiresAt: null, createdAt: new Date('2024-02-01T00:00:00.000Z'), updatedAt: new Date('2024-02-01T00:00:00.000Z') });
      expect(await records.find({ resourcePath: '/other' }, { sort: { createdAt: 1 } })).toStrictEqual([old[2], added]);
      expect(await records.updateOne({ _id: old[1]?._id as string }, { $set: { 'data.x': 3 } })).toStrictEqual({ ...old[1], data: { x: 3, tags: ['a', 'b'] } });
      expect(await records.count({})).toBe(4);
    } finally {
      await first.close();
    }

    const inspect = new DatabaseSync(join(dataDir, 'dyn.db'), { readOnly: true });
    try {
      const columns = inspect.prepare('PRAGMA table_info("endpointdatas")').all().map((row) => row.name);
      expect(columns).toEqual(expect.arrayContaining(['id', 'doc', 'resourcePath', 'endpointId', 'createdAt', 'updatedAt', 'expiresAt', 'data']));
      // The fields now live in their columns, not in doc, and the indexes read the columns.
      const stored = inspect.prepare('SELECT doc, "resourcePath", "data" FROM "endpointdatas" WHERE id = ?').get(old[0]?._id as string);
      expect(stored?.resourcePath).toBe('/old');
      expect(JSON.parse(stored?.data as string)).toStrictEqual(old[0]?.data);
      expect(JSON.parse(stored?.doc as string)).not.toHaveProperty('resourcePath');
      expect(JSON.parse(stored?.doc as string)).not.toHaveProperty('data');
      const indexes = inspect.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'endpointdatas' AND sql IS NOT NULL").all();
      expect(indexes.map((index) => index.name)).toEqual(
        expect.arrayContaining(['endpointdatas__endpointId', 'endpointdatas__resourcePath_createdAt__id', 'endpointdatas__expiresAt']),
      );
      for (const index of indexes) expect(index.sql).not.toMatch(/json_extract\(doc/);
      expect(inspect.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'endpointdatas%'").all().map((row) => row.name)).toEqual(['endpointdatas']);
    } finally {
      inspect.close();
    }

    // Opening again finds the columns in place and changes nothing.
    const second = open(dataDir).collection('endpointdatas');
    expect(await second.count({})).toBe(4);
    expect(await second.findById(old[0]?._id as string)).toStrictEqual(old[0]);
    expect(await second.findById(old[2]?._id as string)).toStrictEqual(old[2]);
    expect((await second.find({ resourcePath: '/old' }, { sort: { createdAt: 1 } })).map((doc) => doc._id)).toEqual([old[1]?._id, old[0]?._id]);
    const reread = new DatabaseSync(join(dataDir, 'dyn.db'), { readOnly: true });
    try {
      expect(reread.prepare('PRAGMA table_info("endpointdatas")').all().map((row) => row.name)).toEqual([
        'id',
        'doc',
        'resourcePath',
        'endpointId',
        'createdAt',
        'updatedAt',
        'expiresAt',
        'data',
      ]);
    } finally {
      reread.close();
    }
  });

  it('the database file uses the WAL journal', async () => {
    const dataDir = await dir();
    open(dataDir);
    const db = new DatabaseSync(join(dataDir, 'dyn.db'), { readOnly: true });
    try {
      expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    } finally {
      db.close();
    }
  });

  it('a write blocked by another connection fails with a bounded busy StoreError instead of hanging', async () => {
    const dataDir = await dir();
    const store = open(dataDir, { busyTimeoutMs: 100 });
    const blocker = new DatabaseSync(join(dataDir, 'dyn.db'));
    blocker.exec('BEGIN IMMEDIATE');
    try {
      const started = Date.now();
      const error = await store
        .collection('logs')
        .insertOne({ name: 'blocked' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect(error).toMatchObject({ code: 'busy' });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      blocker.exec('ROLLBACK');
      blocker.close();
    }
    expect(await store.collection('logs').insertOne({ name: 'after' })).toMatchObject({ name: 'after' });
  });

  it('after close, operations reject with an unavailable StoreError', async () => {
    const store = openSqliteStore({ dataDir: await dir() });
    await store.close();
    await expect(store.collection('logs').find({})).rejects.toMatchObject({ name: 'StoreError', code: 'unavailable' });
  });
});
