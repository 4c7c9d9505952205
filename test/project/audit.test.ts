import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { endpointYaml, removeSyncDirs, syncTempDir, waitFor } from './sync-helpers.ts';

/**
 * Changes are audited by the services that make them, so a change applied from a bundle or from
 * the project files leaves the same entries as one made through the API, naming who made it.
 */
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

type Entry = { action: string; message: string; source: string; userId: string | null; method: string | null; path: string | null; statusCode: number | null };

async function entries(t: TestServer, action: string): Promise<Entry[]> {
  const res = await t.api('GET', `/api/dashboard/logs?action=${action}&limit=100`, { token: await t.adminToken() });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

const group = { name: 'Shop' };
const endpoint = (path: string, extra: Record<string, unknown> = {}) => ({ name: `Items at ${path}`, path, method: 'GET', accessType: 'public', schema: { title: { type: 'string' } }, ...extra });

describe('audit entries of project changes', () => {
  it('an apply through POST /api/project/apply audits each change like the API does, for the caller', async () => {
    const t = await start();
    const token = await t.adminToken();
    const admin = (await t.api('GET', '/api/profile', { token })).body.data;

    // The same kind of change through the endpoints API, for comparison.
    const direct = await t.api('POST', '/api/endpoints', { token, body: endpoint('/api/direct') });
    expect(direct.status, direct.text).toBe(201);

    const bundle = { groups: [group], endpoints: [endpoint('/api/applied', { group: 'Shop' })] };
    const applied = await t.api('POST', '/api/project/apply', { token, body: bundle });
    expect(applied.status, applied.text).toBe(200);

    const created = await entries(t, 'endpoint_created');
    expect(created.find((e) => e.message === 'Endpoint GET /api/direct created')).toMatchObject({ source: 'endpoints', userId: admin._id, method: 'POST', path: '/api/endpoints', statusCode: 201 });
    expect(created.find((e) => e.message === 'Endpoint GET /api/applied created')).toMatchObject({ source: 'endpoints', userId: admin._id, method: 'POST', path: '/api/project/apply', statusCode: 201 });
    expect((await entries(t, 'endpoint_group_created')).find((e) => e.message === 'Endpoint group Shop created')).toMatchObject({ userId: admin._id, path: '/api/project/apply' });
    expect((await entries(t, 'project_applied'))[0]).toMatchObject({ message: 'Project applied: 2 created, 0 updated, 0 deleted', source: 'project', userId: admin._id });

    // A prune deletes what the bundle lacks: the deletion is audited for the caller too.
    const pruned = await t.api('POST', '/api/project/apply?prune=true', { token, body: bundle });
    expect(pruned.status, pruned.text).toBe(200);
    expect((await entries(t, 'endpoint_deleted')).find((e) => e.message === 'Endpoint GET /api/direct deleted')).toMatchObject({ userId: admin._id, path: '/api/project/apply' });
  });

  it('a dry run audits nothing', async () => {
    const t = await start();
    const token = await t.adminToken();
    const res = await t.api('POST', '/api/project/apply?dryRun=true', { token, body: { endpoints: [endpoint('/api/dry')] } });
    expect(res.status, res.text).toBe(200);
    expect(await entries(t, 'endpoint_created')).toEqual([]);
    expect(await entries(t, 'project_applied')).toEqual([]);
  });

  it('an import audits each change and the import for the caller', async () => {
    const t = await start();
    const token = await t.adminToken();
    const res = await t.api('POST', '/api/project/import', { token, body: { endpoints: [endpoint('/api/imported')], settings: { defaultPageSize: 25 } } });
    expect(res.status, res.text).toBe(200);
    expect((await entries(t, 'endpoint_created'))[0]).toMatchObject({ message: 'Endpoint GET /api/imported created', path: '/api/project/import' });
    expect((await entries(t, 'settings_updated'))[0]).toMatchObject({ message: 'Settings updated: defaultPageSize', path: '/api/project/import' });
    expect((await entries(t, 'project_imported'))[0]).toMatchObject({ source: 'project', message: 'Project imported (merge): 1 created, 0 updated, 0 deleted; settings' });
  });

  it('changes applied from the project files are audited as made by project-sync', async () => {
    const dir = syncTempDir();
    mkdirSync(join(dir, 'endpoints'), { recursive: true });
    writeFileSync(join(dir, 'endpoints', 'start.yaml'), endpointYaml('/api/at-start'));
    const t = await start({ PROJECT_WATCH: 'on', PROJECT_DIR: dir });

    // Entries of the file sync are buffered (no response waits for them): written within a second.
    let atStart: Entry | undefined;
    await waitFor('the entry of the start-up apply', async () => {
      atStart = (await entries(t, 'endpoint_created')).find((e) => e.message === 'Endpoint GET /api/at-start created');
      return atStart !== undefined;
    }, 5000);
    expect(atStart).toMatchObject({ source: 'project-sync', userId: null, method: null, path: null, statusCode: null });

    writeFileSync(join(dir, 'endpoints', 'later.yaml'), endpointYaml('/api/later'));
    await waitFor('the new file applied', async () => (await t.api('GET', '/api/later')).status === 200, 5000);
    await waitFor('its audit entry', async () => (await entries(t, 'endpoint_created')).some((e) => e.message === 'Endpoint GET /api/later created' && e.source === 'project-sync'), 5000);
    expect((await entries(t, 'project_applied')).every((e) => e.source === 'project-sync' && e.userId === null)).toBe(true);
  });
});
