import type { Doc, FlatDocs, NewDoc } from './types.ts';

/** The documents a flat batch holds, members in `fields` order, dates as Date objects. */
export function docsOfFlat(flat: FlatDocs): Array<NewDoc<Doc>> {
  const { fields, values } = flat;
  const width = fields.length;
  if (width === 0 || values.length % width !== 0) throw new Error(`a flat batch of ${width} fields holds ${values.length} values`);
  const isDate = fields.map((field) => flat.dates.includes(field));
  const docs: Array<NewDoc<Doc>> = [];
  for (let at = 0; at < values.length; at += width) {
    const doc: NewDoc<Doc> = {};
    for (let f = 0; f < width; f++) {
      const value = values[at + f];
      if (value === undefined) continue;
      const field = fields[f] as string;
      const member = isDate[f] && typeof value === 'number' ? new Date(value) : value;
      // Assigning `__proto__` would set the prototype rather than add a member.
      if (field === '__proto__') Object.defineProperty(doc, field, { value: member, writable: true, enumerable: true, configurable: true });
      else doc[field] = member;
    }
    docs.push(doc);
  }
  return docs;
}
