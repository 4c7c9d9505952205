import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProject } from '../../src/project/files.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { tempDir, writeFiles } from './helpers.ts';
import { removeSyncDirs, sleep, syncTempDir, waitFor } from './sync-helpers.ts';

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
/** A hook's headers as stored (what it sends; the API shows credentials as `(secret)`). */
function storedHookHeaders(t: TestServer, name: string): Record<string, string> | undefined {
  const db = new DatabaseSync(join(t.dataDir, 'dyn.db'), { readOnly: true });
  try {
    return db.prepare('SELECT doc FROM webhooks').all().map((row) => JSON.parse(row.doc as string)).find((doc) => doc.name === name)?.headers;
  } finally {
    db.close();
  }
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

describe('credential headers in plans, bundles and exports', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await start();
  });

  it('leave the store as (secret) or as their placeholder; a bundle that says (secret) keeps the value', async () => {
    await call(t, 'POST', '/api/webhooks', hook('typed', { headers: { Authorization: 'Bearer typed-token', 'X-Team': 'ops' } }));
    const bundle = await call(t, 'GET', '/api/project/export?format=json');
    const exported = bundle.webhooks.find((h: any) => h.name === 'typed');
    expect(exported.headers).toEqual({ Authorization: '(secret)', 'X-Team': 'ops' });
    const yaml = await t.api('GET', '/api/project/export?format=yaml', { token: await t.adminToken() });
    expect(yaml.text + JSON.stringify(bundle)).not.toContain('typed-token');

    // The export applied as it is changes nothing; a new value is an update that shows neither value.
    expect((await call(t, 'POST', '/api/project/plan', { webhooks: [exported] })).changes).toEqual([]);
    const plan = await call(t, 'POST', '/api/project/plan', { webhooks: [{ ...exported, headers: { Authorization: 'Bearer next-token', 'X-Team': 'ops' } }] });
    expect(plan.changes).toEqual([
      { kind: 'webhook', key: 'typed', action: 'update', fields: [{ field: 'headers', from: { Authorization: '(secret)', 'X-Team': 'ops' }, to: { Authorization: '(secret)', 'X-Team': 'ops' } }] },
    ]);
    expect(JSON.stringify(plan)).not.toMatch(/typed-token|next-token/);

    // From the environment: exported as the placeholder, and the same bundle again is no change.
    const fromEnv = hook('from-env', { headers: { 'X-Api-Key': '${env:DYN_HOOK_TEST_SECRET}' } });
    await call(t, 'POST', '/api/project/apply', { webhooks: [exported, fromEnv] });
    const again = await call(t, 'GET', '/api/project/export?format=json');
    expect(again.webhooks.find((h: any) => h.name === 'from-env').headers).toEqual({ 'X-Api-Key': '${env:DYN_HOOK_TEST_SECRET}' });
    expect(JSON.stringify(again)).not.toContain(SECRET);
    expect((await call(t, 'POST', '/api/project/plan', { webhooks: [exported, fromEnv] })).changes).toEqual([]);
  });

  it('(secret) for a hook that has no value to keep is a 400 naming the header, in the plan already, and nothing is written', async () => {
    const body = { webhooks: [hook('no-value', { headers: { Authorization: '(secret)', 'X-Team': 'ops' } })] };
    for (const route of ['/api/project/plan', '/api/project/apply']) {
      const res = await t.api('POST', route, { token: await t.adminToken(), body });
      expect(res.status, route).toBe(400);
      expect(res.body.details, route).toEqual([{ field: 'webhooks[no-value].headers.Authorization', message: expect.stringMatching(/^\(secret\) keeps the value stored for this header, and none is stored/) }]);
    }
    expect((await t.api('GET', '/api/webhooks/no-value', { token: await t.adminToken() })).status).toBe(404);
    // A hook that has one keeps it, whatever the letter case; a header it lacks is the same 400.
    await call(t, 'POST', '/api/webhooks', hook('has-value', { headers: { authorization: 'Bearer kept' } }));
    expect((await call(t, 'POST', '/api/project/plan', { webhooks: [hook('has-value', { headers: { Authorization: '(secret)' } })] })).changes).toEqual([
      { kind: 'webhook', key: 'has-value', action: 'update', fields: [{ field: 'headers', from: { authorization: '(secret)' }, to: { Authorization: '(secret)' } }] },
    ]);
    const missing = await t.api('POST', '/api/project/plan', { token: await t.adminToken(), body: { webhooks: [hook('has-value', { headers: { authorization: '(secret)', 'X-Api-Key': '(secret)' } })] } });
    expect(missing.body.details).toEqual([{ field: 'webhooks[has-value].headers.X-Api-Key', message: expect.any(String) }]);
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

    // A credential header set through the API reaches the file as (secret), never as its value.
    await call(t, 'PUT', `/api/webhooks/${created._id}`, { headers: { Authorization: 'Bearer from-the-api' } });
    await waitFor('the header written back', () => readFileSync(join(dir, 'webhooks/items.yaml'), 'utf8').includes('Authorization'), 5000, 50);
    const written = readFileSync(join(dir, 'webhooks/items.yaml'), 'utf8');
    expect(written).toContain('headers:\n  Authorization: (secret)\n');
    expect(written).not.toContain('from-the-api');

    // A credential the file holds as a value, then changed through the API: the file gets (secret),
    // so applying it again keeps the new value instead of bringing the old one back.
    writeFiles(dir, { 'webhooks/items.yaml': written.replace('Authorization: (secret)', 'Authorization: Bearer in-the-file') });
    await waitFor('the value from the file', () => storedHookHeaders(t, 'items')?.Authorization === 'Bearer in-the-file', 5000, 50);
    await call(t, 'PUT', `/api/webhooks/${created._id}`, { headers: { Authorization: 'Bearer rotated' } });
    await waitFor('the change written back', () => readFileSync(join(dir, 'webhooks/items.yaml'), 'utf8').includes('Authorization: (secret)'), 5000, 50);
    expect(readFileSync(join(dir, 'webhooks/items.yaml'), 'utf8')).not.toMatch(/in-the-file|rotated/);
    await sleep(300);
    expect(storedHookHeaders(t, 'items')).toEqual({ Authorization: 'Bearer rotated' });
  });
});
