import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { ensureUserGroup, exportJson, post } from './fixture.ts';

/**
 * POST /api/project/plan and /api/project/apply: desired definitions in, changes out. Each test
 * works under its own path prefix and group names so that they do not see each other's state,
 * except the prune tests, which own the whole store and run last.
 */
let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
  await ensureUserGroup(t, 'Editors');
});
afterAll(async () => {
  await t.close();
});

const endpoint = (path: string, fields: Record<string, unknown> = {}) => ({ name: `Items at ${path}`, path, method: 'GET', accessType: 'public', schema: {}, ...fields });

describe('plan', () => {
  it('lists creates with groups before endpoints and a summary', async () => {
    const res = await post(t, '/api/project/plan', {
      endpoints: [endpoint('/api/plan1/items', { group: 'Plan one' }), endpoint('/api/plan1/a')],
      groups: [{ name: 'Plan one' }],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      changes: [
        { kind: 'group', key: 'plan one', action: 'create' },
        { kind: 'endpoint', key: 'GET /api/plan1/a', action: 'create' },
        { kind: 'endpoint', key: 'GET /api/plan1/items', action: 'create' },
      ],
      summary: { create: 3, update: 0, delete: 0 },
    });
    // A plan writes nothing.
    expect((await exportJson(t)).groups.map((g: any) => g.name)).not.toContain('Plan one');
  });

  it('shows updates field by field, with the values before and after', async () => {
    const bundle = { groups: [{ name: 'Plan two', color: '#000000' }], endpoints: [endpoint('/api/plan2/items', { group: 'Plan two' })] };
    expect((await post(t, '/api/project/apply', bundle)).status).toBe(200);
    const changed = {
      groups: [{ name: 'Plan two', color: '#ffffff' }],
      endpoints: [endpoint('/api/plan2/items', { group: 'Plan two', enabled: false, description: 'now described', networkAccess: { enabled: true } })],
    };
    const res = await post(t, '/api/project/plan', changed);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.changes).toEqual([
      { kind: 'group', key: 'plan two', action: 'update', fields: [{ field: 'color', from: '#000000', to: '#ffffff' }] },
      {
        kind: 'endpoint',
        key: 'GET /api/plan2/items',
        action: 'update',
        fields: [
          { field: 'description', from: '', to: 'now described' },
          { field: 'networkAccess', from: { enabled: false, allowedDomains: [], allowedIpRanges: [] }, to: { enabled: true, allowedDomains: [], allowedIpRanges: [] } },
          { field: 'enabled', from: true, to: false },
        ],
      },
    ]);
  });

  it('finds no change in a definition written differently: defaults omitted, path not normalised, keys reordered, names in another case', async () => {
    const bundle = {
      groups: [{ name: 'Plan three' }],
      endpoints: [endpoint('/api/plan3/items', { accessType: 'group', allowedGroups: ['Editors'], group: 'Plan three', schema: { a: { type: 'string' }, b: { type: 'number' } } })],
    };
    expect((await post(t, '/api/project/apply', bundle)).status).toBe(200);
    const rewritten = {
      groups: [{ name: 'Plan three', color: '#6b7280', order: 0, networkAccess: { allowedIpRanges: [] } }],
      endpoints: [
        {
          schema: { b: { type: 'number' }, a: { type: 'string' } },
          accessType: 'group',
          method: 'GET',
          path: 'api//plan3/items/',
          name: 'Items at /api/plan3/items',
          allowedGroups: ['editors'],
          group: 'PLAN THREE',
          handler: { enabled: false },
          enabled: true,
        },
      ],
    };
    const res = await post(t, '/api/project/plan', rewritten);
    expect(res.body.data.changes).toEqual([]);
  });

  it('refuses an invalid bundle before writing anything, listing every problem', async () => {
    const res = await post(t, '/api/project/plan', {
      groups: [{ name: 'A' }, { name: 'a' }],
      endpoints: [{ name: 'x', path: '/api/x', method: 'FETCH', accessType: 'public', schema: {}, colour: 'red' }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^Invalid bundle: /);
    expect(res.body.details.map((d: any) => d.field).sort()).toEqual(['endpoints[FETCH /api/x].colour', 'endpoints[FETCH /api/x].method', 'groups[a].name']);
    const outer = await post(t, '/api/project/plan', { groups: {}, endpoint: [] });
    expect(outer.status).toBe(400);
    expect(outer.body.details).toEqual([
      { field: 'endpoint', message: 'is not an allowed field' },
      { field: 'groups', message: 'must be array' },
    ]);
  });

  it('refuses data and settings, which only import takes', async () => {
    const res = await post(t, '/api/project/plan', { groups: [], endpoints: [], settings: {} });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/settings can only be imported/);
  });
});

describe('apply', () => {
  it('applies a bundle, and a second apply of the same bundle changes nothing', async () => {
    const bundle = {
      groups: [{ name: 'Twice', networkAccess: { enabled: true, allowedDomains: ['*.example.com'] } }],
      endpoints: [
        endpoint('/api/twice/items', { group: 'Twice', accessType: 'group', allowedGroups: ['Editors', 'Administrators'] }),
        endpoint('/api/twice/items', { method: 'POST', schema: { title: { type: 'string', required: true } }, handler: { enabled: true, code: 'async function handler(req) { return { status: 201, data: req.body }; }' } }),
      ],
    };
    const first = await post(t, '/api/project/apply', bundle);
    expect(first.status, first.text).toBe(200);
    expect(first.body.data.summary).toEqual({ create: 3, update: 0, delete: 0 });
    expect(first.body.data.applied).toBe(true);
    expect(first.body.data.changes.every((c: any) => c.status === 'applied' && /^[0-9a-f]{24}$/.test(c.id))).toBe(true);

    const second = await post(t, '/api/project/apply', bundle);
    expect(second.body.data).toEqual({ changes: [], summary: { create: 0, update: 0, delete: 0 }, applied: true });

    // What was applied is served.
    const served = await t.api('POST', '/api/twice/items', { body: { title: 'hello' } });
    expect(served.status, served.text).toBe(201);
  });

  it('with dryRun=true reports the plan and writes nothing', async () => {
    const bundle = { groups: [], endpoints: [endpoint('/api/dry/items')] };
    const res = await post(t, '/api/project/apply?dryRun=true', bundle);
    expect(res.body.data).toEqual({ changes: [{ kind: 'endpoint', key: 'GET /api/dry/items', action: 'create', status: 'planned' }], summary: { create: 1, update: 0, delete: 0 }, applied: false });
    expect((await exportJson(t)).endpoints.map((e: any) => e.path)).not.toContain('/api/dry/items');
  });

  it('refuses an unknown user group by name (400) and changes nothing', async () => {
    const before = await exportJson(t);
    const res = await post(t, '/api/project/apply', {
      groups: [{ name: 'Unknown refs' }],
      endpoints: [endpoint('/api/unknown/items', { accessType: 'group', allowedGroups: ['Editors', 'Ghosts'] })],
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('"Ghosts"');
    expect(res.body.details).toEqual([{ field: 'endpoints[GET /api/unknown/items].allowedGroups', message: 'names the unknown user group "Ghosts"' }]);
    expect(await exportJson(t)).toEqual(before);
  });

  it('without prune lets an endpoint name a group that is only in the store', async () => {
    expect((await post(t, '/api/project/apply', { groups: [{ name: 'Stored' }] })).status).toBe(200);
    const res = await post(t, '/api/project/apply', { endpoints: [endpoint('/api/stored/items', { group: 'stored' })] });
    expect(res.status, res.text).toBe(200);
    expect((await exportJson(t)).endpoints.find((e: any) => e.path === '/api/stored/items').group).toBe('Stored');
  });

  it('refuses an endpoint group that is neither in the bundle nor in the store', async () => {
    const res = await post(t, '/api/project/apply', { groups: [], endpoints: [endpoint('/api/nogroup/items', { group: 'Nowhere' })] });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('"Nowhere"');
  });

  it('reports a refusal only the services can make with the change it belongs to, and leaves the store as it was', async () => {
    const bundle = { groups: [], endpoints: [endpoint('/api/versioned/items', { apiVersion: 'v1' })] };
    expect((await post(t, '/api/project/apply', bundle)).status).toBe(200);
    const before = await exportJson(t);
    // Valid on its own; the clash with the other definition's /api/v1 alias needs the store.
    const res = await post(t, '/api/project/apply', {
      groups: [{ name: 'Rolled back' }],
      endpoints: [...bundle.endpoints, endpoint('/api/rolled/items', { group: 'Rolled back' }), endpoint('/api/v1/versioned/items')],
    });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('endpoint GET /api/v1/versioned/items: GET /api/v1/versioned/items is already served by "Items at /api/versioned/items" (GET /api/versioned/items, v1)');
    expect(await exportJson(t)).toEqual(before);
  });

  it('resolves ${env:NAME} placeholders when applying, and compares the resolved values', async () => {
    process.env.DYN_TEST_ALLOWED_IP = '10.1.2.3';
    const bundle = { groups: [], endpoints: [endpoint('/api/secret/items', { description: 'ip ${env:DYN_TEST_ALLOWED_IP}', networkAccess: { enabled: true, allowedIpRanges: ['${env:DYN_TEST_ALLOWED_IP}'] } })] };
    expect((await post(t, '/api/project/apply', bundle)).status).toBe(200);
    const list = await t.api('GET', '/api/endpoints?search=secret', { token: await t.adminToken() });
    const stored = list.body.data.find((e: any) => e.path === '/api/secret/items');
    expect(stored).toMatchObject({ description: 'ip 10.1.2.3', networkAccess: { enabled: true, allowedIpRanges: ['10.1.2.3'] } });
    // Export keeps the placeholders, not the secrets they resolved to.
    const exported = (await exportJson(t)).endpoints.find((e: any) => e.path === '/api/secret/items');
    expect(exported).toMatchObject({ description: 'ip ${env:DYN_TEST_ALLOWED_IP}', networkAccess: { allowedIpRanges: ['${env:DYN_TEST_ALLOWED_IP}'] } });
    expect((await post(t, '/api/project/plan', bundle)).body.data.changes).toEqual([]);

    const unset = await post(t, '/api/project/plan', { groups: [], endpoints: [endpoint('/api/secret/other', { description: '${env:DYN_TEST_NOT_SET}' })] });
    expect(unset.status).toBe(400);
    // Named by the definition, as other bundle problems are (not by its place in the list).
    expect(unset.body.error).toBe('Invalid bundle: endpoints[GET /api/secret/other].description needs the environment variable DYN_TEST_NOT_SET, which is not set');
    delete process.env.DYN_TEST_ALLOWED_IP;
  });

  it('lists an unset placeholder with the problems of the other definitions (an unknown group), not one round-trip each', async () => {
    const before = await exportJson(t);
    const res = await post(t, '/api/project/plan', {
      groups: [],
      endpoints: [
        endpoint('/api/both/one', { description: '${env:DYN_TEST_NOT_SET}', accessType: 'group', allowedGroups: ['Ghosts'] }),
        endpoint('/api/both/two', { accessType: 'group', allowedGroups: ['Ghosts2'] }),
      ],
    });
    expect(res.status).toBe(400);
    // The first definition's unknown group is checked once its placeholder resolves: its text is no value yet.
    expect(res.body.details).toEqual([
      { field: 'endpoints[GET /api/both/one].description', message: 'needs the environment variable DYN_TEST_NOT_SET, which is not set' },
      { field: 'endpoints[GET /api/both/two].allowedGroups', message: 'names the unknown user group "Ghosts2"' },
    ]);
    expect(await exportJson(t)).toEqual(before);
  });

  it('writes project_applied to the audit log', async () => {
    await post(t, '/api/project/apply', { groups: [], endpoints: [endpoint('/api/audited/items')] });
    const logs = await t.api('GET', '/api/dashboard/logs?action=project_applied', { token: await t.adminToken() });
    expect(logs.body.data[0]).toMatchObject({ action: 'project_applied', source: 'project', message: 'Project applied: 1 created, 0 updated, 0 deleted' });
  });
});

describe('apply with prune', () => {
  it('deletes only what the bundle lacks, endpoints before their groups, and never system endpoints', async () => {
    const current = await exportJson(t);
    const keep = current.endpoints.filter((e: any) => e.path.startsWith('/api/twice/'));
    const res = await post(t, '/api/project/apply?prune=true&dryRun=true', { groups: [{ name: 'Twice' }, { name: 'Extra' }], endpoints: keep });
    expect(res.status, res.text).toBe(200);
    const changes = res.body.data.changes;
    const deletes = changes.filter((c: any) => c.action === 'delete');
    expect(deletes.length).toBeGreaterThan(0);
    const firstGroupDelete = deletes.findIndex((c: any) => c.kind === 'group');
    expect(deletes.slice(firstGroupDelete).every((c: any) => c.kind === 'group')).toBe(true);
    // The Twice group loses its network rules (the bundle gives none): an update, not a delete.
    expect(changes.filter((c: any) => c.action !== 'delete').map((c: any) => `${c.action} ${c.key}`)).toEqual(['create extra', 'update twice']);

    const applied = await post(t, '/api/project/apply?prune=true', { groups: [{ name: 'Twice' }, { name: 'Extra' }], endpoints: keep });
    expect(applied.status, applied.text).toBe(200);
    const after = await exportJson(t);
    expect(after.groups.map((g: any) => g.name)).toEqual(['Extra', 'Twice']);
    expect(after.endpoints).toEqual(keep);
    const all = await t.api('GET', '/api/endpoints?limit=100', { token: await t.adminToken() });
    const system = all.body.data.filter((e: any) => e.isSystem).map((e: any) => `${e.method} ${e.path}`);
    expect(system).toEqual(expect.arrayContaining(['POST /api/auth/login', 'GET /api/health']));
  });

  it('without prune deletes nothing', async () => {
    const res = await post(t, '/api/project/apply', { groups: [{ name: 'Another' }], endpoints: [] });
    expect(res.body.data.summary).toEqual({ create: 1, update: 0, delete: 0 });
    expect((await exportJson(t)).groups.map((g: any) => g.name)).toEqual(['Another', 'Extra', 'Twice']);
  });

  it('refuses to prune with an empty bundle (400), and so does a plan of it (it would list deletions apply refuses)', async () => {
    const res = await post(t, '/api/project/apply?prune=true', { groups: [], endpoints: [] });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/no groups, no endpoints, no cronJobs and no webhooks/);
    const plan = await post(t, '/api/project/plan?prune=true', { groups: [], endpoints: [] });
    expect(plan.status).toBe(400);
    expect(plan.body).toMatchObject({ success: false, error: expect.stringMatching(/^Refusing to plan with prune with a bundle that has no groups, no endpoints, no cronJobs and no webhooks: it would delete every definition/) });
    // Without prune an empty plan is simply empty.
    expect((await post(t, '/api/project/plan', { groups: [], endpoints: [] })).body.data.changes).toEqual([]);
  });

  it('refuses a bundle that defines a system endpoint', async () => {
    const res = await post(t, '/api/project/apply', { groups: [], endpoints: [endpoint('/api/health')] });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Invalid bundle: endpoints[GET /api/health].path would shadow /api/health, which the service serves itself');
  });
});
