// Checks a write batch before either adapter touches anything (see Store.applyBatch).
import { collectionSpec } from './collections.ts';
import { validateUpdate } from './filter.ts';
import { InvalidFilterError, type WriteBatch } from './types.ts';

export function checkBatch(batch: WriteBatch): void {
  for (const write of batch.writes) {
    collectionSpec(write.collection);
    if ('$inc' in write.update) throw new InvalidFilterError('a batch write takes $set and $unset only (a replay must change nothing twice)');
    validateUpdate(write.update);
  }
  for (const recount of batch.recounts ?? []) {
    collectionSpec(recount.collection);
    collectionSpec(recount.of.collection);
  }
}
