// Write batches on MongoDB, which has no multi-document transaction without a replica set: the
// batch is recorded first, then applied, then its record deleted. A crash in between leaves the
// record, and `finish` (at start, and by any instance later) replays it; every write is a `$set` /
// `$unset`, so replaying what already landed changes nothing.
//
//   pendingbatches                    state     meaning after a crash
//   {seq: -1, state: 'writing'}       writing   not committed: dropped (nothing was applied yet)
//   {seq: 0..n, writes: <EJSON>}      -         the writes, in chunks (a document stays far below 16 MB)
//   {seq: -1, state: 'ready'}         ready     committed: replayed from the start, then deleted
import { BSON, type Db, type Document } from 'mongodb';
import { newId } from '../../lib/ids.ts';
import { checkBatch } from '../batch.ts';
import { DuplicateKeyError, type BatchRecount, type BatchWrite, type Filter, type Update, type WriteBatch } from '../types.ts';

export const PENDING_BATCHES = 'pendingbatches';
const WRITES_PER_CHUNK = 1000;
/** A batch still `writing` after this long belongs to a process that died before committing it. */
const ABANDONED_AFTER_MS = 10 * 60_000;

/** What the batch code needs from the adapter: its translations, so stored filters mean the same. */
export interface BatchDriver {
  filter(collection: string, filter: Filter): Document;
  update(update: Update): Document;
  guard<T>(collection: string, work: () => Promise<T>): Promise<T>;
}

type PendingDoc = { _id: string } & Document;

interface Header extends PendingDoc {
  _id: string;
  batchId: string;
  seq: -1;
  state: 'writing' | 'ready';
  recounts: string;
  createdAt: Date;
  readyAt?: Date;
}

// EJSON keeps dates as dates (a replayed `updatedAt` stays a BSON date) and `$set` keys as data.
const encode = (value: unknown): string => BSON.EJSON.stringify(value, { relaxed: false });
const decode = <T>(text: string): T => BSON.EJSON.parse(text, { relaxed: false }) as T;

export async function ensureBatchIndexes(db: Db): Promise<void> {
  await db.collection(PENDING_BATCHES).createIndex({ batchId: 1, seq: 1 }, { name: `${PENDING_BATCHES}__batchId_seq`, unique: true });
}

export async function applyBatch(db: Db, driver: BatchDriver, batch: WriteBatch): Promise<boolean> {
  checkBatch(batch);
  if (batch.writes.length === 0) return true;
  const pending = db.collection<PendingDoc>(PENDING_BATCHES);
  const batchId = newId();
  const header: Header = { _id: batchId, batchId, seq: -1, state: 'writing', recounts: encode(batch.recounts ?? []), createdAt: new Date() };
  await driver.guard(PENDING_BATCHES, async () => {
    await pending.insertOne(header);
    const chunks: PendingDoc[] = [];
    for (let at = 0; at < batch.writes.length; at += WRITES_PER_CHUNK) {
      chunks.push({ _id: newId(), batchId, seq: chunks.length, writes: encode(batch.writes.slice(at, at + WRITES_PER_CHUNK)) });
    }
    await pending.insertMany(chunks, { ordered: true });
    // The commit point: from here on the batch lands, whoever finishes it.
    await pending.updateOne({ _id: batchId }, { $set: { state: 'ready', readyAt: new Date() } });
  });
  return replay(db, driver, batchId, batch.writes, batch.recounts ?? []);
}

/** Replays committed batches at least `minAgeMs` old; drops uncommitted ones left by a dead process. */
export async function finishPendingBatches(db: Db, driver: BatchDriver, minAgeMs = 0): Promise<number> {
  const pending = db.collection<PendingDoc>(PENDING_BATCHES);
  const now = Date.now();
  const headers = (await driver.guard(PENDING_BATCHES, () => pending.find({ seq: -1 }).sort({ createdAt: 1 }).toArray())) as unknown as Header[];
  let finished = 0;
  for (const header of headers) {
    if (header.state !== 'ready') {
      if (now - header.createdAt.getTime() > ABANDONED_AFTER_MS) await forget(db, driver, header.batchId);
      continue;
    }
    if (now - (header.readyAt ?? header.createdAt).getTime() < minAgeMs) continue;
    const chunks = await driver.guard(PENDING_BATCHES, () => pending.find({ batchId: header.batchId, seq: { $gte: 0 } }).sort({ seq: 1 }).toArray());
    const writes = chunks.flatMap((chunk) => decode<BatchWrite[]>(chunk.writes as string));
    try {
      await replay(db, driver, header.batchId, writes, decode<BatchRecount[]>(header.recounts));
    } catch (error) {
      if (!(error instanceof DuplicateKeyError)) throw error; // the anchor was refused: the batch is gone
    }
    finished++;
  }
  return finished;
}

/** Applies the writes in order, then the recounts, then deletes the batch's record. */
async function replay(db: Db, driver: BatchDriver, batchId: string, writes: readonly BatchWrite[], recounts: readonly BatchRecount[]): Promise<boolean> {
  const [anchor, ...rest] = writes;
  if (!anchor) return true;
  let matched;
  try {
    matched = await driver.guard(anchor.collection, () =>
      db.collection(anchor.collection).updateOne(driver.filter(anchor.collection, anchor.filter), driver.update(anchor.update)),
    );
  } catch (error) {
    // A refused anchor (a duplicate key) wrote nothing: the batch is dropped, not retried. After
    // any other failure it may have landed, so the batch stays for finishPendingBatches.
    if (error instanceof DuplicateKeyError) await forget(db, driver, batchId);
    throw error;
  }
  if (matched.matchedCount === 0) {
    await forget(db, driver, batchId);
    return false;
  }
  // Consecutive writes to one collection go in one ordered bulk write.
  for (let at = 0; at < rest.length; ) {
    const collection = (rest[at] as BatchWrite).collection;
    const run: Document[] = [];
    for (; at < rest.length && (rest[at] as BatchWrite).collection === collection && run.length < WRITES_PER_CHUNK; at++) {
      const write = rest[at] as BatchWrite;
      run.push({ updateOne: { filter: driver.filter(collection, write.filter), update: driver.update(write.update) } });
    }
    await driver.guard(collection, () => db.collection(collection).bulkWrite(run as never, { ordered: true }));
  }
  for (const recount of recounts) {
    const count = await driver.guard(recount.of.collection, () => db.collection(recount.of.collection).countDocuments(driver.filter(recount.of.collection, recount.of.filter)));
    await driver.guard(recount.collection, () =>
      db.collection(recount.collection).updateOne(recount.key, { $set: { [recount.field]: count }, $setOnInsert: { _id: newId() } }, { upsert: true }),
    );
  }
  await forget(db, driver, batchId);
  return true;
}

async function forget(db: Db, driver: BatchDriver, batchId: string): Promise<void> {
  await driver.guard(PENDING_BATCHES, () => db.collection<PendingDoc>(PENDING_BATCHES).deleteMany({ batchId }));
}
