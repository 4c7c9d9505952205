// The field indexes a schema asks for: top-level fields marked `indexed: true` or `unique: true`
// (validateEndpointSchema has checked that they are scalars). Records of one path are shared by
// every definition on it (GET, POST, PUT, … on /api/shop/products), so a path's indexes are the
// union over its definitions: a field indexed by any of them is indexed, and unique if any says so.
import { fieldTypeOf, type EndpointSchema, type IndexedAs } from './field-types/index.ts';

export interface IndexedField {
  /** The record field (top level). */
  field: string;
  /** How its values are indexed (the field type's `indexedAs`). */
  kind: IndexedAs;
  unique: boolean;
}

export function indexedFields(schema: EndpointSchema): IndexedField[] {
  const out: IndexedField[] = [];
  for (const [field, def] of Object.entries(schema)) {
    const kind = fieldTypeOf(def.type)?.indexedAs;
    if (kind && (def.indexed === true || def.unique === true)) out.push({ field, kind, unique: def.unique === true });
  }
  return out;
}

/** The union of several definitions' indexed fields: one per (field, kind), unique when any of them is. */
export function unionIndexedFields(lists: ReadonlyArray<readonly IndexedField[]>): IndexedField[] {
  const byKey = new Map<string, IndexedField>();
  for (const list of lists) {
    for (const entry of list) {
      const key = `${entry.field}\0${entry.kind}`;
      const known = byKey.get(key);
      byKey.set(key, { ...entry, unique: entry.unique || (known?.unique ?? false) });
    }
  }
  return [...byKey.values()];
}

/**
 * A definition's fields with its path's indexes marked on them: a field (of the same index kind)
 * that another definition of the path indexes is indexed here too, unique when that one says so.
 * The same object when nothing changes.
 */
export function withPathIndexes(fields: EndpointSchema, indexes: readonly IndexedField[] | undefined): EndpointSchema {
  let out: EndpointSchema | undefined;
  for (const { field, kind, unique } of indexes ?? []) {
    const def = Object.hasOwn(fields, field) ? fields[field] : undefined;
    if (!def || fieldTypeOf(def.type)?.indexedAs !== kind || def.unique === true || (def.indexed === true && !unique)) continue;
    (out ??= { ...fields })[field] = { ...def, ...(unique ? { unique: true } : { indexed: true }) };
  }
  return out ?? fields;
}
