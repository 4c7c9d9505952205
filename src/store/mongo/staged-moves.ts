// Store.moveStaged on MongoDB, which has no multi-document transaction without a replica set.
// The move is recorded first, then run server-side, then its record deleted, then the stage:
//
//   step                                                   after a crash here
//   1. insert {_id, move, createdAt} into pendingmoves     nothing happened yet, or 2–4 are replayed
//   2. replace: deleteMany({}) on the target               replayed from 2 by finishPendingMoves
//   3. aggregate the stage → $merge into the target,       replayed from 2 (idempotent: 2 empties, 3 upserts by _id,
//      then the recounts ($set of a count)                 a recount sets the count again)
//   4. delete the pendingmoves record                      the stage is left: swept by age (see import)
//   5. deleteMany the stage
//
// Step 4 comes before 5: a replay after 5 would find an empty stage and, for replace, empty the target.
// A replay never races the move it finishes: a move is replayed only once its claim is an hour old
// (a $merge of millions of documents takes minutes), and a replayer claims it anew first, so two
// instances never replay the same move.
import { BSON, type Db, type Document } from 'mongodb';
import { newId } from '../../lib/ids.ts';
import { collectionSpec } from '../collections.ts';
import type { BatchRecount, Filter, StagedMove } from '../types.ts';

export const PENDING_MOVES = 'pendingmoves';
const CLAIM_MS = 60 * 60_000;

type Guard = <T>(collection: string, work: () => Promise<T>) => Promise<T>;
/** The adapter's filter translation (TTL clause included), so a recount counts what reads see. */
type FilterOf = (collection: string, filter: Filter) => Document;

/** Remap keys are names with spaces and slashes: stored as a list of pairs, never as document keys. */
interface StoredMove {
  from: string;
  stageId: string;
  to: string;
  replace: boolean;
  remap: { field: string; values: Array<[string, string]> } | null;
  /** EJSON, so filter keys and values stay data. */
  recounts: string;
}

export async function moveStaged(db: Db, guard: Guard, filterOf: FilterOf, move: StagedMove): Promise<number> {
  collectionSpec(move.from);
  collectionSpec(move.to);
  const id = newId();
  const stored: StoredMove = {
    from: move.from,
    stageId: move.stageId,
    to: move.to,
    replace: move.replace,
    remap: move.remap ? { field: move.remap.field, values: Object.entries(move.remap.values) } : null,
    recounts: BSON.EJSON.stringify(move.recounts ?? [], { relaxed: false }),
  };
  const now = new Date();
  await guard(PENDING_MOVES, () => db.collection<Document>(PENDING_MOVES).insertOne({ _id: id as never, move: stored, createdAt: now, claimedAt: now }));
  return run(db, guard, filterOf, id, move);
}

/** Runs again every move a crash interrupted (claimed over an hour ago, and at least `minAgeMs`); returns how many. */
export async function finishPendingMoves(db: Db, guard: Guard, filterOf: FilterOf, minAgeMs = 0): Promise<number> {
  const cutoff = new Date(Date.now() - Math.max(minAgeMs, CLAIM_MS));
  const pending = await guard(PENDING_MOVES, () => db.collection<Document>(PENDING_MOVES).find({ claimedAt: { $lte: cutoff } }).toArray());
  let finished = 0;
  for (const candidate of pending) {
    const stored = await guard(PENDING_MOVES, () => db.collection<Document>(PENDING_MOVES).findOneAndUpdate({ _id: candidate._id, claimedAt: { $lte: cutoff } }, { $set: { claimedAt: new Date() } }));
    if (!stored) continue; // another instance claimed it first
    finished++;
    const raw = stored.move as StoredMove;
    const move: StagedMove = {
      from: raw.from,
      stageId: raw.stageId,
      to: raw.to,
      replace: raw.replace,
      ...(raw.remap ? { remap: { field: raw.remap.field, values: Object.fromEntries(raw.remap.values) } } : {}),
      recounts: BSON.EJSON.parse(raw.recounts ?? '[]', { relaxed: false }) as BatchRecount[],
    };
    await run(db, guard, filterOf, String(stored._id), move);
  }
  return finished;
}

async function run(db: Db, guard: Guard, filterOf: FilterOf, recordId: string, move: StagedMove): Promise<number> {
  const target = db.collection(move.to);
  if (move.replace) await guard(move.to, () => target.deleteMany({}));
  const entries = Object.entries(move.remap?.values ?? {});
  const set: Document = { _id: '$targetId' };
  if (move.remap && entries.length > 0) {
    const field = `$${move.remap.field}`;
    set[move.remap.field] = { $switch: { branches: entries.map(([from, to]) => ({ case: { $eq: [field, from] }, then: to })), default: field } };
  }
  const pipeline: Document[] = [
    { $match: { stageId: move.stageId } },
    { $set: set },
    { $unset: ['stageId', 'targetId', 'stagedAt'] },
    { $merge: { into: move.to, on: '_id', whenMatched: 'replace', whenNotMatched: 'insert' } },
  ];
  await guard(move.to, () => db.collection(move.from).aggregate(pipeline).toArray());
  const moved = await guard(move.from, () => db.collection(move.from).countDocuments({ stageId: move.stageId }));
  for (const recount of move.recounts ?? []) {
    const count = await guard(recount.of.collection, () => db.collection(recount.of.collection).countDocuments(filterOf(recount.of.collection, recount.of.filter)));
    await guard(recount.collection, () => db.collection(recount.collection).updateOne(recount.key, { $set: { [recount.field]: count }, $setOnInsert: { _id: newId() } }, { upsert: true }));
  }
  await guard(PENDING_MOVES, () => db.collection<Document>(PENDING_MOVES).deleteOne({ _id: recordId as never }));
  await guard(move.from, () => db.collection(move.from).deleteMany({ stageId: move.stageId }));
  return moved;
}
