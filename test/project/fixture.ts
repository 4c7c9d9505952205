import { expect } from 'vitest';
import type { ApiResponse, TestServer } from '../helpers/test-server.ts';

/**
 * A small shop, created through the ordinary management API: one user group (Editors), two
 * endpoint groups, five endpoints with references between them, and records whose reference
 * fields point at each other.
 */
export async function populateShop(t: TestServer): Promise<{ categoryId: string; productId: string }> {
  const admin = await t.adminToken();
  const call = async (method: string, path: string, body?: unknown, status = 201): Promise<any> => {
    const res = await t.api(method, path, { token: admin, ...(body === undefined ? {} : { body }) });
    expect(res.status, `${method} ${path}: ${res.text}`).toBe(status);
    return res.body.data;
  };
  await ensureUserGroup(t, 'Editors');
  const editors = await userGroupId(t, 'Editors');
  const shop = await call('POST', '/api/endpoints/groups', { name: 'Shop', color: '#112233', order: 2, networkAccess: { enabled: true, allowedIpRanges: ['127.0.0.1'] } });
  await call('POST', '/api/endpoints/groups', { name: 'Admin tools', description: 'internal' });
  const categories = { title: { type: 'string', required: true } };
  await call('POST', '/api/endpoints', { name: 'List categories', path: '/api/shop/categories', method: 'GET', accessType: 'public', schema: categories, groupId: shop._id });
  await call('POST', '/api/endpoints', { name: 'Create category', path: 'api/shop/categories/', method: 'POST', accessType: 'public', schema: categories, groupId: shop._id });
  const products = { title: { type: 'string', required: true }, category: { type: 'reference', ref: '/api/shop/categories' }, tags: { type: 'array', items: { type: 'string' }, defaultValue: [] } };
  await call('POST', '/api/endpoints', { name: 'List products', path: '/api/shop/products', method: 'GET', accessType: 'public', schema: products, groupId: shop._id, apiVersion: 'v1' });
  await call('POST', '/api/endpoints', {
    name: 'Create product',
    path: '/api/shop/products',
    method: 'POST',
    accessType: 'group',
    allowedGroupIds: [editors],
    schema: products,
    groupId: shop._id,
    retentionDays: 30,
  });
  await call('POST', '/api/endpoints', {
    name: 'Stats',
    path: '/api/stats',
    method: 'GET',
    accessType: 'authenticated',
    schema: {},
    handler: { enabled: true, code: 'async function handler(req, db) {\n  return { status: 200, data: { ok: true } };\n}' },
  });
  // Records, through the dynamic endpoints (as admin, who is added to Editors for the product).
  const adminUser = (await t.api('GET', '/api/profile', { token: admin })).body.data;
  await call('PUT', `/api/users/${adminUser._id}`, { groupIds: [...adminUser.groupIds, editors] }, 200);
  const category = await call('POST', '/api/shop/categories', { title: 'Books' });
  const product = await call('POST', '/api/shop/products', { title: 'Dune', category: category._id, tags: ['sf'] });
  return { categoryId: category._id, productId: product._id };
}

export async function ensureUserGroup(t: TestServer, name: string): Promise<void> {
  const admin = await t.adminToken();
  const res = await t.api('POST', '/api/groups', { token: admin, body: { name } });
  expect([201, 409], res.text).toContain(res.status);
}

export async function userGroupId(t: TestServer, name: string): Promise<string> {
  const res = await t.api('GET', `/api/groups?search=${encodeURIComponent(name)}`, { token: await t.adminToken() });
  const group = res.body.data.find((g: any) => g.name === name);
  if (!group) throw new Error(`no user group ${name}`);
  return group._id;
}

export async function exportJson(t: TestServer, query = ''): Promise<any> {
  const res = await t.api('GET', `/api/project/export?format=json${query}`, { token: await t.adminToken() });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

export async function exportYaml(t: TestServer, query = ''): Promise<string> {
  const res = await t.api('GET', `/api/project/export${query ? `?${query.replace(/^&/, '')}` : ''}`, { token: await t.adminToken() });
  expect(res.status, res.text).toBe(200);
  return res.text;
}

export async function post(t: TestServer, path: string, body: unknown, token?: string): Promise<ApiResponse> {
  return t.api('POST', path, { token: token ?? (await t.adminToken()), body });
}

/** Every string value in a tree, with its path: to look for ids where none may be. */
export function strings(value: unknown, path = ''): Array<[string, string]> {
  if (typeof value === 'string') return [[path, value]];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) => strings(inner, `${path}.${key}`));
}
