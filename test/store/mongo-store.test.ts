import { describe } from 'vitest';
import { describeStoreConformance } from './conformance.ts';
import { openMongoTestStore } from './open-stores.ts';

/**
 * The conformance suite against a real MongoDB, only when MONGODB_URL points at one
 * (e.g. mongodb://localhost:27017). Every run uses a fresh database and drops it afterwards.
 */
const url = process.env.MONGODB_URL;

if (!url) console.log('MongoDB conformance suite skipped: MONGODB_URL is not set');

describe.skipIf(!url)('MongoDB store', () => {
  describeStoreConformance('mongodb', () => openMongoTestStore(url as string));
});
