import { collectionSpec } from '../collections.ts';
import type { CollectionSpec, Doc, FlatDocs } from '../types.ts';
import { layoutOf, type Layout, type SqlValue } from './layout.ts';

/**
 * A batch for append-worker.ts, already in the shape of its table's rows: `width` values per row
 * (the `doc` text, then one per column, as Layout.toRow gives them after the id). A flat array of
 * strings and nulls crosses to the worker by structured clone for a fraction of what objects cost,
 * and the worker binds it as it is. `ids` only when some document came with its own `_id`; the
 * worker gives the others new ones.
 */
export interface AppendRows {
  collection: string;
  width: number;
  values: SqlValue[];
  ids: Array<string | null> | null;
}

/** One batch for append-worker.ts: rows already encoded, or flat documents the worker encodes. */
export type AppendBatch = { rows: AppendRows } | { flat: FlatDocs & { collection: string } };

/**
 * The document as the store's other inserts store it: what a JSON round trip makes of it (dates
 * as ISO text, undefined members dropped, non-finite numbers null).
 */
export function asStored(doc: Record<string, unknown>): Doc {
  return JSON.parse(JSON.stringify(doc)) as Doc;
}

interface Encoder {
  readonly layout: Layout;
  readonly width: number;
  /** Column names; the fast path is for collections whose columns are all text columns. */
  readonly columns: readonly string[];
  readonly columnSet: ReadonlySet<string>;
  readonly flat: boolean;
}

const encoders = new Map<string, Encoder>();

function encoderOf(collection: string): Encoder {
  let encoder = encoders.get(collection);
  if (!encoder) {
    const spec: CollectionSpec = collectionSpec(collection);
    const layout = layoutOf(spec);
    encoder = {
      layout,
      width: 1 + layout.columns.length,
      columns: layout.columns,
      columnSet: new Set(layout.columns),
      flat: (spec.columns?.json ?? []).length === 0,
    };
    encoders.set(collection, encoder);
  }
  return encoder;
}

/** Encodes documents for appendMany (see AppendRows); throws the StoreError toRow throws for a bad column value. */
export function encodeRows(collection: string, docs: readonly object[]): AppendRows {
  const encoder = encoderOf(collection);
  const values: SqlValue[] = [];
  let ids: Array<string | null> | null = null;
  for (let i = 0; i < docs.length; i++) {
    const doc = docs[i] as Record<string, unknown>;
    const id = doc._id;
    if (id !== undefined && id !== null) {
      ids ??= new Array<string | null>(docs.length).fill(null);
      ids[i] = id as string;
    }
    if (!(encoder.flat && encodeFlat(encoder, doc, values))) {
      for (const value of encoder.layout.toRow(asStored({ ...doc, _id: '' })).slice(1)) values.push(value);
    }
  }
  return { collection, width: encoder.width, values, ids };
}

/**
 * Appends the row values of a flat document (members that are strings, numbers, booleans, null
 * or dates — an audit entry, once per request) exactly as `layout.toRow(asStored(doc))` would,
 * without its entries/fromEntries and JSON round trip. Anything else (nested values, a
 * `__proto__` member, a column value toRow refuses) leaves `values` as it was and returns false,
 * for the general path to take.
 */
function encodeFlat(encoder: Encoder, doc: Record<string, unknown>, values: SqlValue[]): boolean {
  const rest: Record<string, unknown> = {};
  for (const key in doc) {
    if (!Object.hasOwn(doc, key) || key === '_id' || encoder.columnSet.has(key)) continue;
    // Assigning `__proto__` would set the prototype rather than add a member.
    if (key === '__proto__') return false;
    const value = doc[key];
    if (typeof value === 'string' || typeof value === 'boolean' || value === null) rest[key] = value;
    else if (typeof value === 'number') rest[key] = Number.isFinite(value) ? value : null;
    else if (value === undefined) continue;
    else if (value instanceof Date && !Number.isNaN(value.getTime())) rest[key] = isoText(value);
    else return false;
  }
  const start = values.length;
  values.push(null);
  for (const column of encoder.columns) {
    const value = doc[column];
    if (typeof value === 'string') values.push(value);
    else if (value === undefined) values.push(null);
    else if (value === null) {
      values.push(null);
      rest[column] = null; // `doc` remembers a null column, as toRow does
    } else if (value instanceof Date && !Number.isNaN(value.getTime())) values.push(isoText(value));
    else {
      values.length = start;
      return false;
    }
  }
  values[start] = JSON.stringify(rest);
  return true;
}

let secondStart = Number.NaN;
let secondPrefix = '';

/**
 * `date.toISOString()`, at a tenth of its cost for the common case: entries come in time order,
 * so the text up to the second is kept and only the milliseconds are written.
 */
export function isoText(date: Date): string {
  const ms = date.getTime();
  const offset = ms - secondStart;
  if (offset >= 0 && offset < 1000) return secondPrefix + (offset < 10 ? '00' : offset < 100 ? '0' : '') + offset + 'Z';
  const iso = date.toISOString();
  if (iso.length === 24) {
    // Four-digit years only ("YYYY-MM-DDTHH:MM:SS.mmmZ"); others are written in full each time.
    secondStart = Math.floor(ms / 1000) * 1000;
    secondPrefix = iso.slice(0, 20);
  }
  return iso;
}
