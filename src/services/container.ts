import type { Config } from '../config.ts';
import type { EventBus } from '../events/bus.ts';
import type { Logger } from '../lib/logger.ts';
import type { Store } from '../store/types.ts';
import type { ApiKeysService } from './api-keys.ts';
import type { AuditLog } from './audit-log.ts';
import type { AuthService } from './auth.ts';
import type { Authenticator } from './authenticator.ts';
import type { GroupsService } from './groups.ts';
import type { LoginLockout } from './login-lockout.ts';
import type { ProfileService } from './profile.ts';
import type { RateLimiter } from './rate-limiter.ts';
import type { SettingsService } from './settings.ts';
import type { UsersService } from './users.ts';

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
}
