import type { Config } from '../config.ts';
import type { EventBus } from '../events/bus.ts';
import type { Logger } from '../lib/logger.ts';
import type { Store } from '../store/types.ts';
import type { ApiKeysService } from '../services/api-keys.ts';
import type { AuditLog } from '../services/audit-log.ts';
import type { AuthService } from '../services/auth.ts';
import type { Authenticator } from '../services/authenticator.ts';
import type { GroupsService } from '../services/groups.ts';
import type { LoginLockout } from '../services/login-lockout.ts';
import type { ProfileService } from '../services/profile.ts';
import type { RateLimiter } from '../services/rate-limiter.ts';
import type { SettingsService } from '../services/settings.ts';
import type { UsersService } from '../services/users.ts';
import type { EndpointGroupsService } from '../services/endpoint-groups.ts';
import type { EndpointsService } from '../services/endpoints.ts';
import type { RecordsService } from '../services/records.ts';
import type { Engine } from '../runtime/engine.ts';
import type { PlaceholderPolicy } from '../project/apply.ts';
import type { ProjectStatus } from '../project/status.ts';
import type { OpenApiDocs } from '../docs/openapi-docs.ts';

/** Everything the HTTP layer may call. Built once by the composition root (server.ts). */
export interface Services {
  config: Config;
  logger: Logger;
  store: Store;
  events: EventBus;
  settings: SettingsService;
  audit: AuditLog;
  users: UsersService;
  groups: GroupsService;
  auth: AuthService;
  authenticator: Authenticator;
  apiKeys: ApiKeysService;
  profile: ProfileService;
  lockout: LoginLockout;
  rateLimiter: RateLimiter;
  endpoints: EndpointsService;
  endpointGroups: EndpointGroupsService;
  records: RecordsService;
  engine: Engine;
  placeholderPolicy: PlaceholderPolicy;
  projectStatus: ProjectStatus;
  openApi: OpenApiDocs;
}
