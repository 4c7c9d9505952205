import { createHash } from 'node:crypto';
import type { FieldIndexSpec, IndexKind } from './types.ts';

/**
 * The name of a field index on both stores: a hash of its spec (so every instance derives the
 * same name, and a changed spec is a new index) and its kind (so a listing can tell it).
 */
export function fieldIndexName(collection: string, spec: FieldIndexSpec): string {
  const hash = createHash('sha256').update(JSON.stringify([spec.scope, spec.field, spec.kind, spec.unique])).digest('hex').slice(0, 16);
  return `${collection}__fx_${hash}_${spec.kind}`;
}

export const FIELD_INDEX_KINDS: readonly IndexKind[] = ['number', 'text', 'boolean'];

/** The kind a field index name carries, or undefined for any other index. */
export function kindOfFieldIndex(collection: string, name: string): IndexKind | undefined {
  const match = new RegExp(`^${collection}__fx_[0-9a-f]{16}_([a-z]+)$`).exec(name);
  return FIELD_INDEX_KINDS.find((kind) => kind === match?.[1]);
}
