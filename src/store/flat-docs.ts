import type { Doc, FlatDocs, FlatValue, NewDoc } from './types.ts';

/** Throws unless the batch's values fill whole documents of its fields. */
export function checkFlat(flat: FlatDocs): void {
  const width = flat.fields.length;
  if (width === 0 || flat.values.length % width !== 0) throw new Error(`a flat batch of ${width} fields holds ${flat.values.length} values`);
}

/** The documents a flat batch holds, members in `fields` order, dates as Date objects. */
export function docsOfFlat(flat: FlatDocs): Array<NewDoc<Doc>> {
  checkFlat(flat);
  const { fields, values } = flat;
  const isDate = fields.map((field) => flat.dates.includes(field));
  const docs: Array<NewDoc<Doc>> = [];
  for (let at = 0; at < values.length; at += fields.length) docs.push(docOfFlatEntry(fields, isDate, values, at));
  return docs;
}

/** The document of the entry whose values start at `at`; `isDate[f]` says whether field f is a date. */
export function docOfFlatEntry(fields: readonly string[], isDate: readonly boolean[], values: readonly FlatValue[], at: number): NewDoc<Doc> {
  const doc: NewDoc<Doc> = {};
  for (let f = 0; f < fields.length; f++) {
    const value = values[at + f];
    if (value === undefined) continue;
    const field = fields[f] as string;
    const member = isDate[f] && typeof value === 'number' ? new Date(value) : value;
    // Assigning `__proto__` would set the prototype rather than add a member.
    if (field === '__proto__') Object.defineProperty(doc, field, { value: member, writable: true, enumerable: true, configurable: true });
    else doc[field] = member;
  }
  return doc;
}
