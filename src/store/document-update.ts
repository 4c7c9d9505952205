import type { Update } from './types.ts';

/** Applies $set / $unset / $inc to a plain document in memory (used by the embedded store). */
export function applyUpdate(doc: Record<string, unknown>, update: Update): Record<string, unknown> {
  const next = structuredClone(doc);
  for (const [path, value] of Object.entries(update.$set ?? {})) setPath(next, path, value);
  for (const path of update.$unset ?? []) unsetPath(next, path);
  for (const [path, by] of Object.entries(update.$inc ?? {})) {
    const current = getPath(next, path);
    const base = typeof current === 'number' ? current : 0;
    if (current !== undefined && current !== null && typeof current !== 'number') {
      throw new TypeError(`cannot $inc non-numeric field "${path}"`);
    }
    setPath(next, path, base + by);
  }
  return next;
}

export function getPath(doc: Record<string, unknown>, path: string): unknown {
  let cursor: unknown = doc;
  for (const segment of path.split('.')) {
    if (typeof cursor !== 'object' || cursor === null) return undefined;
    cursor = (cursor as Record<string, unknown>)[segment];
  }
  return cursor;
}

function setPath(doc: Record<string, unknown>, path: string, value: unknown): void {
  const segments = path.split('.');
  let cursor = doc;
  for (const segment of segments.slice(0, -1)) {
    const next = cursor[segment];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) cursor[segment] = {};
    cursor = cursor[segment] as Record<string, unknown>;
  }
  cursor[segments[segments.length - 1] as string] = value;
}

function unsetPath(doc: Record<string, unknown>, path: string): void {
  const segments = path.split('.');
  let cursor: unknown = doc;
  for (const segment of segments.slice(0, -1)) {
    if (typeof cursor !== 'object' || cursor === null) return;
    cursor = (cursor as Record<string, unknown>)[segment];
  }
  if (typeof cursor === 'object' && cursor !== null) delete (cursor as Record<string, unknown>)[segments[segments.length - 1] as string];
}
