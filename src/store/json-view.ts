import type { Doc, JsonRow, JsonView } from './types.ts';

/** A view built from a document in memory: what a store without stored JSON text does. */
export function jsonRowOf(doc: Doc, view: JsonView): JsonRow {
  const spread = doc[view.spread];
  // Spread syntax defines properties (no `__proto__` setter runs).
  const shown: Record<string, unknown> = spread && typeof spread === 'object' && !Array.isArray(spread) ? { _id: doc._id, ...spread } : { _id: doc._id };
  for (const field of view.tail) {
    const value = doc[field];
    if (value !== undefined && value !== null) shown[field] = value instanceof Date ? value.toISOString() : value;
  }
  const fields: Doc = { _id: doc._id };
  for (const field of view.fields ?? []) fields[field] = doc[field] ?? null;
  return { json: JSON.stringify(shown), fields };
}
