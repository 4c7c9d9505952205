import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { openMongoStore } from '../../src/store/mongo/mongo-store.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { OpenedStore } from './conformance.ts';

/** An embedded store in a fresh temp directory; cleanup closes it and removes the directory. */
export async function openEmbeddedTestStore(prefix = 'dyn-store-'): Promise<OpenedStore> {
  const dataDir = await mkdtemp(join(tmpdir(), prefix));
  const store = openSqliteStore({ dataDir });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The URL with its database name replaced by `name`, keeping credentials and options. */
function withDatabase(base: string, name: string): string {
  const match = /^(mongodb(?:\+srv)?:\/\/[^/?]*)(?:\/[^?]*)?(\?.*)?$/.exec(base);
  if (!match) throw new Error(`MONGODB_URL is not a mongodb:// or mongodb+srv:// URL`);
  return `${match[1]}/${name}${match[2] ?? ''}`;
}

/** A MongoDB store on a fresh database of the server at `url`; cleanup closes it and drops the database. */
export async function openMongoTestStore(url: string): Promise<OpenedStore> {
  const name = `dyn_test_${Date.now()}_${randomBytes(4).toString('hex')}`;
  const databaseUrl = withDatabase(url, name);
  const store = await openMongoStore(databaseUrl);
  return {
    store,
    cleanup: async () => {
      await store.close();
      const client = new MongoClient(databaseUrl);
      try {
        await client.connect();
        await client.db(name).dropDatabase();
      } finally {
        await client.close();
      }
    },
  };
}
