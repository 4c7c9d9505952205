import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { describe } from 'vitest';
import { openMongoStore } from '../../src/store/mongo/mongo-store.ts';
import { describeStoreConformance } from './conformance.ts';

/**
 * The conformance suite against a real MongoDB, only when MONGODB_URL points at one
 * (e.g. mongodb://localhost:27017). Every run uses a fresh database and drops it afterwards.
 */
const url = process.env.MONGODB_URL;

if (!url) console.log('MongoDB conformance suite skipped: MONGODB_URL is not set');

/** The URL with its database name replaced by `name`, keeping credentials and options. */
function withDatabase(base: string, name: string): string {
  const match = /^(mongodb(?:\+srv)?:\/\/[^/?]*)(?:\/[^?]*)?(\?.*)?$/.exec(base);
  if (!match) throw new Error(`MONGODB_URL is not a mongodb:// or mongodb+srv:// URL`);
  return `${match[1]}/${name}${match[2] ?? ''}`;
}

describe.skipIf(!url)('MongoDB store', () => {
  describeStoreConformance('mongodb', async () => {
    const name = `dyn_test_${Date.now()}_${randomBytes(4).toString('hex')}`;
    const databaseUrl = withDatabase(url as string, name);
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
  });
});
