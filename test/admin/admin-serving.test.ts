// What the web admin needs from the server, over real HTTP: the app's serving when the build is
// missing, the docs page framable by the admin, and the small read additions the pages use
// (project files, the audit log's date range, the endpoint list's group filter).
import { cpSync, mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminUi } from '../../src/http/middleware/admin-ui.ts';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

describe('the admin without a build', () => {
  it('answers a page saying to run npm run build:admin, and refuses writes', async () => {
    const app = new Koa();
    app.use(adminUi(mkdtempSync(join(tmpdir(), 'dyn-no-admin-'))));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const page = await fetch(`${base}/admin/endpoints`);
      expect(page.status).toBe(503);
      expect(page.headers.get('content-type')).toContain('text/html');
      expect(await page.text()).toContain('npm run build:admin');
      expect((await fetch(`${base}/admin`, { method: 'POST' })).status).toBe(405);
      expect((await fetch(`${base}/admin/assets/app-X.js`)).status).toBe(404);
    } finally {
      server.close();
    }
  });
});

describe('server additions for the admin', () => {
  let t: TestServer;
  let admin: string;

  beforeAll(async () => {
    const project = mkdtempSync(join(tmpdir(), 'dyn-admin-files-'));
    cpSync(join(import.meta.dirname, '..', '..', 'project'), project, { recursive: true });
    t = await startTestServer({ PROJECT_DIR: project, PROJECT_WATCH: 'on' });
    admin = await t.adminToken();
  });
  afterAll(() => t.close());

  it('lets the admin frame the docs page (same origin only)', async () => {
    const res = await t.api('GET', '/api/docs');
    expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'self'");
  });

  it('names the project file of each definition at GET /api/project/files, for manage_api only', async () => {
    const res = await t.api('GET', '/api/project/files', { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data).toContainEqual({ kind: 'endpoint', key: 'GET /api/shop/categories', file: 'endpoints/categories.yaml' });
    expect(res.body.data).toContainEqual({ kind: 'endpoint', key: 'POST /api/shop/orders', file: 'endpoints/orders.yaml', handlerFile: 'endpoints/orders.handler.js' });
    expect(res.body.data).toContainEqual({ kind: 'group', key: 'shop', file: 'groups/shop.yaml' });
    const viewer = await createUserWith(t, ['view']);
    expect((await t.api('GET', '/api/project/files', { token: viewer.token })).status).toBe(403);
  });

  it('filters the audit log by date: from inclusive, to exclusive, a bad date is a 400 naming it', async () => {
    const all = await t.api('GET', '/api/dashboard/logs?limit=100', { token: admin });
    const newest = all.body.data[0].createdAt as string;
    const from = await t.api('GET', `/api/dashboard/logs?limit=100&from=${encodeURIComponent(newest)}`, { token: admin });
    expect(from.body.data.length).toBeGreaterThan(0);
    expect(from.body.data.every((e: any) => e.createdAt >= newest)).toBe(true);
    const to = await t.api('GET', `/api/dashboard/logs?limit=100&to=${encodeURIComponent(newest)}`, { token: admin });
    expect(to.body.data.every((e: any) => e.createdAt < newest)).toBe(true);
    expect(from.body.meta.total + to.body.meta.total).toBe(all.body.meta.total);
    // Without a zone a date-time is UTC, whatever the server's own time zone (UTC+14 here).
    const zone = process.env.TZ;
    process.env.TZ = 'Pacific/Kiritimati';
    try {
      const bare = newest.replace(/Z$/, '');
      const fromBare = await t.api('GET', `/api/dashboard/logs?limit=100&from=${encodeURIComponent(bare)}`, { token: admin });
      expect(fromBare.body.meta.total).toBe(from.body.meta.total);
      const toBare = await t.api('GET', `/api/dashboard/logs?limit=100&to=${encodeURIComponent(bare.replace('T', ' '))}`, { token: admin });
      expect(toBare.body.meta.total).toBe(to.body.meta.total);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
    const bad = await t.api('GET', '/api/dashboard/logs?from=yesterday', { token: admin });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual([{ field: 'from', message: 'must be an ISO 8601 date' }]);
  });

  it('lists the endpoints of one endpoint group, or of none, with groupId', async () => {
    const groups = await t.api('GET', '/api/endpoints/groups', { token: admin });
    const shop = groups.body.data.find((g: any) => g.name === 'Shop')._id;
    const inShop = await t.api('GET', `/api/endpoints?groupId=${shop}&limit=100`, { token: admin });
    expect(inShop.body.data.length).toBeGreaterThan(0);
    expect(inShop.body.data.every((e: any) => e.groupId === shop)).toBe(true);
    const none = await t.api('GET', '/api/endpoints?groupId=none&limit=100', { token: admin });
    expect(none.body.data.length).toBeGreaterThan(0);
    expect(none.body.data.every((e: any) => e.groupId === null)).toBe(true);
    const all = await t.api('GET', '/api/endpoints?limit=100', { token: admin });
    expect(inShop.body.meta.total + none.body.meta.total).toBe(all.body.meta.total);
  });
});
