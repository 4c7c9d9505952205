import { slugify } from '../services/endpoints.ts';
import { normalizePath } from '../lib/paths.ts';
import { DEFAULT_NETWORK_ACCESS } from '../model/endpoint.ts';
import type { NetworkAccess } from '../model/network-access.ts';
import { schemaFromWire } from '../model/schema-wire.ts';
import type { EndpointSpec, GroupSpec } from './specs.ts';

/**
 * The one canonical form of a definition, used on both sides of a diff and by export: every
 * optional field filled with the default the services would store, the path normalised, names
 * trimmed. Export produces this form, so normalising an exported bundle changes nothing.
 * Defaults here mirror src/services/endpoints.ts and endpoint-groups.ts (`prepare`/`create`).
 */
export type NormalGroup = Required<Omit<GroupSpec, 'networkAccess'>> & { networkAccess: NetworkAccess };

export type NormalEndpoint = Required<Omit<EndpointSpec, 'handler' | 'networkAccess' | 'allowedGroups' | 'group'>> & {
  allowedGroups: string[];
  group: string | null;
  networkAccess: NetworkAccess;
  handler: { enabled: boolean; code: string };
};

const DEFAULT_GROUP_COLOR = '#6b7280';

export function normalizeGroup(spec: GroupSpec): NormalGroup {
  return {
    name: spec.name.trim(),
    description: spec.description ?? '',
    icon: spec.icon ?? '',
    color: spec.color ?? DEFAULT_GROUP_COLOR,
    order: spec.order ?? 0,
    networkAccess: networkAccess(spec.networkAccess),
  };
}

export function normalizeEndpoint(spec: EndpointSpec): NormalEndpoint {
  const name = spec.name.trim();
  return {
    name,
    description: spec.description ?? '',
    slug: spec.slug ?? slugify(name),
    path: normalizePath(spec.path),
    method: spec.method,
    accessType: spec.accessType,
    // Membership, not a sequence: sorted so that reordering the list is no change.
    allowedGroups: [...(spec.allowedGroups ?? [])].map((g) => g.trim()).sort(compareText),
    group: spec.group?.trim() || null,
    // A schema in the API's array form compares as the map form it is stored as (schema-wire.ts);
    // ids cannot be looked up here: the plan resolves them before the diff (schema-form.ts).
    schema: schemaFromWire(spec.schema, () => null).schema as Record<string, unknown>,
    networkAccess: networkAccess(spec.networkAccess),
    inheritGroupNetworkAccess: spec.inheritGroupNetworkAccess ?? true,
    enabled: spec.enabled ?? true,
    apiVersion: spec.apiVersion ?? null,
    retentionDays: spec.retentionDays ?? null,
    handler: { enabled: spec.handler?.enabled ?? false, code: spec.handler?.code ?? '' },
  };
}

function networkAccess(value: Partial<NetworkAccess> | undefined): NetworkAccess {
  const merged = { ...DEFAULT_NETWORK_ACCESS, ...(value ?? {}) };
  return { enabled: merged.enabled, allowedDomains: [...merged.allowedDomains], allowedIpRanges: [...merged.allowedIpRanges] };
}


/** Code-unit order: the same on every machine and locale, so exports are byte-stable. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** JSON with object keys sorted at every level: two values are equal when these strings are. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) return inner;
    return Object.fromEntries(Object.entries(inner).sort(([a], [b]) => compareText(a, b)));
  });
}
