// The interface every project kind implements (one descriptor per kind, see index.ts) and the
// small types its methods share. Generic code (load, check, normalize, diff, write-back, export,
// apply, sync) only ever talks to a kind through this interface.
import type { Actor } from '../../model/actor.ts';
import type { Problem } from '../problem.ts';
import type { ProjectServices } from '../services.ts';

/** `codeLine`: the line inside handler code a problem is about, for pointing into a handler file. */
export type Report = (path: string, message: string, at?: { codeLine?: number }) => void;
export type RawSpec = Readonly<Record<string, unknown>>;

export interface KindReference {
  /** Where the reference is written (`group`). */
  path: string;
  /** The kind (`ProjectKind.kind`) of the definition referred to. */
  kind: string;
  /** The natural key it must match among that kind's definitions. */
  key: string;
  /** As written, for the message. */
  name: string;
}

/** A field the diff compares, in the order updates list them; `compare` maps a value to what counts. */
export interface ComparedField<N> {
  name: keyof N & string;
  compare?: (value: unknown) => unknown;
  /**
   * A secret the API never returns (a webhook's `secret`): a desired definition that leaves it
   * out keeps the current one; plans show `(secret)` instead of values; export and write-back
   * carry it only as the placeholder it was applied from, else leave it out (export.ts).
   */
  writeOnly?: boolean;
}

/**
 * Credentials a kind's specs carry as values (a webhook's or an HTTP cron action's
 * `Authorization` header; model/secret-headers.ts). Unlike a write-only field they are part of
 * the definition, so they stay in files and bundles, but only as a placeholder or as `(secret)`.
 */
export interface KindSecrets<N> {
  /** The spec as it may leave the server: each secret value `(secret)`, except values `shown` lets through (placeholders). */
  mask(spec: N, shown: (value: string) => boolean): N;
  /** The desired spec with each `(secret)` given the value `current` holds for it: a file that says `(secret)` changes nothing. */
  keep(desired: N, current: N): N;
  /** Where the spec still says `(secret)` (`headers.Authorization`): after `keep`, values nothing is stored for. */
  unkept(spec: N): string[];
}

/** KindSecrets for credentials held in one field of the spec (`headers`, `action`): the spec is copied only when that field changes. */
export function secretsIn<N extends object, F extends keyof N & string>(
  field: F,
  mask: (value: N[F], shown: (value: string) => boolean) => N[F],
  keep: (desired: N[F], current: N[F]) => N[F],
  unkept: (value: N[F]) => string[],
): KindSecrets<N> {
  const withField = (spec: N, value: N[F]): N => (value === spec[field] ? spec : { ...spec, [field]: value });
  return {
    mask: (spec, shown) => withField(spec, mask(spec[field], shown)),
    keep: (desired, current) => withField(desired, keep(desired[field], current[field])),
    unkept: (spec) => unkept(spec[field]).map((path) => `${field}.${path}`),
  };
}

/**
 * What a write to the store needs: the services, and the store ids of the definitions a
 * definition may refer to, by kind and natural key. The ids are loaded before the first change
 * and kept current as changes are applied (a group created in this apply is found by the
 * endpoint created after it).
 */
export interface ApplyContext {
  services: ProjectServices;
  /** Who applies: the API caller, or the file sync. Every write is audited for it by the service. */
  actor: Actor;
  /** The store id of a project definition, by kind and natural key. */
  idOf(kind: string, key: string): string | undefined;
  /** The store id of a user group, by name (case-insensitive); user groups are not a project kind. */
  userGroupId(name: string): string | undefined;
}

/**
 * One kind of definition. `S` is the spec as written (files, bundles), `N` its normal form:
 * every default filled in, what the diff compares and export produces.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the defaults let generic code hold any kind
export interface ProjectKind<S extends object = any, N extends object = any, K extends string = string, B extends string = string> {
  /** The change kind in plans (`group`, `endpoint`); also the noun in counts (`1 group`). */
  readonly kind: K;
  /** In messages: `endpoint group "Shop" is also defined in ...`. */
  readonly label: string;
  /** The Bundle property holding this kind's definitions (export/import JSON and YAML). */
  readonly bundleKey: B;
  /** Directory inside the project, one definition per `*.yaml` file. */
  readonly dir: string;
  /** In schemas/. Its `properties` order is the key order of written files. */
  readonly schemaFile: string;
  /** The fields the natural key is made of; a definition whose key fields are not all strings has no key. */
  readonly keyFields: readonly string[];
  /**
   * Code that may live in a .js file beside the YAML: the top-level object (`handler`, `action`)
   * whose `file` the loader reads into its `code`, and the suffix of a new file written for it
   * (`<yaml name><suffix>`).
   */
  readonly codeFile?: { readonly field: string; readonly suffix: string };
  /** Whether a file may define several of this kind's definitions at once (resource-file.ts: `methods:`). */
  readonly resourceFiles?: boolean;
  /** Top-level fields whose JSON Schema errors `check` reports instead, in the API's own words. */
  readonly checkedByCode?: readonly string[];
  /** The natural key: what identifies the definition across files, bundles and the store. */
  key(spec: S): string;
  /** The file name (without directory) a new definition is written to. */
  fileName(spec: S): string;
  /** Rules beyond JSON Schema that need no database. */
  check?(spec: RawSpec, report: Report): void;
  /** Definitions of other kinds this one names; each must be in the same project (or, without prune, the store). */
  references?(spec: RawSpec): KindReference[];

  /** The canonical form (normalize.ts): both sides of a diff, and export. */
  normalize(spec: S): N;
  /** The written form: fields at their defaults left out (compact.ts). */
  compact(spec: N): S;
  /** The fields the diff compares. */
  readonly fields: ReadonlyArray<ComparedField<N>>;
  /** Credentials among the values, masked on the way out (export.ts, diff.ts). */
  readonly secrets?: KindSecrets<N>;
  /** Collection paths whose records this definition serves (import checks `data` against them). */
  collections?(spec: N): string[];

  /** Store → normal specs, in a stable order (export). Definitions the platform owns are left out. */
  read(services: ProjectServices): Promise<N[]>;
  /** Store ids of the definitions a project manages, by natural key. */
  ids(services: ProjectServices): Promise<Map<string, string>>;
  /**
   * What this server must look up before the diff, on the desired specs as written (an endpoint
   * schema's refEndpointIds become paths); problems are relative to the spec (`schema.x.refEndpointId`).
   */
  resolve?(services: ProjectServices, specs: readonly S[]): Promise<{ specs: S[]; problems: Array<{ index: number; path: string; message: string }> }>;
  /** Rules that need the store: what they need is read once, then each desired definition is checked (paths relative to it). */
  storeRules?(services: ProjectServices): Promise<(spec: N) => Problem[]>;
  create(context: ApplyContext, spec: N): Promise<string>;
  update(context: ApplyContext, id: string, spec: N): Promise<void>;
  delete(context: ApplyContext, id: string): Promise<void>;
}

/** A file-name-safe form of a name: `Create product` → `create-product`. */
export function slugOf(text: string, fallback: string): string {
  const slug = text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '');
  return slug || fallback;
}

export const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
