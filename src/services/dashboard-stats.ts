// The dashboard's figures (`GET /api/dashboard/stats`). Everything comes from document counts
// over small collections and from the per-day counters (daily-stats.ts): the audit log is never
// read, so the answer costs the same with a million log rows.
import { FAILING_AFTER } from '../model/webhook.ts';
import { COLLECTIONS } from '../store/collections.ts';
import type { Filter, Store } from '../store/types.ts';
import { TRAFFIC_SOURCES, type DailyStats, type TrafficSource } from './daily-stats.ts';

const DAYS = 7;
const UNUSED_KEY_DAYS = 30;
const SERIES = ['requests', 'errors', 'logins', 'webhookDeliveries', 'cronRuns'] as const;

export interface DashboardStats {
  users: number;
  endpoints: number;
  /** How many of `endpoints` are system endpoints (the platform's own, e.g. `/api/auth/login`). */
  systemEndpoints: number;
  /** Totals over the last 7 days (today included). */
  requests: number;
  errors: number;
  automation: { cronJobs: number; webhooks: number; apiKeys: number; mcpTools: number };
  /** Seven UTC days, oldest first; every array below has one entry per day. */
  series: Record<(typeof SERIES)[number], number[]> & { days: string[]; trafficBySource: Record<TrafficSource, number[]> };
  automationHealth: { failedCronJobs: number; failingWebhooks: number; webhookErrors: number; unusedApiKeys: number };
}

export interface DashboardStatsDeps {
  store: Store;
  daily: DailyStats;
  /**
   * How many MCP tools are offered. Without it: one per enabled, non-system endpoint definition
   * (the MCP server exposes each such endpoint as a tool).
   */
  mcpToolCount?: () => Promise<number>;
}

/** Counts a collection that a later part of the service may not have added yet as 0. */
async function countIfExists(store: Store, name: string, filter: Filter = {}): Promise<number> {
  if (!COLLECTIONS.some((c) => c.name === name)) return 0;
  return store.collection(name).count(filter);
}

const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

export class DashboardStatsService {
  private readonly deps: DashboardStatsDeps;

  constructor(deps: DashboardStatsDeps) {
    this.deps = deps;
  }

  async stats(now = Date.now()): Promise<DashboardStats> {
    const { store, daily } = this.deps;
    const unusedSince = new Date(now - UNUSED_KEY_DAYS * 86_400_000);
    const metrics = [...SERIES, 'webhookErrors', ...TRAFFIC_SOURCES.map((s) => `source.${s}` as const)] as const;
    const [users, endpoints, systemEndpoints, apiKeys, unusedApiKeys, cronJobs, failedCronJobs, webhooks, failingWebhooks, mcpTools, counters] = await Promise.all([
      store.collection('users').count({}),
      store.collection('endpoints').count({}),
      store.collection('endpoints').count({ isSystem: true }),
      store.collection('apikeys').count({}),
      store.collection('apikeys').count({ $or: [{ lastUsedAt: null }, { lastUsedAt: { $lt: unusedSince } }] }),
      countIfExists(store, 'cronjobs'),
      // A job counts as failed while its latest run failed (cronjobs' `lastStatus`).
      countIfExists(store, 'cronjobs', { lastStatus: 'failed' }),
      countIfExists(store, 'webhooks'),
      // A hook counts as failing from FAILING_AFTER failed attempts in a row until one succeeds.
      countIfExists(store, 'webhooks', { consecutiveFailures: { $gte: FAILING_AFTER } }),
      this.deps.mcpToolCount ? this.deps.mcpToolCount() : store.collection('endpoints').count({ enabled: true, isSystem: { $ne: true } }),
      daily.series(metrics, DAYS),
    ]);
    const values = counters.values;
    return {
      users,
      endpoints,
      systemEndpoints,
      requests: sum(values.requests),
      errors: sum(values.errors),
      automation: { cronJobs, webhooks, apiKeys, mcpTools },
      series: {
        days: counters.days,
        requests: values.requests,
        errors: values.errors,
        logins: values.logins,
        webhookDeliveries: values.webhookDeliveries,
        cronRuns: values.cronRuns,
        trafficBySource: Object.fromEntries(TRAFFIC_SOURCES.map((s) => [s, values[`source.${s}`]])) as Record<TrafficSource, number[]>,
      },
      automationHealth: { failedCronJobs, failingWebhooks, webhookErrors: sum(values.webhookErrors), unusedApiKeys },
    };
  }
}
