// The record indexes the endpoint definitions ask for (README: "Indexed fields"). A field marked
// `indexed` / `unique` gets an index over the records of its definition's path; records of a
// path are shared by every definition on it, so a path's indexes are the union over its
// definitions (model/indexed-fields.ts). Kept in step by the endpoints service — the one place
// every definition change goes through (API, project apply and sync, the raw browser) — and
// brought to the definitions at start.
import { AppError } from '../lib/errors.ts';
import type { EndpointDoc } from '../model/endpoint.ts';
import { indexedFields, unionIndexedFields } from '../model/indexed-fields.ts';
import type { EndpointSchema } from '../model/record-schema.ts';
import { DuplicateKeyError, type FieldIndexSpec, type Store } from '../store/types.ts';

type Definition = Pick<EndpointDoc, 'path' | 'schema'>;

const RECORDS = 'endpointdatas';

/** Whether a definition asks for any index. */
export function asksForIndexes(doc: Definition | null | undefined): boolean {
  return doc !== null && doc !== undefined && indexedFields(doc.schema as EndpointSchema).length > 0;
}

/** The store's field indexes for these definitions (paths with :parameters take none: see endpoint-rules). */
export function wantedIndexes(docs: readonly Definition[]): FieldIndexSpec[] {
  const byPath = new Map<string, Definition[]>();
  for (const doc of docs) {
    if (doc.path.includes(':')) continue;
    byPath.set(doc.path, [...(byPath.get(doc.path) ?? []), doc]);
  }
  return [...byPath].flatMap(([path, defs]) =>
    unionIndexedFields(defs.map((doc) => indexedFields(doc.schema as EndpointSchema))).map(({ field, kind, unique }) => ({ scope: path, field: `data.${field}`, kind, unique })),
  );
}

/** A unique index refused over existing records: 409 naming the field and the duplicated value (nothing else of the records). */
export function duplicateValues(error: unknown): unknown {
  if (!(error instanceof DuplicateKeyError) || error.collection !== RECORDS || error.value === undefined) return error;
  const field = (error.fields[0] ?? '').replace(/^data\./, '');
  const message = `cannot be unique: records of ${error.scope ?? 'this path'} already share the value ${JSON.stringify(error.value)}`;
  return new AppError(409, `Invalid schema: schema.${field}.unique ${message}`, { details: [{ field: `schema.${field}.unique`, message }] });
}

export class RecordIndexes {
  private readonly store: Store;

  constructor(store: Store) {
    this.store = store;
  }

  /**
   * Before a definition change is saved: builds the indexes the paths it touches will ask for
   * (`docs`: every definition on those paths as they will be), dropping none, so a unique index
   * that existing records contradict refuses the change (409) before anything is saved.
   */
  async prepare(paths: readonly string[], docs: readonly Definition[]): Promise<void> {
    try {
      await this.store.syncFieldIndexes(RECORDS, wantedIndexes(docs), { keep: true, scopes: paths });
    } catch (error) {
      throw duplicateValues(error);
    }
  }

  /** After a change (saved or not): the indexes of these paths are exactly what `docs` (their definitions now) ask for. */
  async settle(paths: readonly string[], docs: readonly Definition[]): Promise<void> {
    await this.store.syncFieldIndexes(RECORDS, wantedIndexes(docs), { scopes: paths });
  }

  /** At start: every path's indexes are what the definitions ask for (a build interrupted by a stop is redone). */
  async syncAll(docs: readonly Definition[]): Promise<void> {
    await this.store.syncFieldIndexes(RECORDS, wantedIndexes(docs));
  }

  list(): Promise<FieldIndexSpec[]> {
    return this.store.listFieldIndexes(RECORDS);
  }
}
