import { MongoServerError, type Db, type Document } from 'mongodb';
import { assertFieldPath } from '../filter.ts';
import { fieldIndexName, kindOfFieldIndex } from '../field-index-name.ts';
import { DuplicateKeyError, StoreError, type CollectionSpec, type FieldIndexSpec, type FieldIndexSync } from '../types.ts';

/**
 * Field indexes on MongoDB: a partial index per (scope, field) — `partialFilterExpression:
 * {resourcePath: <path>}` — keyed on the field then the collection's order fields, or on the
 * field alone when unique (then only documents holding the field are indexed, so records
 * without it never collide). MongoDB builds indexes without blocking reads or writes (it locks
 * the collection only at the start and the end of a build). Comparisons already keep to one BSON
 * type, so no typed expression is needed as on the embedded store; the kind is kept in the name.
 */
type Guard = <T>(collection: string, work: () => Promise<T>) => Promise<T>;

function keysOf(spec: CollectionSpec, index: FieldIndexSpec): Document {
  const keys: Document = { [index.field]: 1 };
  if (!index.unique) for (const field of spec.fieldIndexes?.order ?? []) keys[field] = 1;
  return keys;
}

export async function listFieldIndexes(db: Db, spec: CollectionSpec, guard: Guard): Promise<Array<FieldIndexSpec & { name: string }>> {
  const scopeField = spec.fieldIndexes?.scope ?? '';
  const indexes = await guard(spec.name, () => db.collection(spec.name).listIndexes().toArray());
  return indexes.flatMap((index) => {
    const kind = kindOfFieldIndex(spec.name, String(index.name));
    const scope = (index.partialFilterExpression as Document | undefined)?.[scopeField];
    const field = Object.keys(index.key as Document)[0];
    if (!kind || typeof scope !== 'string' || !field) return [];
    return [{ name: String(index.name), scope, field, kind, unique: index.unique === true }];
  });
}

export async function syncFieldIndexes(db: Db, spec: CollectionSpec, wanted: readonly FieldIndexSpec[], options: FieldIndexSync, guard: Guard): Promise<void> {
  const scopeField = spec.fieldIndexes?.scope;
  if (!scopeField) throw new StoreError('internal', `${spec.name} takes no field indexes`);
  const collection = db.collection(spec.name);
  const byName = new Map(wanted.map((index) => (assertFieldPath(index.field), [fieldIndexName(spec.name, index), index] as const)));
  const existing = (await listFieldIndexes(db, spec, guard)).filter((index) => !options.scopes || options.scopes.includes(index.scope));
  for (const [name, index] of byName) {
    if (existing.some((other) => other.name === name)) continue;
    const partialFilterExpression: Document = { [scopeField]: index.scope, ...(index.unique ? { [index.field]: { $exists: true } } : {}) };
    try {
      await collection.createIndex(keysOf(spec, index), { name, partialFilterExpression, ...(index.unique ? { unique: true } : {}) });
    } catch (error) {
      if (error instanceof MongoServerError && error.code === 11000) {
        const keyValue = (error as MongoServerError & { keyValue?: Document }).keyValue;
        throw new DuplicateKeyError(spec.name, [index.field], { cause: error, value: keyValue?.[index.field] ?? null, scope: index.scope });
      }
      await guard(spec.name, () => Promise.reject(error));
    }
  }
  if (options.keep) return;
  for (const index of existing) {
    if (!byName.has(index.name)) await guard(spec.name, () => collection.dropIndex(index.name));
  }
}
