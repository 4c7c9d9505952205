import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

let t: TestServer;
let admin: string;
let adminId: string;
let administrators: { _id: string; name: string; permissions: string[]; description: string };

const PUBLIC_GROUP_KEYS = ['_id', 'createdAt', 'description', 'isSystem', 'name', 'permissions', 'updatedAt'];

let seq = 0;
const uniqueName = (prefix = 'group') => `${prefix}-${Date.now().toString(36)}${(seq++).toString(36)}`;

async function createGroup(body: Record<string, unknown> = {}) {
  const res = await t.api('POST', '/api/groups', { token: admin, body: { name: uniqueName(), ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

async function groupTotal(): Promise<number> {
  const res = await t.api('GET', '/api/groups', { token: admin });
  expect(res.status).toBe(200);
  return res.body.meta.total;
}

async function getGroup(id: string) {
  return (await t.api('GET', `/api/groups/${id}`, { token: admin })).body.data;
}

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  adminId = (await t.api('GET', '/api/profile', { token: admin })).body.data._id;
  const res = await t.api('GET', '/api/groups?search=Administrators', { token: admin });
  administrators = res.body.data.find((g: { name: string }) => g.name === 'Administrators');
});
afterAll(async () => {
  await t.close();
});

describe('listing and reading groups', () => {
  it('GET /api/groups answers page 1 with limit 20 by default and includes the system group Administrators', async () => {
    const res = await t.api('GET', '/api/groups', { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ page: 1, limit: 20, total: expect.any(Number) });
    const admins = res.body.data.find((g: { name: string }) => g.name === 'Administrators');
    expect(Object.keys(admins).sort()).toEqual(PUBLIC_GROUP_KEYS);
    expect(admins).toMatchObject({ isSystem: true });
    expect([...admins.permissions].sort()).toEqual(['manage_api', 'manage_users', 'view', 'view_logs']);
  });

  it('a limit above maxPageSize (100) is clamped', async () => {
    const res = await t.api('GET', '/api/groups?limit=500', { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.meta.limit).toBe(100);
  });

  it('search matches the name and the description', async () => {
    const tag = uniqueName('tag');
    const byName = await createGroup({ name: `n-${tag}` });
    const byDescription = await createGroup({ description: `about ${tag}` });
    const res = await t.api('GET', `/api/groups?search=${tag}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data.map((g: { _id: string }) => g._id).sort()).toEqual([byName._id, byDescription._id].sort());
    expect(res.body.meta.total).toBe(2);
  });

  it.each([
    ['an unknown parameter', '?name=x'],
    ['a repeated parameter', '?limit=1&limit=2'],
    ['an operator-shaped parameter', '?search[$regex]=.*'],
    ['a non-numeric limit', '?limit=ten'],
  ])('refuses %s with 400', async (_name, query) => {
    const res = await t.api('GET', `/api/groups${query}`, { token: admin });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: expect.any(String) });
  });

  it('GET /api/groups/:id answers the group', async () => {
    const group = await createGroup({ description: 'Readers', permissions: ['view'] });
    const res = await t.api('GET', `/api/groups/${group._id}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(group);
  });

  it.each([
    ['a malformed id', 'not-an-id'],
    ['an unknown id', 'dddddddddddddddddddddddd'],
  ])('GET answers 404 for %s', async (_name, id) => {
    const res = await t.api('GET', `/api/groups/${id}`, { token: admin });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: 'Group not found' });
  });
});

describe('creating groups', () => {
  it('POST /api/groups creates a non-system group with a trimmed name, empty description and no permissions by default', async () => {
    const name = uniqueName();
    const res = await t.api('POST', '/api/groups', { token: admin, body: { name: `  ${name} ` } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body.data).sort()).toEqual(PUBLIC_GROUP_KEYS);
    expect(res.body.data).toMatchObject({ name, description: '', permissions: [], isSystem: false });
  });

  it('a duplicate name, in any case and padded, is a 409', async () => {
    const group = await createGroup();
    const before = await groupTotal();
    const res = await t.api('POST', '/api/groups', { token: admin, body: { name: ` ${group.name.toUpperCase()} ` } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ success: false, error: 'A group with this name already exists' });
    expect(await groupTotal()).toBe(before);
  });

  it('cannot take the name of the system group', async () => {
    const res = await t.api('POST', '/api/groups', { token: admin, body: { name: 'administrators' } });
    expect(res.status).toBe(409);
  });

  it.each<[string, unknown]>([
    ['a missing name', { permissions: ['view'] }],
    ['a blank name', { name: '   ' }],
    ['a numeric name', { name: 7 }],
    ['an operator-shaped name', { name: { $ne: null } }],
    ['an unknown permission', { name: 'x-perm', permissions: ['root'] }],
    ['a repeated permission', { name: 'x-rep', permissions: ['view', 'view'] }],
    ['permissions that are not an array', { name: 'x-str', permissions: 'view' }],
    ['an operator-shaped permission', { name: 'x-op', permissions: [{ $ne: null }] }],
    ['an isSystem field', { name: 'x-sys', isSystem: true }],
    ['an unknown field', { name: 'x-unk', members: [] }],
    ['an array body', [{ name: 'x-arr' }]],
  ])('refuses %s with 400 and writes nothing', async (_name, body) => {
    const before = await groupTotal();
    const res = await t.api('POST', '/api/groups', { token: admin, body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: expect.any(String) });
    expect(await groupTotal()).toBe(before);
  });

  it.each([
    ['__proto__', '{"name":"proto-group","__proto__":{"isSystem":true}}'],
    ['constructor', '{"name":"ctor-group","constructor":{"prototype":{}}}'],
  ])('refuses a body with a %s key with 400 and writes nothing', async (_name, raw) => {
    const before = await groupTotal();
    const res = await t.api('POST', '/api/groups', { token: admin, rawBody: raw });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: expect.any(String) });
    expect(await groupTotal()).toBe(before);
  });
});

describe('updating groups', () => {
  it('takes back the object a GET returned; _id and isSystem cannot be changed, and a POST cannot give them', async () => {
    const group = await createGroup({ description: 'before' });
    const read = await getGroup(group._id);
    const back = await t.api('PUT', `/api/groups/${group._id}`, { token: admin, body: { ...read, description: 'after', updatedAt: '2000-01-01T00:00:00.000Z' } });
    expect(back.status, back.text).toBe(200);
    expect(back.body.data).toMatchObject({ _id: group._id, description: 'after', createdAt: read.createdAt, isSystem: false });
    for (const [field, value] of [['_id', 'ffffffffffffffffffffffff'], ['isSystem', true]] as const) {
      const res = await t.api('PUT', `/api/groups/${group._id}`, { token: admin, body: { ...read, [field]: value } });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(`Invalid request body: ${field} cannot be changed`);
    }
    const { _id, ...copy } = read;
    expect((await t.api('POST', '/api/groups', { token: admin, body: { ...copy, _id, name: uniqueName() } })).body.error).toBe('Invalid request body: _id is assigned by the service');
    expect((await t.api('POST', '/api/groups', { token: admin, body: { ...copy, isSystem: true, name: uniqueName() } })).status).toBe(400);
    const made = await t.api('POST', '/api/groups', { token: admin, body: { ...copy, name: uniqueName() } });
    expect(made.status, made.text).toBe(201);
    expect(made.body.data).toMatchObject({ description: 'before', isSystem: false });
  });

  it('PUT /api/groups/:id changes name, description and permissions', async () => {
    const group = await createGroup();
    const name = uniqueName('renamed');
    const res = await t.api('PUT', `/api/groups/${group._id}`, { token: admin, body: { name, description: 'Now with rights', permissions: ['view', 'view_logs'] } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ _id: group._id, name, description: 'Now with rights', permissions: ['view', 'view_logs'], isSystem: false });
    expect(await getGroup(group._id)).toEqual(res.body.data);
  });

  it('renaming onto an existing name is a 409 and changes nothing', async () => {
    const taken = await createGroup();
    const group = await createGroup();
    const res = await t.api('PUT', `/api/groups/${group._id}`, { token: admin, body: { name: taken.name.toLowerCase() } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ success: false, error: 'A group with this name already exists' });
    expect(await getGroup(group._id)).toEqual(group);
  });

  it.each<[string, string | Record<string, unknown>]>([
    ['an unknown field', { isSystem: true }],
    ['a wrong type', { description: ['x'] }],
    ['an unknown permission', { permissions: ['everything'] }],
    ['an operator-shaped value', { name: { $set: 'x' } }],
    ['a __proto__ key', '{"description":"x","__proto__":{"permissions":["manage_users"]}}'],
  ])('refuses %s with 400 and leaves the group as it was', async (_name, body) => {
    const group = await createGroup({ permissions: ['view'] });
    const res = await t.api('PUT', `/api/groups/${group._id}`, { token: admin, ...(typeof body === 'string' ? { rawBody: body } : { body }) });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: expect.any(String) });
    expect(await getGroup(group._id)).toEqual(group);
  });

  it.each([
    ['a malformed id', 'xyz'],
    ['an unknown id', 'eeeeeeeeeeeeeeeeeeeeeeee'],
  ])('answers 404 for %s', async (_name, id) => {
    const res = await t.api('PUT', `/api/groups/${id}`, { token: admin, body: { description: 'x' } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: 'Group not found' });
  });

  it('changing a group’s permissions applies to its members on their next request', async () => {
    const member = await createUserWith(t, ['view']);
    expect((await t.api('GET', '/api/users', { token: member.token })).status).toBe(200);
    expect((await t.api('PUT', `/api/groups/${member.groupId}`, { token: admin, body: { permissions: ['view_logs'] } })).status).toBe(200);
    expect((await t.api('GET', '/api/users', { token: member.token })).status).toBe(403);
    expect((await t.api('GET', '/api/dashboard/logs', { token: member.token })).status).toBe(200);
  });
});

describe('the system group Administrators', () => {
  it('cannot be deleted (403)', async () => {
    const res = await t.api('DELETE', `/api/groups/${administrators._id}`, { token: admin });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ success: false, error: 'A system group cannot be deleted' });
    expect(await getGroup(administrators._id)).toEqual(administrators);
  });

  it.each<[string, Record<string, unknown>]>([
    ['renamed', { name: 'Admins' }],
    ['given fewer permissions', { permissions: ['view'] }],
    ['given no permissions', { permissions: [] }],
    ['renamed and described at once', { name: 'Admins', description: 'changed' }],
  ])('cannot be %s (403) and stays as it was', async (_name, body) => {
    const res = await t.api('PUT', `/api/groups/${administrators._id}`, { token: admin, body });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ success: false, error: 'The name and permissions of a system group cannot be changed' });
    expect(await getGroup(administrators._id)).toEqual(administrators);
    expect((await t.api('GET', '/api/users', { token: admin })).status).toBe(200);
  });

  it('its description can be changed', async () => {
    const res = await t.api('PUT', `/api/groups/${administrators._id}`, { token: admin, body: { description: 'Full access' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'Administrators', description: 'Full access', permissions: administrators.permissions, isSystem: true });
  });
});

describe('deleting groups', () => {
  it('DELETE /api/groups/:id removes an empty group and answers it', async () => {
    const group = await createGroup();
    const before = await groupTotal();
    const res = await t.api('DELETE', `/api/groups/${group._id}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(group);
    expect(await groupTotal()).toBe(before - 1);
    expect((await t.api('GET', `/api/groups/${group._id}`, { token: admin })).status).toBe(404);
  });

  it('a group that still has members is a 409 and nothing changes; once emptied it can be deleted', async () => {
    const member = await createUserWith(t, ['view']);
    const groupId = member.groupId as string;
    const group = await getGroup(groupId);
    const res = await t.api('DELETE', `/api/groups/${groupId}`, { token: admin });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ success: false, error: `Group "${group.name}" still has 1 member; remove them from it first` });
    expect(await getGroup(groupId)).toEqual(group);
    const user = await t.api('GET', `/api/users/${member.userId}`, { token: admin });
    expect(user.body.data.groupIds).toEqual([groupId]);
    expect((await t.api('GET', '/api/users', { token: member.token })).status).toBe(200);

    expect((await t.api('PUT', `/api/users/${member.userId}`, { token: admin, body: { groupIds: [] } })).status).toBe(200);
    expect((await t.api('DELETE', `/api/groups/${groupId}`, { token: admin })).status).toBe(200);
  });

  it('a group an endpoint allows is a 409 and nothing changes; once the endpoint lets go of it, it can be deleted', async () => {
    const group = await createGroup();
    const endpoint = await t.api('POST', '/api/endpoints', {
      token: admin,
      body: { name: 'Group only', path: `/api/${uniqueName('only')}`, method: 'GET', accessType: 'group', allowedGroupIds: [group._id], schema: [] },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    const res = await t.api('DELETE', `/api/groups/${group._id}`, { token: admin });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ success: false, error: `Group "${group.name}" is an allowed group of 1 endpoint; remove it from their allowed groups first` });
    expect(await getGroup(group._id)).toEqual(group);
    const edit = await t.api('PUT', `/api/endpoints/${endpoint.body.data._id}`, { token: admin, body: { description: 'still savable' } });
    expect(edit.status, edit.text).toBe(200);
    expect((await t.api('PUT', `/api/endpoints/${endpoint.body.data._id}`, { token: admin, body: { accessType: 'public', allowedGroupIds: [] } })).status).toBe(200);
    expect((await t.api('DELETE', `/api/groups/${group._id}`, { token: admin })).status).toBe(200);
  });

  it('a disabled member still counts as a member', async () => {
    const member = await createUserWith(t, ['view']);
    expect((await t.api('PUT', `/api/users/${member.userId}`, { token: admin, body: { status: 'disabled' } })).status).toBe(200);
    expect((await t.api('DELETE', `/api/groups/${member.groupId}`, { token: admin })).status).toBe(409);
  });

  it.each([
    ['a malformed id', 'not-an-id'],
    ['an unknown id', 'ffffffffffffffffffffffff'],
  ])('answers 404 for %s', async (_name, id) => {
    const res = await t.api('DELETE', `/api/groups/${id}`, { token: admin });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: 'Group not found' });
  });
});

describe('audit log', () => {
  it('creating, updating and deleting a group each leave an audit entry naming the group and the actor', async () => {
    const name = uniqueName('audited');
    const created = await t.api('POST', '/api/groups', { token: admin, body: { name } });
    expect(created.status).toBe(201);
    expect((await t.api('PUT', `/api/groups/${created.body.data._id}`, { token: admin, body: { description: 'x' } })).status).toBe(200);
    expect((await t.api('DELETE', `/api/groups/${created.body.data._id}`, { token: admin })).status).toBe(200);

    for (const [action, verb] of [['group_created', 'created'], ['group_updated', 'updated'], ['group_deleted', 'deleted']] as const) {
      const res = await t.api('GET', `/api/dashboard/logs?action=${action}&search=${name}`, { token: admin });
      expect(res.status).toBe(200);
      expect(res.body.data, action).toHaveLength(1);
      expect(res.body.data[0]).toMatchObject({ action, message: `Group ${name} ${verb}`, userId: adminId });
    }
  });

  it('a refused delete leaves no audit entry', async () => {
    await t.api('DELETE', `/api/groups/${administrators._id}`, { token: admin });
    const res = await t.api('GET', '/api/dashboard/logs?action=group_deleted&search=Administrators', { token: admin });
    expect(res.body.data).toEqual([]);
  });
});
