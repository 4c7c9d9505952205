import { isDeepStrictEqual } from 'node:util';
import type { Bundle } from './bundle.ts';
import { KINDS, specsOf, type KindName, type Kind } from './kinds/index.ts';
import { canonicalJson, compareText } from './normalize.ts';

/**
 * The pure diff between two bundles (current and desired are the same type). Both sides are
 * normalised first (each kind's `normalize`), so an unchanged definition — however it is written — yields no change.
 *
 * Order (the dependency order of KINDS in kinds/index.ts; endpoints refer to groups by name):
 *
 * | step | what                       | order                               |
 * |------|----------------------------|-------------------------------------|
 * | 1    | create / update            | KINDS: groups, endpoints            |
 * | 2    | delete (only with `prune`) | reversed: endpoints, groups         |
 *
 * Within a kind, changes are sorted by key. Identity is the natural key: changing an endpoint's
 * path or method, or a group's name beyond letter case, is a create (and, with prune, a delete).
 */
export type ChangeKind = KindName;
export type ChangeAction = 'create' | 'update' | 'delete';

export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

export interface Change {
  kind: ChangeKind;
  key: string;
  action: ChangeAction;
  /** Updates only: the top-level fields that differ. */
  fields?: FieldChange[];
}

/** A kind's definitions in a bundle, normalised, by natural key (sorted). */
export function itemsOf(bundle: Bundle, kind: Kind): Map<string, object> {
  const items = specsOf(bundle, kind).map((spec) => kind.normalize(spec));
  const sorted = items.map((item) => [kind.key(item), item] as const).sort(([a], [b]) => compareText(a, b));
  return new Map(sorted);
}

/**
 * What the diff may delete: with `prune`, every definition of the current side the desired one
 * lacks — except of the kinds in `leftAlone` (a sent bundle without their list), which are
 * neither emptied nor changed.
 */
export interface PruneOptions {
  prune: boolean;
  leftAlone?: ReadonlySet<KindName> | undefined;
}

/** Whether the definitions of this kind that the bundle lacks are deleted. */
export function prunes(options: PruneOptions, kind: Kind): boolean {
  return options.prune && options.leftAlone?.has(kind.kind) !== true;
}

export function diffBundles(current: Bundle, desired: Bundle, options: PruneOptions): Change[] {
  const upserts: Change[] = [];
  const deletes: Change[] = [];
  for (const kind of KINDS) {
    const before = itemsOf(current, kind);
    const after = itemsOf(desired, kind);
    for (const [key, item] of after) {
      const existing = before.get(key);
      if (!existing) {
        upserts.push({ kind: kind.kind, key, action: 'create' });
        continue;
      }
      const fields = changedFields(kind, existing, kind.secrets ? kind.secrets.keep(item, existing) : item);
      if (fields.length > 0) upserts.push({ kind: kind.kind, key, action: 'update', fields });
    }
    if (prunes(options, kind)) {
      const gone = [...before.keys()].filter((key) => !after.has(key));
      // Deletes run in reverse dependency order: this kind's before the kinds it refers to.
      deletes.unshift(...gone.map((key): Change => ({ kind: kind.kind, key, action: 'delete' })));
    }
  }
  return [...upserts, ...deletes];
}

/** Counts per action, for plan and apply responses. */
export function summarize(changes: readonly Change[]): Record<ChangeAction, number> {
  const summary = { create: 0, update: 0, delete: 0 };
  for (const change of changes) summary[change.action]++;
  return summary;
}

function changedFields(kind: Kind, from: object, to: object): FieldChange[] {
  const changes: FieldChange[] = [];
  // What a plan may show of each side: credentials as `(secret)` (the values are compared as they are).
  const shown = (spec: object): Record<string, unknown> => (kind.secrets ? kind.secrets.mask(spec, () => false) : spec) as Record<string, unknown>;
  let shownFrom: Record<string, unknown> | null = null;
  let shownTo: Record<string, unknown> | null = null;
  for (const field of kind.fields) {
    const a = (from as Record<string, unknown>)[field.name];
    const b = (to as Record<string, unknown>)[field.name];
    const compare = field.compare ?? ((value: unknown) => value);
    if (field.writeOnly && b === undefined) continue;
    const left = compare(a);
    const right = compare(b);
    // Deep-equal values have the same canonical JSON; comparing them first spares building two
    // strings for every field of every unchanged definition (most of a 10,000-definition plan).
    if (isDeepStrictEqual(left, right) || canonicalJson(left) === canonicalJson(right)) continue;
    if (field.writeOnly) {
      changes.push({ field: field.name, from: hidden(a), to: hidden(b) });
      continue;
    }
    shownFrom ??= shown(from);
    shownTo ??= shown(to);
    changes.push({ field: field.name, from: shownFrom[field.name], to: shownTo[field.name] });
  }
  return changes;
}

/** A write-only value as a plan shows it: whether there is one, never what it is. */
const hidden = (value: unknown): string | null => (value === null || value === undefined ? null : '(secret)');
