/**
 * The portable form of a project: what the files in PROJECT_DIR hold, what export produces and
 * import/plan/apply take. Identity is a natural key, never a database id:
 *
 * | kind     | key                 | file                          |
 * |----------|---------------------|-------------------------------|
 * | group    | name                | groups/<slug of name>.yaml    |
 * | endpoint | `METHOD path`       | endpoints/<slug>.yaml         |
 *
 * References are portable too: an endpoint's `group` is an endpoint group's name,
 * `allowedGroups` are user group names, and a reference field's `ref` is a collection path.
 * String values may be `${env:NAME}` or `${file:/path}` placeholders, resolved at apply time and
 * kept as written on write-back and export.
 */
import type { NetworkAccess } from '../model/network-access.ts';

export interface GroupSpec {
  name: string;
  description?: string;
  icon?: string;
  color?: string;
  order?: number;
  networkAccess?: NetworkAccess;
}

export interface HandlerSpec {
  enabled: boolean;
  /** Inline code… */
  code?: string;
  /** …or a `.js` file beside the YAML (relative to it), read by the loader into `code`. */
  file?: string;
}

export interface EndpointSpec {
  name: string;
  description?: string;
  slug?: string;
  path: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  accessType: 'public' | 'authenticated' | 'group';
  allowedGroups?: string[];
  group?: string | null;
  schema: Record<string, unknown>;
  networkAccess?: NetworkAccess;
  inheritGroupNetworkAccess?: boolean;
  enabled?: boolean;
  apiVersion?: string | null;
  retentionDays?: number | null;
  handler?: HandlerSpec;
}

export interface Bundle {
  groups: GroupSpec[];
  endpoints: EndpointSpec[];
  /** Records per collection path (export with `data=true`). */
  data?: Record<string, Array<Record<string, unknown>>>;
  /** System settings (export with `settings=true`). */
  settings?: Record<string, unknown>;
}

export const endpointKey = (spec: Pick<EndpointSpec, 'method' | 'path'>): string => `${spec.method} ${spec.path}`;
export const groupKey = (spec: Pick<GroupSpec, 'name'>): string => spec.name.trim().toLowerCase();
