import { openSqliteStore } from './sqlite/sqlite-store.ts';
import type { Store } from './types.ts';

export interface StoreConfig {
  databaseUrl: string | undefined;
  dataDir: string;
  sqliteSynchronous?: 'FULL' | 'NORMAL';
}

/**
 * DATABASE_URL unset: the embedded store in DATA_DIR; mongodb:// or mongodb+srv://: MongoDB. The
 * MongoDB driver is loaded only then: it adds ~30 MB to every process that loads it.
 */
export async function openStore(config: StoreConfig): Promise<Store> {
  if (config.databaseUrl) {
    const { openMongoStore } = await import('./mongo/mongo-store.ts');
    return openMongoStore(config.databaseUrl);
  }
  return openSqliteStore({ dataDir: config.dataDir, ...(config.sqliteSynchronous ? { synchronous: config.sqliteSynchronous } : {}) });
}
