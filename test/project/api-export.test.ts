import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { exportJson, exportYaml, populateShop, post, strings } from './fixture.ts';

/** GET /api/project/export and GET /api/project/status, and who may call the project API. */
let t: TestServer;
let ids: { categoryId: string; productId: string };

beforeAll(async () => {
  t = await startTestServer();
  ids = await populateShop(t);
});
afterAll(async () => {
  await t.close();
});

describe('export', () => {
  it('carries no ids and no read-only fields: references are names', async () => {
    const bundle = await exportJson(t);
    expect(Object.keys(bundle)).toEqual(['groups', 'endpoints', 'cronJobs', 'webhooks']);
    const ids = strings(bundle).filter(([, value]) => /^[0-9a-f]{24}$/.test(value));
    expect(ids).toEqual([]);
    for (const endpoint of bundle.endpoints) {
      for (const field of ['_id', 'isSystem', 'callCount', 'revision', 'createdAt', 'updatedAt', 'groupId', 'allowedGroupIds']) expect(endpoint).not.toHaveProperty(field);
    }
    for (const group of bundle.groups) for (const field of ['_id', 'nameKey', 'createdAt', 'updatedAt']) expect(group).not.toHaveProperty(field);
    const createProduct = bundle.endpoints.find((e: any) => e.method === 'POST' && e.path === '/api/shop/products');
    expect(createProduct).toMatchObject({ group: 'Shop', accessType: 'group', allowedGroups: ['Editors'], retentionDays: 30 });
    expect(createProduct.schema.category).toEqual({ type: 'reference', ref: '/api/shop/categories' });
  });

  it('fills every default, so the export is the definition in full', async () => {
    const bundle = await exportJson(t);
    expect(bundle.groups.find((g: any) => g.name === 'Admin tools')).toEqual({
      name: 'Admin tools',
      description: 'internal',
      icon: '',
      color: '#6b7280',
      order: 0,
      networkAccess: { enabled: false, allowedDomains: [], allowedIpRanges: [] },
    });
    expect(bundle.endpoints.find((e: any) => e.path === '/api/stats')).toEqual({
      name: 'Stats',
      description: '',
      slug: 'stats',
      path: '/api/stats',
      method: 'GET',
      accessType: 'authenticated',
      allowedGroups: [],
      group: null,
      schema: {},
      networkAccess: { enabled: false, allowedDomains: [], allowedIpRanges: [] },
      inheritGroupNetworkAccess: true,
      enabled: true,
      apiVersion: null,
      retentionDays: null,
      handler: { enabled: true, code: 'async function handler(req, db) {\n  return { status: 200, data: { ok: true } };\n}' },
    });
  });

  it('leaves out system endpoints and lists groups by name, endpoints by path then method', async () => {
    const bundle = await exportJson(t);
    expect(bundle.groups.map((g: any) => g.name)).toEqual(['Admin tools', 'Shop']);
    expect(bundle.endpoints.map((e: any) => `${e.method} ${e.path}`)).toEqual([
      'GET /api/shop/categories',
      'POST /api/shop/categories',
      'GET /api/shop/products',
      'POST /api/shop/products',
      'GET /api/stats',
    ]);
  });

  it('is YAML by default, with content type application/yaml, holding the same bundle', async () => {
    const res = await t.api('GET', '/api/project/export', { token: await t.adminToken() });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(parse(res.text)).toEqual(await exportJson(t));
    expect(res.text).toContain('code: |');
  });

  it('is the same text twice in a row', async () => {
    expect(await exportYaml(t, 'data=true&settings=true')).toBe(await exportYaml(t, 'data=true&settings=true'));
  });

  it('with data=true adds the records per collection path, keeping their ids', async () => {
    const bundle = await exportJson(t, '&data=true');
    expect(Object.keys(bundle.data)).toEqual(['/api/shop/categories', '/api/shop/products']);
    expect(bundle.data['/api/shop/categories']).toEqual([{ _id: ids.categoryId, title: 'Books', createdAt: expect.any(String), updatedAt: expect.any(String) }]);
    expect(bundle.data['/api/shop/products']).toEqual([
      { _id: ids.productId, title: 'Dune', category: ids.categoryId, tags: ['sf'], createdAt: expect.any(String), updatedAt: expect.any(String), expiresAt: expect.any(String) },
    ]);
  });

  it('with settings=true adds the settings; users and the audit log are never exported', async () => {
    const bundle = await exportJson(t, '&settings=true&data=true');
    expect(bundle.settings).toMatchObject({ registrationEnabled: false, defaultPageSize: 20, maxPageSize: 100 });
    expect(bundle.settings).not.toHaveProperty('logsCount');
    expect(Object.keys(bundle)).toEqual(['groups', 'endpoints', 'cronJobs', 'webhooks', 'data', 'settings']);
    expect(JSON.stringify(bundle)).not.toContain('passwordHash');
  });

  it('refuses unknown query parameters and bad values', async () => {
    const admin = await t.adminToken();
    expect((await t.api('GET', '/api/project/export?format=xml', { token: admin })).status).toBe(400);
    expect((await t.api('GET', '/api/project/export?data=yes', { token: admin })).status).toBe(400);
    expect((await t.api('GET', '/api/project/export?users=true', { token: admin })).status).toBe(400);
  });
});

describe('status', () => {
  it('reports the project directory, not watched yet', async () => {
    const res = await t.api('GET', '/api/project/status', { token: await t.adminToken() });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({ dir: `${t.dataDir}/project`, watching: false, lastReconcile: null, problems: [] });
  });
});

describe('permissions', () => {
  const routes: Array<[string, string]> = [
    ['GET', '/api/project/export'],
    ['GET', '/api/project/status'],
    ['POST', '/api/project/plan'],
    ['POST', '/api/project/apply'],
    ['POST', '/api/project/import'],
  ];

  it.each(routes)('%s %s needs credentials (401)', async (method, path) => {
    const res = await t.api(method, path, method === 'POST' ? { body: { groups: [], endpoints: [] } } : {});
    expect(res.status).toBe(401);
  });

  it.each(routes)('%s %s needs manage_api: view is not enough (403)', async (method, path) => {
    const viewer = await createUserWith(t, ['view']);
    const res = await t.api(method, path, { token: viewer.token, ...(method === 'POST' ? { body: { groups: [], endpoints: [] } } : {}) });
    expect(res.status).toBe(403);
  });

  it('manage_api is enough', async () => {
    const manager = await createUserWith(t, ['manage_api']);
    expect((await t.api('GET', '/api/project/export', { token: manager.token })).status).toBe(200);
    expect((await post(t, '/api/project/plan', { groups: [], endpoints: [] }, manager.token)).status).toBe(200);
  });
});
