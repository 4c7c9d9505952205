/**
 * The baseline for `npm run bench`: what a hand-written Koa + node:sqlite service for the same
 * resource would look like, with the same durability as dyn's default (WAL, synchronous=FULL).
 * One table, a JSON document per row, GET by id, GET list (page/limit, total from COUNT(*)) and
 * POST with a minimal hand-written validation of the bench's 6 fields.
 *
 * Started by bench/run.ts as its own process:
 *   DATA_DIR=<dir> [SEED_FILE=<json array of stored docs>] node bench/bare-server.ts
 * Listens on 127.0.0.1 on PORT (0 by default: any free port) and reports the port to the parent
 * over IPC (`{ port }`), or prints it when started by hand.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Router } from '@koa/router';
import Koa from 'koa';
import { BENCH_PATH, type StoredDoc } from './records.ts';
import { serveBaseline } from './support.ts';

const dataDir = process.env.DATA_DIR;
if (!dataDir) throw new Error('bare-server: DATA_DIR is required');

const db = new DatabaseSync(join(dataDir, 'bare.db'));
db.exec('PRAGMA busy_timeout = 5000');
db.exec('PRAGMA journal_mode = WAL');
db.exec('PRAGMA synchronous = FULL');
db.exec('CREATE TABLE IF NOT EXISTS records (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, doc TEXT NOT NULL) STRICT');
db.exec('CREATE INDEX IF NOT EXISTS records_created ON records (created_at, id)');

const insert = db.prepare('INSERT INTO records (id, created_at, doc) VALUES (?, ?, ?)');
const byId = db.prepare('SELECT doc FROM records WHERE id = ?');
const page = db.prepare('SELECT doc FROM records ORDER BY created_at, id LIMIT ? OFFSET ?');
const count = db.prepare('SELECT COUNT(*) AS n FROM records');

if (process.env.SEED_FILE) {
  const docs = JSON.parse(readFileSync(process.env.SEED_FILE, 'utf8')) as StoredDoc[];
  db.exec('BEGIN');
  for (const doc of docs) insert.run(doc._id, doc.createdAt, JSON.stringify(doc));
  db.exec('COMMIT');
}

const FIELDS = new Set(['title', 'price', 'active', 'tags', 'publishedAt', 'meta']);
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** The same 6 fields as dyn's definition: title required, the rest optional, nothing else. */
function validate(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'the body must be a JSON object';
  const b = body as Record<string, unknown>;
  for (const key of Object.keys(b)) if (!FIELDS.has(key)) return `unknown field ${key}`;
  if (typeof b.title !== 'string' || b.title.length > 200) return 'title must be a string of at most 200 characters';
  if (b.price !== undefined && (typeof b.price !== 'number' || !Number.isFinite(b.price) || b.price < 0)) return 'price must be a number ≥ 0';
  if (b.active !== undefined && typeof b.active !== 'boolean') return 'active must be a boolean';
  if (b.tags !== undefined && (!Array.isArray(b.tags) || b.tags.length > 100 || b.tags.some((t) => typeof t !== 'string'))) return 'tags must be an array of strings';
  if (b.publishedAt !== undefined && (typeof b.publishedAt !== 'string' || !ISO_DATE.test(b.publishedAt) || Number.isNaN(Date.parse(b.publishedAt)))) return 'publishedAt must be an ISO 8601 date';
  if (b.meta !== undefined && (typeof b.meta !== 'object' || b.meta === null || Array.isArray(b.meta))) return 'meta must be an object';
  return null;
}

async function readJson(req: NodeJS.ReadableStream, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new Error('too large');
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const app = new Koa();
const router = new Router();

router.get(`${BENCH_PATH}/:id`, (ctx) => {
  const row = byId.get(ctx.params.id as string);
  if (!row) {
    ctx.status = 404;
    ctx.body = { success: false, error: 'Record not found' };
    return;
  }
  ctx.body = { success: true, data: JSON.parse(row.doc as string) };
});

router.get(BENCH_PATH, (ctx) => {
  const pageNo = Math.max(1, Number(ctx.query.page ?? 1) || 1);
  const limit = Math.min(100, Math.max(1, Number(ctx.query.limit ?? 20) || 20));
  const items = page.all(limit, (pageNo - 1) * limit).map((row) => JSON.parse(row.doc as string) as unknown);
  const total = Number(count.get()?.n ?? 0);
  ctx.body = { success: true, data: items, meta: { page: pageNo, limit, total } };
});

router.post(BENCH_PATH, async (ctx) => {
  let body: unknown;
  try {
    body = await readJson(ctx.req, 1024 * 1024);
  } catch {
    ctx.status = 400;
    ctx.body = { success: false, error: 'Malformed JSON body' };
    return;
  }
  const problem = validate(body);
  if (problem) {
    ctx.status = 400;
    ctx.body = { success: false, error: `Invalid record: ${problem}` };
    return;
  }
  const now = new Date().toISOString();
  const doc = { _id: newId(), ...(body as Record<string, unknown>), createdAt: now, updatedAt: now };
  insert.run(doc._id, now, JSON.stringify(doc));
  ctx.status = 201;
  ctx.body = { success: true, data: doc };
});

app.use(router.routes());

let counter = randomBytes(3).readUIntBE(0, 3);
const processRandom = randomBytes(5).toString('hex');
function newId(): string {
  counter = (counter + 1) % 0xffffff;
  return Math.floor(Date.now() / 1000).toString(16).padStart(8, '0') + processRandom + counter.toString(16).padStart(6, '0');
}

const server = createServer(app.callback());
serveBaseline('bare server', server, () => db.close());
