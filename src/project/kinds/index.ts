// The kinds of definition a project directory holds, one descriptor each, in dependency order.
// Everything generic reads this table: the loader (files.ts), the checks (validate-bundle.ts),
// the diff (diff.ts), export (export.ts), apply (apply.ts), write-back (write.ts, sync.ts) and
// the bundle's shape (bundle.ts, bundle-shape.ts).
//
// How to add a kind (cron-job.ts and webhook.ts are the latest; say a kind `thing`):
// 1. Write `kinds/thing.ts` exporting a `ProjectKind<Spec, Normal, 'thing', 'things'>`
//    (types.ts documents each member): its natural key and file name, its checks and references
//    to other kinds, normalize/compact (the defaults the service stores), the fields the diff
//    compares, and read/ids/create/update/delete through its service (`ProjectServices` in
//    services.ts gets the service; the composition root already passes the container). Code in a
//    .js file beside the YAML: `codeFile`; a secret the API never returns: a `writeOnly` field.
// 2. Add its JSON Schema to schemas/ (`$id` https://dynctl.dev/schemas/<file>, every property
//    described, additionalProperties false; its `properties` order is the written key order).
// 3. Add it to TABLE below, after the kinds it refers to (deletes run in reverse).
// 4. Add its store revision to the sum the file sync watches (server.ts), so API changes are
//    written back.
// The bundle gets a `things` list, the project directory a `dir` of files, plan/apply a
// `thing` change kind, and export/import/sync carry it, with no other code to touch.
import { cronJobKind } from './cron-job.ts';
import { endpointKind } from './endpoint.ts';
import { groupKind } from './endpoint-group.ts';
import { webhookKind } from './webhook.ts';
import { isPlainObject, type ProjectKind } from './types.ts';

export { cronJobKey, cronJobKind } from './cron-job.ts';
export { endpointKey, endpointKind } from './endpoint.ts';
export { groupKey, groupKind } from './endpoint-group.ts';
export { webhookKey, webhookKind } from './webhook.ts';
export { slugOf, type ApplyContext, type KindReference, type ProjectKind, type RawSpec, type Report } from './types.ts';

// Cron jobs and webhooks last: an `endpoint` action calls an endpoint, a filter names a path or
// group, that the same apply may create.
const TABLE = [groupKind, endpointKind, cronJobKind, webhookKind] as const;
type Kinds = (typeof TABLE)[number];

/** `group` | `endpoint` | `cronJob` | `webhook`: change kinds in plans. */
export type KindName = Kinds['kind'];
/** `groups` | `endpoints` | `cronJobs` | `webhooks`: the bundle's lists. */
export type BundleKey = Kinds['bundleKey'];
/** The spec type each bundle list holds: `{ groups: GroupSpec; endpoints: EndpointSpec }`. */
export type KindSpecs = { [D in Kinds as D['bundleKey']]: D extends { key(spec: infer S): string } ? S : never };

/** Any kind of the table, as the generic code holds it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- specs are checked by each kind, not by the generic code
export type Kind = ProjectKind<any, any, KindName, BundleKey>;

/** In dependency order: a kind may refer to the kinds before it. Deletes go in reverse. */
export const KINDS: readonly Kind[] = TABLE;

export function kindOf(name: string): Kind {
  const kind = KINDS.find((candidate) => candidate.kind === name);
  if (!kind) throw new Error(`Unknown project kind ${JSON.stringify(name)}`);
  return kind;
}

/** The natural key of a definition of unknown shape, or undefined when its key fields are not strings. */
export function keyOf(kind: Kind, spec: unknown): string | undefined {
  if (!isPlainObject(spec) || !kind.keyFields.every((field) => typeof spec[field] === 'string')) return undefined;
  return kind.key(spec);
}

/** A kind's definitions in a bundle (an empty list when the bundle has none). */
export function specsOf(bundle: Partial<Bundle>, kind: ProjectKind): readonly object[] {
  return ((bundle as Record<string, unknown>)[kind.bundleKey] as readonly object[] | undefined) ?? [];
}

/** A bundle with every kind's list, each made by `make` (empty lists by default). */
export function bundleOf(make: (kind: Kind) => object[] = () => []): Bundle {
  return Object.fromEntries(KINDS.map((kind) => [kind.bundleKey, make(kind)])) as unknown as Bundle;
}

/** `groups and endpoints` (with more kinds: `a, b and c`), for messages about the whole bundle. */
export function kindList(words: (kind: Kind) => string, conjunction = 'and'): string {
  const all = KINDS.map(words);
  return all.length <= 1 ? (all[0] ?? '') : `${all.slice(0, -1).join(', ')} ${conjunction} ${all.at(-1)}`;
}

/** A list per kind (in the table's order: `groups`, `endpoints`), then what export adds on request. */
export type Bundle = { [K in keyof KindSpecs]: Array<KindSpecs[K]> } & {
  /** Records per collection path (export with `data=true`). */
  data?: Record<string, Array<Record<string, unknown>>>;
  /** System settings (export with `settings=true`). */
  settings?: Record<string, unknown>;
};
