import { jsonString } from '../../lib/json-string.ts';
import { collectionSpec } from '../collections.ts';
import { checkFlat, docOfFlatEntry } from '../flat-docs.ts';
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
  const rows: AppendRows = { collection, width: encoder.width, values: [], ids: null };
  for (let i = 0; i < docs.length; i++) encodeDoc(encoder, docs[i] as Record<string, unknown>, i, docs.length, rows);
  return rows;
}

/** Appends the row of document `i` (of `count`) to `rows`. */
function encodeDoc(encoder: Encoder, doc: Record<string, unknown>, i: number, count: number, rows: AppendRows): void {
  const id = doc._id;
  if (id !== undefined && id !== null) {
    rows.ids ??= new Array<string | null>(count).fill(null);
    rows.ids[i] = id as string;
  }
  if (!(encoder.flat && encodeFlat(encoder, doc, rows.values))) {
    for (const value of encoder.layout.toRow(asStored({ ...doc, _id: '' })).slice(1)) rows.values.push(value);
  }
}

/** How encodeFlatRows writes one field of a flat batch. */
type FieldPlan = { kind: 'id' } | ColumnPlan | { kind: 'member'; key: string; date: boolean };
type ColumnPlan = { kind: 'column'; at: number; key: string; date: boolean };

/** A field name JavaScript orders before the others in an object (an array index), as JSON.stringify writes it. */
const INDEX_KEY = /^(?:0|[1-9]\d{0,9})$/;

const flatPlans = new Map<string, FieldPlan[] | null>();

/**
 * The plan for a batch's fields, or null when its documents must be made to be encoded the same:
 * a collection with JSON columns, a field named twice, `__proto__`, or an index-like name (whose
 * place among an object's members is not the field's place).
 */
function flatPlanOf(encoder: Encoder, collection: string, flat: FlatDocs): FieldPlan[] | null {
  const cacheKey = `${collection}\u0000${flat.fields.join('\u0000')}\u0001${flat.dates.join('\u0000')}`;
  let plan = flatPlans.get(cacheKey);
  if (plan !== undefined) return plan;
  const fields = flat.fields;
  const usable =
    encoder.flat &&
    new Set(fields).size === fields.length &&
    !fields.some((field) => field === '__proto__' || (field.length <= 10 && INDEX_KEY.test(field) && Number(field) < 2 ** 32 - 1)) &&
    !flat.dates.includes('_id');
  plan = usable
    ? fields.map((field): FieldPlan => {
        const date = flat.dates.includes(field);
        if (field === '_id') return { kind: 'id' };
        const at = encoder.columns.indexOf(field);
        const key = `${JSON.stringify(field)}:`;
        return at === -1 ? { kind: 'member', key, date } : { kind: 'column', at, key, date };
      })
    : null;
  if (flatPlans.size < 64) flatPlans.set(cacheKey, plan);
  return plan;
}

/**
 * Encodes a flat batch exactly as `encodeRows(collection, docsOfFlat(flat))` does, without making
 * the documents: each row's doc text is written from the values, member by member, in the order
 * the document would have them. Once per request (the audit log), on the append worker, where the
 * documents and their objects cost about three times as much. An entry this cannot write (a
 * column given a number, a date out of range) is encoded through its document; throws as
 * docsOfFlat and encodeRows throw.
 */
export function encodeFlatRows(collection: string, flat: FlatDocs): AppendRows {
  checkFlat(flat);
  const encoder = encoderOf(collection);
  const plan = flatPlanOf(encoder, collection, flat);
  const isDate = flat.fields.map((field) => flat.dates.includes(field));
  const width = flat.fields.length;
  const count = flat.values.length / width;
  const rows: AppendRows = { collection, width: encoder.width, values: [], ids: null };
  const values = rows.values;
  const columnCount = encoder.columns.length;
  for (let i = 0, at = 0; i < count; i++, at += width) {
    const start = values.length;
    if (plan && encodeFlatEntry(plan, flat.values, at, columnCount, rows, i, count)) continue;
    values.length = start;
    encodeDoc(encoder, docOfFlatEntry(flat.fields, isDate, flat.values, at), i, count, rows);
  }
  return rows;
}

/** One entry's row by its plan (encodeFlatRows); false, with `rows.values` partly written, where only its document can say. */
function encodeFlatEntry(plan: readonly FieldPlan[], source: FlatDocs['values'], at: number, columnCount: number, rows: AppendRows, i: number, count: number): boolean {
  const values = rows.values;
  const start = values.length;
  values.push(null);
  for (let c = 0; c < columnCount; c++) values.push(null);
  let json = '';
  // A null column is a member of the doc too (see Layout.toRow), after the others, in column order.
  let nullColumns: ColumnPlan[] | null = null;
  for (let f = 0; f < plan.length; f++) {
    const value = source[at + f];
    if (value === undefined) continue;
    const field = plan[f] as FieldPlan;
    if (field.kind === 'id') {
      if (value === null) continue;
      rows.ids ??= new Array<string | null>(count).fill(null);
      rows.ids[i] = value as string;
    } else if (field.kind === 'column') {
      if (typeof value === 'string') values[start + 1 + field.at] = value;
      else if (value === null) (nullColumns ??= []).push(field);
      else if (field.date && typeof value === 'number') {
        const text = dateText(value);
        if (text === null) return false;
        values[start + 1 + field.at] = text;
      } else return false;
    } else {
      let text: string;
      if (typeof value === 'string') text = jsonString(value);
      else if (typeof value === 'number') {
        if (field.date) {
          const iso = dateText(value);
          if (iso === null) return false;
          text = `"${iso}"`;
        } else text = Number.isFinite(value) ? String(value) : 'null';
      } else text = value === null ? 'null' : value ? 'true' : 'false';
      json += (json === '' ? '{' : ',') + field.key + text;
    }
  }
  if (nullColumns) {
    for (const column of nullColumns.sort((a, b) => a.at - b.at)) json += `${json === '' ? '{' : ','}${column.key}null`;
  }
  values[start] = json === '' ? '{}' : `${json}}`;
  return true;
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

/** A date field's epoch milliseconds as stored (isoText), or null for a time no Date can hold. */
function dateText(ms: number): string | null {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? null : isoText(date);
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
