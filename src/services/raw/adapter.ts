// What the raw collection browser needs to know about one collection: how it is read (search
// fields, order), what each field of a document is to a writer, and the writes themselves, which
// call the collection's own service so its invariants hold. One small adapter per collection;
// the registry (registry.ts) lists them and raw-collections.ts does the rest generically.
import type { CallerActor } from '../../model/actor.ts';
import type { Permission } from '../../model/permissions.ts';
import type { Principal } from '../../model/principal.ts';
import type { Doc, SortSpec } from '../../store/types.ts';
import type { RequestInfo } from '../auth.ts';

/**
 * What a top-level field of a raw document is to a writer:
 *
 * | rule         | on create                      | on replace (PUT)                                   |
 * |--------------|--------------------------------|----------------------------------------------------|
 * | `editable`   | passed to the service          | passed; left out → `absent(body)` (none: required) |
 * | `createOnly` | passed to the service          | must be left out or unchanged                      |
 * | `managed`    | refused (the service sets it)  | must be left out or unchanged                      |
 * | `live`       | refused (the service sets it)  | ignored, whatever the value                        |
 * | `secret`     | refused                        | refused                                            |
 *
 * A `secret` is read as `[REDACTED]`; a `[REDACTED]` value in a write is ignored wherever it is.
 * A `live` field changes without anyone editing the document (a call count, a last login), so
 * the value a client read a moment ago is often no longer the stored one: refusing it would make
 * a document read and sent back whole fail at random. A `managed` field changes only with an edit,
 * so a stale value there means the document changed since it was read, and is refused.
 */
export type FieldRule =
  | { rule: 'editable'; absent?: (body: Record<string, unknown>) => unknown }
  | { rule: 'createOnly' }
  | { rule: 'managed' }
  | { rule: 'live' }
  | { rule: 'secret' };

export const editable = (absent?: unknown): FieldRule =>
  absent === undefined ? { rule: 'editable' } : { rule: 'editable', absent: () => structuredClone(absent) };
export const CREATE_ONLY: FieldRule = { rule: 'createOnly' };
export const MANAGED: FieldRule = { rule: 'managed' };
export const LIVE: FieldRule = { rule: 'live' };
export const SECRET: FieldRule = { rule: 'secret' };

/** Who writes, for the services' permission rules and for the audit entry. */
export interface RawActor {
  principal: Principal;
  request: RequestInfo;
}

/** The actor a collection's service audits a browser write with (source `database`). */
export const asActor = (actor: RawActor): CallerActor => ({ principal: actor.principal, request: { ip: actor.request.ip, method: actor.request.method, path: actor.request.path }, source: 'database' });

export interface RawAdapter {
  /** The name the browser shows; also the store collection's name. */
  readonly name: string;
  /** Text fields `search` looks in (a 24-hex term matches `_id` instead). */
  readonly searchFields: readonly string[];
  readonly sort: SortSpec;
  readonly fields: Readonly<Record<string, FieldRule>>;
  /**
   * What reading or writing this collection needs besides the browser's `manage_users`: one of
   * these, the permission its own API asks for, so the browser is no way around that API's rule.
   */
  readonly alsoNeeds?: { readonly read?: readonly Permission[]; readonly write?: readonly Permission[] };
  /** A short, secret-free name of a document for audit messages (login, name, path...). */
  label(doc: Doc): string;
  /** Each write the collection allows; a missing one is a 405. Each returns the stored document. */
  create?(input: Record<string, unknown>, actor: RawActor): Promise<Doc>;
  /** `changes` holds only the fields whose value differs from `current`. */
  replace?(current: Doc, changes: Record<string, unknown>, actor: RawActor): Promise<Doc>;
  delete?(current: Doc, actor: RawActor): Promise<Doc>;
  /** Empties the collection; returns how many documents went. */
  clear?(actor: RawActor): Promise<number>;
}

/** Read-only fields every collection has. */
export const STAMPS = { createdAt: MANAGED, updatedAt: MANAGED } as const;
