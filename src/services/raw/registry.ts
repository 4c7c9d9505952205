// The collections the raw browser exposes, in the order it lists them — exactly these seven.
// A Map, so a name such as `__proto__` or `constructor` finds nothing.
import type { Store } from '../../store/types.ts';
import type { AuditLog } from '../audit-log.ts';
import type { EndpointGroupsService } from '../endpoint-groups.ts';
import type { EndpointsService } from '../endpoints.ts';
import type { GroupsService } from '../groups.ts';
import type { RecordsService } from '../records.ts';
import type { SettingsService } from '../settings.ts';
import type { UsersService } from '../users.ts';
import type { RawAdapter } from './adapter.ts';
import { endpointGroupsAdapter } from './adapters/endpoint-groups.ts';
import { endpointsAdapter } from './adapters/endpoints.ts';
import { groupsAdapter } from './adapters/groups.ts';
import { logsAdapter } from './adapters/logs.ts';
import { recordsAdapter } from './adapters/records.ts';
import { settingsAdapter } from './adapters/settings.ts';
import { usersAdapter } from './adapters/users.ts';

export interface RawRegistryDeps {
  store: Store;
  users: UsersService;
  groups: GroupsService;
  endpoints: EndpointsService;
  endpointGroups: EndpointGroupsService;
  records: RecordsService;
  audit: AuditLog;
  settings: SettingsService;
}

export function rawRegistry(deps: RawRegistryDeps): ReadonlyMap<string, RawAdapter> {
  const adapters = [
    usersAdapter(deps.users),
    groupsAdapter(deps.groups),
    endpointsAdapter(deps.endpoints),
    endpointGroupsAdapter(deps.endpointGroups),
    recordsAdapter(deps.records, deps.endpoints),
    logsAdapter(deps.audit),
    settingsAdapter(deps.settings, deps.store),
  ];
  return new Map(adapters.map((adapter) => [adapter.name, adapter]));
}
