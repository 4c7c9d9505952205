import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProject } from '../../src/project/files.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { tempDir, writeFiles } from './helpers.ts';
import { removeSyncDirs, syncTempDir, waitFor } from './sync-helpers.ts';

/**
 * Webhooks as project definitions (kinds/webhook.ts): `webhooks/*.yaml`, plan/apply/export over
 * the real API and the file sync. The secret is write-only: a placeholder in files and bundles,
 * compared in memory, shown as `(secret)` in plans, never exported or written back as a value.
 */
const SECRET = 'hook-secret-0815';
const OTHER = 'hook-secret-4242';
process.env.DYN_HOOK_TEST_SECRET = SECRET;
process.env.DYN_HOOK_TEST_OTHER = OTHER;

const servers: TestServer[] = [];
afterAll(async () => {
  await Promise.all(servers.splice(0).map((t) => t.close()));
  removeSyncDirs();
});
async function start(env: Record<string, string> = {}): Promise<TestServer> {
  const t = await startTestServer(env);
  servers.push(t);
  return t;
}
async function call(t: TestServer, method: string, path: string, body?: unknown): Promise<any> {
  const res = await t.api(method, path, { token: await t.adminToken(), ...(body === undefined ? {} : { body }) });
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
  return res.body.data;
}
const hook = (name: string, fields: Record<string, unknown> = {}) => ({ name, url: 'https://1.1.1.1/hooks', events: ['record.created'], ...fields });

describe('webhook files', () => {
  it('webhooks/*.yaml is read into the bundle; a secret written as a value is refused at its line', () => {
    const dir = tempDir();
    writeFiles(dir, {
      'webhooks/orders.yaml': 'name: orders\nurl: https://1.1.1.1/hooks\nevents: [record.created, record.updated]\nfilter: {path: /api/shop/orders}\nsecret: ${env:DYN_HOOK_TEST_SECRET}\n',
      'webhooks/leaky.yaml': 'name: leaky\nurl: https://1.1.1.1/hooks\nevents: [nothing.happened]\nsecret: hunter2\n',
    });
    const loaded = loadProject(dir);
    expect(loaded.bundle.webhooks).toEqual([
      { name: 'orders', url: 'https://1.1.1.1/hooks', events: ['record.created', 'record.updated'], filter: { path: '/api/shop/orders' }, secret: '${env:DYN_HOOK_TEST_SECRET}' },
    ]);
    expect(loaded.problems.map(({ line, path, message }) => ({ line, path, message }))).toEqual([
      { line: 3, path: 'events.0', message: expect.stringMatching(/^must be one of: user\.created/) },
      { line: 4, path: 'secret', message: 'must be a placeholder such as ${env:DYN_HOOK_SECRET} (or null): a secret is never written into a project' },
    ]);
  });
});

describe('webhooks through POST /api/project/plan, /apply and export', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await start();
  });

  it('applies a hook with its secret from the environment; export gives back the placeholder, never the secret', async () => {
    const plan = await call(t, 'POST', '/api/project/plan', { webhooks: [hook('Orders', { secret: '${env:DYN_HOOK_TEST_SECRET}' })] });
    expect(plan.changes).toEqual([{ kind: 'webhook', key: 'orders', action: 'create' }]);
    await call(t, 'POST', '/api/project/apply', { webhooks: [hook('Orders', { secret: '${env:DYN_HOOK_TEST_SECRET}' })] });
    expect(await call(t, 'GET', '/api/webhooks/orders')).toMatchObject({ name: 'Orders', secret: 'set', enabled: true });

    const bundle = await call(t, 'GET', '/api/project/export?format=json');
    expect(bundle.webhooks).toEqual([{ name: 'Orders', url: 'https://1.1.1.1/hooks', events: ['record.created'], filter: null, secret: '${env:DYN_HOOK_TEST_SECRET}', enabled: true, headers: {} }]);
    const yaml = await t.api('GET', '/api/project/export?format=yaml', { token: await t.adminToken() });
    expect(yaml.text).toContain('secret: ${env:DYN_HOOK_TEST_SECRET}');
    expect(yaml.text + JSON.stringify(bundle)).not.toContain(SECRET);

    // The same bundle again changes nothing: the secret compares equal.
    expect((await call(t, 'POST', '/api/project/plan', { webhooks: [hook('Orders', { secret: '${env:DYN_HOOK_TEST_SECRET}' })] })).changes).toEqual([]);
  });

  it('a changed secret is an update shown as (secret), without either value; a bundle without secret keeps it', async () => {
    const plan = await call(t, 'POST', '/api/project/plan', { webhooks: [hook('Orders', { secret: '${env:DYN_HOOK_TEST_OTHER}', events: ['record.created', 'record.deleted'] })] });
    expect(plan.changes).toEqual([
      {
        kind: 'webhook',
        key: 'orders',
        action: 'update',
        fields: [
          { field: 'events', from: ['record.created'], to: ['record.created', 'record.deleted'] },
          { field: 'secret', from: '(secret)', to: '(secret)' },
        ],
      },
    ]);
    expect(JSON.stringify(plan)).not.toContain(OTHER);
    expect((await call(t, 'POST', '/api/project/plan', { webhooks: [hook('Orders')] })).changes).toEqual([]);
    expect((await call(t, 'POST', '/api/project/plan', { webhooks: [hook('Orders', { secret: null })] })).changes).toEqual([
      { kind: 'webhook', key: 'orders', action: 'update', fields: [{ field: 'secret', from: '(secret)', to: null }] },
    ]);
  });

  it('a secret set through the API is never exported: the hook is exported without it', async () => {
    const created = await call(t, 'POST', '/api/webhooks', hook('by-api', { secret: 'typed-into-the-api' }));
    expect(created.secret).toBe('set');
    const bundle = await call(t, 'GET', '/api/project/export?format=json');
    expect(bundle.webhooks.find((h: any) => h.name === 'by-api')).not.toHaveProperty('secret');
    expect(JSON.stringify(bundle)).not.toContain('typed-into-the-api');
  });

  it('a literal secret in a bundle is a 400 naming it, and nothing is written', async () => {
    const res = await t.api('POST', '/api/project/apply', { token: await t.adminToken(), body: { webhooks: [hook('literal', { secret: 'hunter2' })] } });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ field: 'webhooks[literal].secret', message: expect.stringMatching(/^must be a placeholder/) }]);
    expect((await t.api('GET', '/api/webhooks/literal', { token: await t.adminToken() })).status).toBe(404);
  });
});

describe('the file sync of webhooks/', () => {
  it('a hook file added becomes a hook with its secret; an API change is written back with the placeholder kept', async () => {
    const dir = syncTempDir();
    writeFiles(dir, { 'endpoints/items.yaml': 'name: Items\npath: /api/hook-sync/items\nmethod: GET\naccessType: public\nschema: {}\n' });
    const t = await start({ PROJECT_WATCH: 'on', PROJECT_DIR: dir });
    const admin = await t.adminToken();
    writeFiles(dir, { 'webhooks/items.yaml': '# tells the shop\nname: items\nurl: https://1.1.1.1/items\nevents: [record.created]\nsecret: ${env:DYN_HOOK_TEST_SECRET}\n' });
    await waitFor('the hook from the new file', async () => (await t.api('GET', '/api/webhooks/items', { token: admin })).status === 200, 5000, 50);
    const created = await call(t, 'GET', '/api/webhooks/items');
    expect(created.secret).toBe('set');

    await call(t, 'PUT', `/api/webhooks/${created._id}`, { enabled: false });
    await waitFor('the write-back', () => readFileSync(join(dir, 'webhooks/items.yaml'), 'utf8').includes('enabled: false'), 5000, 50);
    expect(readFileSync(join(dir, 'webhooks/items.yaml'), 'utf8')).toBe(
      // A file rewritten without a schema line gets one.
      '# yaml-language-server: $schema=https://dynctl.dev/schemas/webhook.schema.json\n# tells the shop\nname: items\nurl: https://1.1.1.1/items\nevents: [record.created]\nsecret: ${env:DYN_HOOK_TEST_SECRET}\nenabled: false\n',
    );
  });
});
