import { isDeepStrictEqual } from 'node:util';
import { slugify } from '../services/endpoints.ts';
import type { EndpointSpec, GroupSpec } from './specs.ts';

/**
 * The form written to files: fields left at their defaults are omitted, so a definition written
 * back after an API change shows only what was set, and `git diff` shows only what changed.
 * (Loading fills the defaults in again, and the diff compares normalised forms.)
 */
const NETWORK_OFF = { enabled: false, allowedDomains: [], allowedIpRanges: [] };

const ENDPOINT_DEFAULTS: Partial<Record<keyof EndpointSpec, unknown>> = {
  description: '',
  allowedGroups: [],
  group: null,
  networkAccess: NETWORK_OFF,
  inheritGroupNetworkAccess: true,
  enabled: true,
  apiVersion: null,
  retentionDays: null,
  handler: { enabled: false, code: '' },
};

const GROUP_DEFAULTS: Partial<Record<keyof GroupSpec, unknown>> = {
  description: '',
  icon: '',
  color: '#6b7280',
  order: 0,
  networkAccess: NETWORK_OFF,
};

function withoutDefaults<T extends object>(spec: T, defaults: Partial<Record<keyof T, unknown>>): T {
  const out = { ...spec } as Record<string, unknown>;
  for (const [field, value] of Object.entries(defaults)) {
    if (field in out && isDeepStrictEqual(out[field], value)) delete out[field];
  }
  return out as T;
}

export function compactEndpoint(spec: EndpointSpec): EndpointSpec {
  const out = withoutDefaults(spec, ENDPOINT_DEFAULTS);
  if (out.slug !== undefined && out.slug === slugify(out.name)) delete out.slug;
  return out;
}

export function compactGroup(spec: GroupSpec): GroupSpec {
  return withoutDefaults(spec, GROUP_DEFAULTS);
}
