import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * GET /api/dashboard/stats and /api/dashboard/system: figures from per-day counters kept as
 * calls happen (right with auditApiCalls off, never reading the audit log) and server resources.
 */
let t: TestServer;
let admin: string;

const today = () => new Date().toISOString().slice(0, 10);

async function stats(token = admin) {
  const res = await t.api('GET', '/api/dashboard/stats', { token });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

async function define(path: string, method: string): Promise<string> {
  const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: `${method} ${path}`, path, method, accessType: 'public', schema: { n: { type: 'number' } } } });
  expect(res.status, res.text).toBe(201);
  return res.body.data._id;
}

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
});
afterAll(async () => {
  await t.close();
});

describe('permissions', () => {
  it('stats and system need a signed-in caller (401) with view (403 without)', async () => {
    const nobody = await createUserWith(t, ['manage_api']);
    for (const path of ['/api/dashboard/stats', '/api/dashboard/system']) {
      expect((await t.api('GET', path)).status).toBe(401);
      expect((await t.api('GET', path, { token: nobody.token })).status).toBe(403);
    }
    const viewer = await createUserWith(t, ['view']);
    expect((await t.api('GET', '/api/dashboard/stats', { token: viewer.token })).status).toBe(200);
    expect((await t.api('GET', '/api/dashboard/system', { token: viewer.token })).status).toBe(200);
  });

  it('refuses unknown query parameters', async () => {
    const res = await t.api('GET', '/api/dashboard/stats?days=30', { token: admin });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
  });
});

describe('stats', () => {
  it('has seven UTC days, oldest first, ending today, with every series zero-filled to seven entries', async () => {
    const data = await stats();
    expect(data.series.days).toHaveLength(7);
    expect(data.series.days.at(-1)).toBe(today());
    expect([...data.series.days].sort()).toEqual(data.series.days);
    for (const name of ['requests', 'errors', 'logins', 'webhookDeliveries', 'cronRuns']) expect(data.series[name]).toHaveLength(7);
    for (const source of ['http', 'mcp', 'cron', 'test']) expect(data.series.trafficBySource[source]).toHaveLength(7);
    expect(data.automation).toEqual({ cronJobs: 0, webhooks: 0, apiKeys: expect.any(Number), mcpTools: expect.any(Number) });
    expect(data.automationHealth).toEqual({ failedCronJobs: 0, failingWebhooks: 0, webhookErrors: 0, unusedApiKeys: expect.any(Number) });
  });

  it('counts calls, errors and traffic by source with auditApiCalls off', async () => {
    expect((await t.api('PUT', '/api/settings', { token: admin, body: { auditApiCalls: false } })).status).toBe(200);
    try {
      const id = await define('/api/dash/things', 'POST');
      await define('/api/dash/things', 'GET');
      const before = await stats();
      for (let i = 0; i < 5; i++) expect((await t.api('POST', '/api/dash/things', { body: { n: i } })).status).toBe(201);
      expect((await t.api('POST', '/api/dash/things', { body: { n: 'not a number' } })).status).toBe(400);
      expect((await t.api('GET', '/api/dash/things/ffffffffffffffffffffffff')).status).toBe(404);
      expect((await t.api('POST', `/api/endpoints/${id}/test`, { token: admin, body: { body: { n: 9 } } })).status).toBe(200);

      const after = await stats();
      const gained = (series: number[], earlier: number[]) => (series.at(-1) as number) - (earlier.at(-1) as number);
      expect(gained(after.series.requests, before.series.requests)).toBe(8);
      expect(gained(after.series.errors, before.series.errors)).toBe(2);
      expect(gained(after.series.trafficBySource.http, before.series.trafficBySource.http)).toBe(7);
      expect(gained(after.series.trafficBySource.test, before.series.trafficBySource.test)).toBe(1);
      expect(after.requests - before.requests).toBe(8);
      expect(after.errors - before.errors).toBe(2);
      expect(after.endpoints - before.endpoints).toBe(0);
    } finally {
      await t.api('PUT', '/api/settings', { token: admin, body: { auditApiCalls: true } });
    }
  });

  it('counts a method a served path does not take (405) and a rate-limited call (429) as failed calls, auditing neither', async () => {
    await define('/api/dash/limited', 'GET');
    const errorEntries = async () => (await t.api('GET', '/api/dashboard/logs?action=error&limit=100', { token: admin })).body.meta.total as number;
    const before = await stats();
    const auditedBefore = await errorEntries();
    expect((await t.api('DELETE', '/api/dash/limited/ffffffffffffffffffffffff')).status).toBe(405);
    // The limit is per client: the calls come from 203.0.113.9 (through a trusted proxy), the
    // settings' changes from the test itself.
    expect((await t.api('PUT', '/api/settings', { token: admin, body: { rateLimitEnabled: true, rateLimitMax: 2, rateLimitWindowSeconds: 60, trustedProxies: ['127.0.0.1/32'] } })).status).toBe(200);
    try {
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await t.api('GET', '/api/dash/limited', { headers: { 'x-forwarded-for': '203.0.113.9' } })).status);
      expect(statuses).toEqual([200, 200, 429, 429]);
    } finally {
      expect((await t.api('PUT', '/api/settings', { token: admin, body: { rateLimitEnabled: false } })).status).toBe(200);
    }
    const after = await stats();
    expect(after.requests - before.requests).toBe(5);
    expect(after.errors - before.errors).toBe(3);
    expect(await errorEntries()).toBe(auditedBefore);
  });

  it('counts cron runs, failed ones included', async () => {
    const create = async (name: string, code: string) => {
      const res = await t.api('POST', '/api/cron', { token: admin, body: { name, schedule: '0 3 * * *', action: { type: 'javascript', code } } });
      expect(res.status, res.text).toBe(201);
      return res.body.data._id as string;
    };
    const fine = await create('dash-fine', 'async function run() { return 1; }');
    const failing = await create('dash-failing', 'async function run() { throw new Error("no"); }');
    try {
      const before = await stats();
      for (const id of [fine, fine, failing]) expect((await t.api('POST', `/api/cron/${id}/run`, { token: admin })).status).toBe(200);
      const after = await stats();
      expect((after.series.cronRuns.at(-1) as number) - (before.series.cronRuns.at(-1) as number)).toBe(3);
      expect(after.automationHealth.failedCronJobs - before.automationHealth.failedCronJobs).toBe(1);
    } finally {
      for (const id of [fine, failing]) await t.api('DELETE', `/api/cron/${id}`, { token: admin });
    }
  });

  it('counts successful logins only', async () => {
    const before = (await stats()).series.logins.at(-1);
    await t.login();
    await t.login();
    expect((await t.api('POST', '/api/auth/login', { body: { login: 'admin', password: 'wrong-password' } })).status).toBe(401);
    expect((await stats()).series.logins.at(-1) - before).toBe(2);
  });

  it('counts users, endpoints, API keys and unused API keys', async () => {
    const before = await stats();
    await createUserWith(t, []);
    await define('/api/dash/counted', 'GET');
    const key = await t.api('POST', '/api/api-keys', { token: admin, body: { name: 'dash-key', permissions: ['view'] } });
    expect(key.status, key.text).toBe(201);
    const mid = await stats();
    expect(mid.users - before.users).toBe(1);
    expect(mid.endpoints - before.endpoints).toBe(1);
    // The platform's own definitions are counted, and said apart, as the endpoints list shows them.
    const listed = await t.api('GET', '/api/endpoints?limit=100', { token: admin });
    const all = listed.body.data as Array<{ isSystem?: boolean }>;
    expect(mid.endpoints).toBe(all.length);
    expect(mid.systemEndpoints).toBe(all.filter((e) => e.isSystem === true).length);
    expect(mid.systemEndpoints).toBeGreaterThan(0);
    expect(mid.systemEndpoints).toBe(before.systemEndpoints);
    expect(mid.automation.mcpTools - before.automation.mcpTools).toBe(1);
    expect(mid.automation.apiKeys - before.automation.apiKeys).toBe(1);
    expect(mid.automationHealth.unusedApiKeys - before.automationHealth.unusedApiKeys).toBe(1);
    // A key in use is no longer unused.
    expect((await t.api('GET', '/api/dashboard/stats', { apiKey: key.body.data.key })).status).toBe(200);
    const after = await stats();
    expect(after.automationHealth.unusedApiKeys).toBe(mid.automationHealth.unusedApiKeys - 1);
  });

  it('answers well under 100 ms with 100k audit log rows, since it never reads the log', async () => {
    const store = t.server.services.store;
    const now = new Date();
    for (let batch = 0; batch < 10; batch++) {
      const rows = Array.from({ length: 10_000 }, (_, i) => ({ action: 'api_call', message: `GET /api/x/${batch}-${i} → 200`, source: 'endpoint', ip: '127.0.0.1', userId: null, method: 'GET', path: '/api/x', statusCode: 200, createdAt: now }));
      await store.appendMany('logs', rows);
    }
    const timings: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      await stats();
      timings.push(performance.now() - started);
    }
    expect(Math.min(...timings)).toBeLessThan(100);
  }, 60_000);
});

describe('system', () => {
  it('reports OS, CPU, memory, the data directory disk, addresses without MACs, the process and the store', async () => {
    const res = await t.api('GET', '/api/dashboard/system', { token: admin });
    expect(res.status, res.text).toBe(200);
    const data = res.body.data;
    expect(data.os).toMatchObject({ platform: expect.any(String), type: expect.any(String), release: expect.any(String), arch: expect.any(String) });
    expect(data.cpu.cores).toBeGreaterThan(0);
    expect(data.cpu.loadAverage).toHaveLength(3);
    expect(data.memory.totalBytes).toBeGreaterThan(data.memory.freeBytes);
    expect(data.disk.path).toBe(t.dataDir);
    expect(data.disk.totalBytes).toBeGreaterThan(0);
    expect(data.disk.freeBytes).toBeLessThanOrEqual(data.disk.totalBytes);
    expect(data.network.some((n: any) => n.address === '127.0.0.1' && n.internal === true)).toBe(true);
    expect(res.text).not.toMatch(/"mac"/);
    expect(data.process.uptimeSeconds).toBeGreaterThanOrEqual(0);
    expect(data.process.memory.rssBytes).toBeGreaterThan(0);
    expect(data.store.kind).toBe('embedded');
    expect(data.store.sizeBytes).toBeGreaterThan(0);
    expect(data).toMatchObject({ cronJobsActive: 0, cronJobsTotal: 0 });
  });
});

describe('durability', () => {
  it('counters are written at shutdown and read back after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dyn-dash-'));
    try {
      const first = await startTestServer({}, dir);
      const token = await first.adminToken();
      const created = await first.api('POST', '/api/endpoints', { token, body: { name: 'p', path: '/api/persisted', method: 'GET', accessType: 'public', schema: {} } });
      expect(created.status).toBe(201);
      for (let i = 0; i < 3; i++) expect((await first.api('GET', '/api/persisted')).status).toBe(200);
      await first.close();

      const second = await startTestServer({}, dir);
      try {
        const res = await second.api('GET', '/api/dashboard/stats', { token: await second.adminToken() });
        expect(res.body.data.series.requests.at(-1)).toBe(3);
        expect(res.body.data.series.logins.at(-1)).toBe(2);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
