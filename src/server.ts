import { join } from 'node:path';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import type { Config } from './config.ts';
import { EventBus } from './events/bus.ts';
import { createRequestListener } from './http/app.ts';
import { onClientError } from './http/long-requests.ts';
import { createLogger, type Logger } from './lib/logger.ts';
import { ApiKeysService } from './services/api-keys.ts';
import { AuditLog } from './services/audit-log.ts';
import { AuthService } from './services/auth.ts';
import { ChangeQueue } from './services/change-queue.ts';
import { DailyStats } from './services/daily-stats.ts';
import { DashboardStatsService } from './services/dashboard-stats.ts';
import { SystemInfoService } from './services/system-info.ts';
import { RawCollectionsService } from './services/raw/raw-collections.ts';
import { rawRegistry } from './services/raw/registry.ts';
import { Authenticator } from './services/authenticator.ts';
import { ensureFirstStart, forgetInitialPasswordOnceChanged, resolveSecrets } from './services/bootstrap.ts';
import type { Services } from './http/container.ts';
import { GroupsService } from './services/groups.ts';
import { LoginLockout } from './services/login-lockout.ts';
import { Passwords } from './services/passwords.ts';
import { ProfileService } from './services/profile.ts';
import { RateLimiter } from './services/rate-limiter.ts';
import { Revisions } from './services/revisions.ts';
import { Sessions } from './services/sessions.ts';
import { SettingsService } from './services/settings.ts';
import { Tokens } from './services/tokens.ts';
import { UsersService } from './services/users.ts';
import { openStore } from './store/open-store.ts';
import { EndpointGroupsService } from './services/endpoint-groups.ts';
import { EndpointsService } from './services/endpoints.ts';
import { RecordsService } from './services/records.ts';
import { CallCounter } from './runtime/call-counter.ts';
import { Engine } from './runtime/engine.ts';
import { HandlerCache } from './runtime/handler-cache.ts';
import { RouteCache } from './runtime/route-cache.ts';
import { ProjectStatus } from './project/status.ts';
import { OpenApiDocs } from './docs/openapi-docs.ts';
import { ProjectSync } from './project/sync.ts';
import { claimWatch, type WatchClaim } from './project/watch-lock.ts';
import { SYNC_CACHE_FILE } from './project/sync-cache.ts';
import type { Store } from './store/types.ts';
import { CRON_REVISION, CronJobsService } from './services/cron-jobs.ts';
import { CronRunsService } from './services/cron-runs.ts';
import { checkCronAction } from './automation/cron/actions/index.ts';
import { CronJobRunner } from './automation/cron/job-runner.ts';
import { CronScheduler } from './automation/cron/scheduler.ts';
import { outboundPolicyFor } from './automation/outbound-policy.ts';
import { WebhookDispatcher } from './automation/webhooks/dispatcher.ts';
import { WebhookDeliveriesService } from './services/webhook-deliveries.ts';
import { WebhookOutbox } from './services/webhook-outbox.ts';
import { WEBHOOK_REVISION, WebhooksService } from './services/webhooks.ts';

/** The composition root: store → services → http. Everything it opens, `close()` closes. */
export interface RunningServer {
  url: string;
  port: number;
  services: Services;
  close(): Promise<void>;
}

const SWEEP_INTERVAL_MS = 30_000;
/** A recorded batch not finished after this long belongs to an instance that died (MongoDB). */
const STALLED_BATCH_MS = 5 * 60_000;
const LOG_RETENTION_INTERVAL_MS = 60 * 60_000;
const SHUTDOWN_GRACE_MS = 10_000;

export async function startServer(config: Config, logger: Logger = createLogger(config.logLevel)): Promise<RunningServer> {
  const production = config.nodeEnv === 'production';
  const secrets = resolveSecrets({ jwtSecret: config.jwtSecret, jwtRefreshSecret: config.jwtRefreshSecret, dataDir: config.dataDir, production });
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, sqliteSynchronous: config.sqliteSynchronous });
  try {
    return await startOnStore(config, logger, store, secrets, production);
  } catch (error) {
    await store.close();
    throw error;
  }
}

async function startOnStore(config: Config, logger: Logger, store: Store, secrets: { access: string; refresh: string }, production: boolean): Promise<RunningServer> {
  const events = new EventBus();
  const revisions = new Revisions(store, config.revisionCheckMs ?? 0);
  const audit = new AuditLog(store, logger);
  const daily = new DailyStats(store, (error) => logger.warn('daily counters flush failed', { error }));
  const settings = new SettingsService({ store, revisions, events, audit });
  const passwords = new Passwords(config.bcryptRounds);
  const tokens = new Tokens(secrets);
  const sessions = new Sessions(store);
  // Changes that check one document before writing another wait for each other (change-queue.ts).
  const definitions = new ChangeQueue();
  const memberships = new ChangeQueue();
  const groups = new GroupsService({ store, events, audit, definitions, memberships });
  const lockout = new LoginLockout(store);
  const users = new UsersService({ store, groups, passwords, sessions, events, audit, lockout, memberships });
  const authenticator = new Authenticator({ store, tokens, sessions, events });
  const auth = new AuthService({ users, passwords, tokens, sessions, lockout, settings, audit, authenticator, daily });
  const apiKeys = new ApiKeysService({ store, events, bcryptRounds: config.bcryptRounds, audit });
  const profile = new ProfileService({ users, passwords, authenticator, auth, audit });
  const records = new RecordsService(store, events);
  const endpoints = new EndpointsService({ store, revisions, events, records, audit, definitions });
  const endpointGroups = new EndpointGroupsService({ store, revisions, events, audit, definitions });
  const handlers = new HandlerCache();
  const counter = new CallCounter((counts) => endpoints.addCalls(counts), (error) => logger.warn('call counter flush failed', { error }));
  const routes = new RouteCache({ store, revisions, logger, handlers });
  const engine = new Engine({ routes, records, handlers, settings, audit, events, counter, daily, logger });
  const cronRuns = new CronRunsService(store);
  const cronJobs = new CronJobsService({ store, revisions, audit, users, authenticator, checkAction: async (action) => checkCronAction(action, await settings.get()) });
  const cronRunner = new CronJobRunner({ jobs: cronJobs, runs: cronRuns, settings, audit, daily, invoke: (target, request, principal) => engine.invoke(target, request, principal), logger });
  const cronScheduler = new CronScheduler({ jobs: cronJobs, runs: cronRuns, runner: cronRunner, logger });
  const webhooks = new WebhooksService({ store, revisions, audit, checkUrl: async (url) => outboundPolicyFor((await settings.get()).outboundAllowList).checkUrl(url) });
  const webhookDeliveries = new WebhookDeliveriesService(store);
  const webhookDispatcher = new WebhookDispatcher({ hooks: webhooks, deliveries: webhookDeliveries, settings, audit, daily, logger, retryBaseMs: config.webhookRetryBaseMs });
  const outbox = new WebhookOutbox({ hooks: webhooks, deliveries: webhookDeliveries, store, logger, onQueued: () => webhookDispatcher.wake() });
  events.setDurableSink(outbox);
  const services: Services = {
    config, logger, store, events, settings, audit, users, groups, auth, authenticator, apiKeys, profile, lockout,
    rateLimiter: new RateLimiter(), endpoints, endpointGroups, records, engine, callCounter: counter, cronJobs, cronRuns, cronRunner, webhooks, webhookDeliveries, webhookDispatcher, projectStatus: new ProjectStatus(config.projectDir),
    placeholderPolicy: { envPrefix: config.placeholderEnvPrefix, secretFilesDir: config.secretFilesDir },
    daily, dashboardStats: new DashboardStatsService({ store, daily }), systemInfo: new SystemInfoService(store, config.dataDir),
    rawCollections: new RawCollectionsService({ store, audit, registry: rawRegistry({ store, users, groups, endpoints, endpointGroups, records, audit, settings }) }),
    openApi: new OpenApiDocs({ engine, endpointGroups, endpoints }),
  };

  await ensureFirstStart({ store, users, groups, logger, dataDir: config.dataDir, defaultAdminPassword: config.defaultAdminPassword, production });
  // A path change a crash interrupted (MongoDB) is finished before anything is served.
  await endpoints.finishInterruptedMoves();
  await forgetInitialPasswordOnceChanged({ store, events, logger, dataDir: config.dataDir });
  await endpoints.ensureSystemEndpoints();
  await records.healCounters();
  // Record indexes the definitions ask for but the store lacks (a build a stop interrupted, a
  // store written by an earlier version) are built in the background: serving starts at once,
  // and lists use an index once it exists (README: "Indexed and unique fields").
  void endpoints.syncRecordIndexes().catch((error: unknown) => logger.error('building record indexes failed', { error }));
  await outbox.load();
  // Files win at startup; an empty project directory is filled from the store instead. Write-back
  // watches the revisions of every kind's store (each only grows, so their sum changes with any).
  // One watcher per directory on this machine (project/watch-lock.ts); another instance's claim
  // leaves this one serving what the store holds, as with PROJECT_WATCH=off.
  const watchClaim = config.projectWatch ? claimOrWatchAnyway(config.projectDir, logger) : null;
  if (watchClaim && !watchClaim.claimed) {
    logger.warn(`project: ${config.projectDir} is watched by another dyn process on this machine (pid ${watchClaim.heldBy}); this one serves without watching it, as with PROJECT_WATCH=off (claim: ${watchClaim.file})`);
  }
  const releaseWatch = (): void => {
    if (watchClaim?.claimed) watchClaim.release();
  };
  const projectSync = watchClaim?.claimed ? new ProjectSync({ dir: config.projectDir, services, status: services.projectStatus, cacheFile: join(config.dataDir, SYNC_CACHE_FILE), storeRevision: async () => (await revisions.current('endpoints')) + (await revisions.current(CRON_REVISION)) + (await revisions.current(WEBHOOK_REVISION)) }) : null;
  try {
    await projectSync?.start();
  } catch (error) {
    await projectSync?.close();
    releaseWatch();
    throw error;
  }

  // Jobs start with the server; fires missed while it was down are not replayed.
  try {
    await cronScheduler.start();
  } catch (error) {
    await projectSync?.close();
    releaseWatch();
    throw error;
  }
  // Deliveries queued before a restart (or by another instance) are picked up from here on.
  webhookDispatcher.start();
  // The route table is built before listening, so the first request does not wait for it.
  await engine.table();
  const housekeeping = startHousekeeping(services);
  const server: Server = createServer(createRequestListener(services));
  server.requestTimeout = 60_000;
  server.headersTimeout = 20_000;
  server.on('clientError', onClientError); // lets a streamed project import outlive requestTimeout
  server.listen(config.port, config.host);
  try {
    await once(server, 'listening');
  } catch (error) {
    housekeeping.stop();
    await projectSync?.close();
    releaseWatch();
    await cronScheduler.close();
    await webhookDispatcher.close();
    throw error;
  }
  const port = (server.address() as AddressInfo).port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  logger.info(`dyn listening on ${url} (store: ${store.kind})`);

  let closing: Promise<void> | null = null;
  return {
    url,
    port,
    services,
    close() {
      closing ??= (async () => {
        housekeeping.stop();
        await projectSync?.close();
        releaseWatch();
        await cronScheduler.close();
        await webhookDispatcher.close();
        // Stop accepting, let requests in flight finish, then flush buffered writes and close.
        // Keep-alive connections that go idle meanwhile are closed as they do, and whatever
        // is still open after SHUTDOWN_GRACE_MS is cut.
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        const idle = setInterval(() => server.closeIdleConnections(), 100);
        const grace = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
        await closed;
        clearInterval(idle);
        clearTimeout(grace);
        await counter.flush();
        await daily.flush();
        await audit.flush();
        handlers.close();
        await store.close();
      })();
      return closing;
    },
  };
}

/** Periodic sweeps: expired documents (sessions, later records) and old audit entries. */
function startHousekeeping(services: Services): { stop(): void } {
  const { store, audit, settings, lockout, logger } = services;
  const sweep = async (): Promise<void> => {
    try {
      await store.sweepExpired();
      await lockout.purgeExpired();
      // Another instance that died mid-batch left it to whoever is still running.
      await services.endpoints.finishInterruptedMoves(STALLED_BATCH_MS);
    } catch (error) {
      logger.warn('expiry sweep failed', { error });
    }
  };
  const purgeLogs = async (): Promise<void> => {
    try {
      const days = (await settings.get()).logRetentionDays;
      const removed = await audit.purgeOlderThan(days);
      if (removed > 0) logger.info(`removed ${removed} audit entries past the retention period`);
      await services.cronRuns.purgeOlderThan(days);
      await services.webhookDeliveries.purgeOlderThan(days);
      await services.daily.purgeOlderThan(days);
    } catch (error) {
      logger.warn('audit retention sweep failed', { error });
    }
  };
  const timers = [setInterval(() => void sweep(), SWEEP_INTERVAL_MS), setInterval(() => void purgeLogs(), LOG_RETENTION_INTERVAL_MS)];
  for (const timer of timers) timer.unref();
  void purgeLogs();
  return { stop: () => timers.forEach(clearInterval) };
}

/** The claim on the project directory; where none can be made (a read-only temporary directory), this instance watches unclaimed, as before claims existed. */
function claimOrWatchAnyway(dir: string, logger: Logger): WatchClaim {
  try {
    return claimWatch(dir);
  } catch (error) {
    logger.warn(`project: could not claim ${dir} for this instance alone; watching it anyway`, { error });
    return { claimed: true, release: () => undefined };
  }
}
