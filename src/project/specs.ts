// The definitions a project holds, as written in its files (the natural keys and references by
// name or path, no store ids). The kinds (kinds/) describe them; bundle.ts collects them.
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
  /**
   * …or a `.js` file (relative to the YAML, inside the project dir). Files only: the loader reads
   * it into `code` and drops `file` (remembering it for write-back), so loaded bundles carry code.
   */
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
