import type { Logger } from '../lib/logger.ts';
import type { AuditLog } from '../services/audit-log.ts';
import type { CronJobsService } from '../services/cron-jobs.ts';
import type { CronRunsService } from '../services/cron-runs.ts';
import type { EndpointGroupsService } from '../services/endpoint-groups.ts';
import type { EndpointsService } from '../services/endpoints.ts';
import type { GroupsService } from '../services/groups.ts';
import type { RecordsService } from '../services/records.ts';
import type { SettingsService } from '../services/settings.ts';
import type { WebhooksService } from '../services/webhooks.ts';
import type { Store } from '../store/types.ts';
import type { GroupDoc } from '../model/records.ts';
import type { PlaceholderPolicy } from './placeholders.ts';

/** What export, apply and import need: the services (so every write is validated) and the store for records. */
export interface ProjectServices {
  store: Store;
  logger: Logger;
  /** Apply and import audit themselves as a whole; each change is audited by its service. */
  audit: AuditLog;
  endpoints: EndpointsService;
  cronJobs: CronJobsService;
  /** A deleted job's run history goes with it, as through the API. */
  cronRuns: CronRunsService;
  webhooks: WebhooksService;
  endpointGroups: EndpointGroupsService;
  groups: GroupsService;
  records: RecordsService;
  settings: SettingsService;
  /** Which placeholders apply may resolve (see apply.ts); the default when absent. */
  placeholderPolicy?: PlaceholderPolicy;
}

const PAGE = 500;

/** Every user group (the service lists by page). */
export async function allUserGroups(groups: GroupsService): Promise<GroupDoc[]> {
  const all: GroupDoc[] = [];
  for (let page = 1; ; page++) {
    const { items } = await groups.list({ page, limit: PAGE });
    all.push(...items);
    if (items.length < PAGE) return all;
  }
}
