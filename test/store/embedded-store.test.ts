import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { DuplicateKeyError, StoreError, type Store } from '../../src/store/types.ts';
import { describeStoreConformance } from './conformance.ts';

const run = promisify(execFile);

async function freshDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'dyn-store-'));
}

describeStoreConformance('embedded', async () => {
  const dataDir = await freshDir();
  const store = openSqliteStore({ dataDir });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
});

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
