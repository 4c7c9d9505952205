import type { Bundle } from './bundle.ts';
import { KINDS, specsOf, type KindName, type ProjectKind } from './kinds.ts';
import { canonicalJson, compareText, normalizeEndpoint, normalizeGroup, type NormalEndpoint, type NormalGroup } from './normalize.ts';

/**
 * The pure diff between two bundles (current and desired are the same type). Both sides are
 * normalised first (normalize.ts), so an unchanged definition — however it is written — yields no change.
 *
 * Order (the dependency order of kinds.ts' KINDS; endpoints refer to groups by name):
 *
 * | step | what                       | order                               |
 * |------|----------------------------|-------------------------------------|
 * | 1    | create / update            | KINDS of kinds.ts: groups, endpoints |
 * | 2    | delete (only with `prune`) | reversed: endpoints, groups          |
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

/**
 * How the diff compares one kind; kinds.ts says which kinds exist, their natural keys and their
 * order. The mapped type makes a kind without an entry here a type error.
 */
interface Comparison<N extends object> {
  normalize(spec: never): N;
  /** Fields compared, in the order updates list them; `compare` maps a value to what counts. */
  fields: ReadonlyArray<{ name: keyof N & string; compare?: (value: unknown) => unknown }>;
}

// References match names case-insensitively, as the store does.
const nameKeys = (value: unknown): unknown => (Array.isArray(value) ? value.map((v) => String(v).toLowerCase()).sort(compareText) : value);
const nameKey = (value: unknown): unknown => (typeof value === 'string' ? value.toLowerCase() : value);

const groupComparison: Comparison<NormalGroup> = {
  normalize: normalizeGroup,
  fields: [{ name: 'name' }, { name: 'description' }, { name: 'icon' }, { name: 'color' }, { name: 'order' }, { name: 'networkAccess' }],
};

const endpointComparison: Comparison<NormalEndpoint> = {
  normalize: normalizeEndpoint,
  fields: [
    { name: 'name' },
    { name: 'description' },
    { name: 'slug' },
    { name: 'accessType' },
    { name: 'allowedGroups', compare: nameKeys },
    { name: 'group', compare: nameKey },
    { name: 'schema' },
    { name: 'networkAccess' },
    { name: 'inheritGroupNetworkAccess' },
    { name: 'enabled' },
    { name: 'apiVersion' },
    { name: 'retentionDays' },
    { name: 'handler' },
  ],
};

const COMPARISONS: { readonly [K in KindName]: Comparison<object> } = {
  group: groupComparison as Comparison<object>,
  endpoint: endpointComparison as Comparison<object>,
};

/** A kind's definitions in a bundle, normalised, by natural key (sorted). */
export function itemsOf(bundle: Bundle, kind: ProjectKind): Map<string, object> {
  const items = specsOf(bundle, kind).map((spec) => COMPARISONS[kind.kind].normalize(spec as never));
  const sorted = items.map((item) => [kind.key(item), item] as const).sort(([a], [b]) => compareText(a, b));
  return new Map(sorted);
}

export function diffBundles(current: Bundle, desired: Bundle, options: { prune: boolean }): Change[] {
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
      const fields = changedFields(kind, existing, item);
      if (fields.length > 0) upserts.push({ kind: kind.kind, key, action: 'update', fields });
    }
    if (options.prune) {
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

function changedFields(kind: ProjectKind, from: object, to: object): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const field of COMPARISONS[kind.kind].fields) {
    const a = (from as Record<string, unknown>)[field.name];
    const b = (to as Record<string, unknown>)[field.name];
    const compare = field.compare ?? ((value: unknown) => value);
    if (canonicalJson(compare(a)) !== canonicalJson(compare(b))) changes.push({ field: field.name, from: a, to: b });
  }
  return changes;
}
