/**
 * The bench's resource, shared by both servers: one path, 6 fields (string, number, boolean,
 * array, datetime, object), and a deterministic generator for the seed records so every run
 * (and both servers) stores the same data.
 */
import { prng } from './support.ts';

export const BENCH_PATH = '/api/bench/items';

/** dyn's definition schema for the resource; bench/bare-server.ts validates the same by hand. */
export const DYN_SCHEMA = {
  title: { type: 'string', required: true, maxLength: 200 },
  price: { type: 'number', minimum: 0 },
  active: { type: 'boolean' },
  tags: { type: 'array', items: { type: 'string' }, maxItems: 100 },
  publishedAt: { type: 'datetime' },
  meta: { type: 'object' },
} as const;

export interface BenchRecord {
  title: string;
  price: number;
  active: boolean;
  tags: string[];
  publishedAt: string;
  meta: Record<string, unknown>;
}

/** A record as the bare server stores and returns it (the same flat shape dyn responds with). */
export type StoredDoc = BenchRecord & { _id: string; createdAt: string; updatedAt: string };

/** The body of every request in the POST scenario. */
export const POST_BODY: BenchRecord = {
  title: 'Benchmark item',
  price: 19.99,
  active: true,
  tags: ['bench', 'load', 'json'],
  publishedAt: '2026-11-21T10:00:00Z',
  meta: { sku: 'B-0001', weight: 1.25, dims: { w: 10, h: 4 } },
};

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];

export function seedRecords(count: number): BenchRecord[] {
  const random = prng(20261121);
  const pick = (): string => WORDS[Math.floor(random() * WORDS.length)] as string;
  const records: BenchRecord[] = [];
  for (let i = 0; i < count; i++) {
    records.push({
      title: `Item ${i} ${pick()} ${pick()}`,
      price: Math.round(random() * 100_000) / 100,
      active: random() < 0.5,
      tags: Array.from({ length: 1 + Math.floor(random() * 4) }, pick),
      publishedAt: new Date(Date.UTC(2025, 0, 1) + Math.floor(random() * 365 * 86_400_000)).toISOString(),
      meta: { sku: `SKU-${String(i).padStart(6, '0')}`, weight: Math.round(random() * 1000) / 100, color: pick() },
    });
  }
  return records;
}

/** 24-hex ids shaped like dyn's (seconds, 5 random bytes, counter), for the bare server's seed. */
export function bareSeedDocs(records: readonly BenchRecord[]): StoredDoc[] {
  const start = Date.now() - records.length;
  const seconds = Math.floor(start / 1000).toString(16).padStart(8, '0');
  return records.map((record, i) => {
    const at = new Date(start + i).toISOString();
    return { _id: `${seconds}ba5eba5e00${i.toString(16).padStart(6, '0')}`, ...record, createdAt: at, updatedAt: at };
  });
}
