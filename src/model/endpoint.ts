import type { NetworkAccess } from './network-access.ts';

/** Stored shapes of endpoint definitions, endpoint groups and records. */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];
export const ACCESS_TYPES = ['public', 'authenticated', 'group'] as const;
export type AccessType = (typeof ACCESS_TYPES)[number];

export interface HandlerConfig {
  enabled: boolean;
  code: string;
}

export type EndpointDoc = {
  _id: string;
  name: string;
  description: string;
  slug: string;
  path: string;
  method: HttpMethod;
  accessType: AccessType;
  allowedGroupIds: string[];
  groupId: string | null;
  schema: Record<string, unknown>;
  networkAccess: NetworkAccess;
  inheritGroupNetworkAccess: boolean;
  enabled: boolean;
  apiVersion: string | null;
  isSystem: boolean;
  retentionDays: number | null;
  handler: HandlerConfig;
  callCount: number;
  /** Incremented on every change: compiled artifacts are keyed by (id, revision). */
  revision: number;
  createdAt: string | Date;
  updatedAt: string | Date;
};

export type EndpointGroupDoc = {
  _id: string;
  name: string;
  /** Lower-cased name: group names are unique regardless of case. */
  nameKey: string;
  description: string;
  icon: string;
  color: string;
  order: number;
  networkAccess: NetworkAccess;
  createdAt: string | Date;
  updatedAt: string | Date;
};

export type RecordDoc = {
  _id: string;
  endpointId: string;
  resourcePath: string;
  data: Record<string, unknown>;
  expiresAt: string | Date | null;
  createdAt: string | Date;
  updatedAt: string | Date;
};

export const DEFAULT_NETWORK_ACCESS: NetworkAccess = { enabled: false, allowedDomains: [], allowedIpRanges: [] };

export const NETWORK_ACCESS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { type: 'boolean' },
    allowedDomains: { type: 'array', maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 255 } },
    allowedIpRanges: { type: 'array', maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 64 } },
  },
} as const;
