/**
 * The ceiling for `npm run bench`'s GET by id: the least a Node service can do to answer it —
 * `node:http` and `node:sqlite`, no framework, no parsing, no validation. One prepared
 * statement reads the stored JSON text, which is written into `{"success":true,"data":…}` as is,
 * with the headers set once by `writeHead`. Same table, seed data and durability settings as
 * bench/bare-server.ts (WAL, synchronous=FULL), so the gap between it and the bare Koa server is
 * what Koa and a parse/serialize round trip cost, and the gap to dyn is everything dyn adds.
 *
 * Started by bench/run.ts as its own process:
 *   DATA_DIR=<dir> [SEED_FILE=<json array of stored docs>] node bench/raw-server.ts
 * Serves GET <BENCH_PATH>/<id> only (anything else is a 404). Listens on 127.0.0.1 on PORT (0 by
 * default: any free port) and reports the port to the parent over IPC (`{ port }`), or prints it
 * when started by hand.
 */
import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { BENCH_PATH, type StoredDoc } from './records.ts';
import { serveBaseline } from './support.ts';

const dataDir = process.env.DATA_DIR;
if (!dataDir) throw new Error('raw-server: DATA_DIR is required');

const db = new DatabaseSync(join(dataDir, 'raw.db'));
db.exec('PRAGMA busy_timeout = 5000');
db.exec('PRAGMA journal_mode = WAL');
db.exec('PRAGMA synchronous = FULL');
db.exec('CREATE TABLE IF NOT EXISTS records (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, doc TEXT NOT NULL) STRICT');

if (process.env.SEED_FILE) {
  const insert = db.prepare('INSERT INTO records (id, created_at, doc) VALUES (?, ?, ?)');
  const docs = JSON.parse(readFileSync(process.env.SEED_FILE, 'utf8')) as StoredDoc[];
  db.exec('BEGIN');
  for (const doc of docs) insert.run(doc._id, doc.createdAt, JSON.stringify(doc));
  db.exec('COMMIT');
}

const byId = db.prepare('SELECT doc FROM records WHERE id = ?');
const PREFIX = `${BENCH_PATH}/`;
const NOT_FOUND = '{"success":false,"error":"Record not found"}';

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, ['Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(Buffer.byteLength(body))]);
  res.end(body);
}

const server = createServer((req, res) => {
  const url = req.url ?? '';
  if (req.method !== 'GET' || !url.startsWith(PREFIX)) return send(res, 404, NOT_FOUND);
  const row = byId.get(url.slice(PREFIX.length));
  if (!row) return send(res, 404, NOT_FOUND);
  send(res, 200, `{"success":true,"data":${row.doc as string}}`);
});
serveBaseline('raw server', server, () => db.close());
