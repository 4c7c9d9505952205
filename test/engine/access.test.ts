import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserWith, startTestServer, type RequestOptions, type TestServer } from '../helpers/test-server.ts';

/**
 * Access types of dynamic endpoints over real HTTP: `public` needs nothing; `authenticated` needs
 * a valid access token or API key; `group` needs a signed-in user in one of allowedGroupIds (an
 * API key belongs to no group). Missing or rejected credentials → 401; valid but not allowed → 403.
 */
let t: TestServer;
let admin: string;
let member: { token: string; userId: string; groupId: string | null };
let otherUser: { token: string };
let secondMember: { token: string };
let apiKey: string;
let powerfulKey: string;
let revokedKey: string;

let seq = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${(seq++).toString(36)}`;

async function createEndpoint(body: Record<string, unknown>): Promise<string> {
  const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: unique('access-'), schema: { title: { type: 'string' } }, ...body } });
  if (res.status !== 201) throw new Error(`endpoint create failed: ${res.status} ${res.text}`);
  return res.body.data._id;
}

async function createKey(permissions: string[]): Promise<{ key: string; id: string }> {
  const res = await t.api('POST', '/api/api-keys', { token: admin, body: { name: unique('key-'), permissions } });
  if (res.status !== 201) throw new Error(`api key create failed: ${res.text}`);
  return { key: res.body.data.key, id: res.body.data._id };
}

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  member = await createUserWith(t, ['view']);
  otherUser = await createUserWith(t, ['view']);
  // A user in a second allowed group: any one of allowedGroupIds is enough.
  const second = await createUserWith(t, ['view_logs']);
  secondMember = second;

  apiKey = (await createKey([])).key;
  powerfulKey = (await createKey(['view', 'manage_users', 'manage_api', 'view_logs'])).key;
  const revoked = await createKey([]);
  revokedKey = revoked.key;
  const del = await t.api('DELETE', `/api/api-keys/${revoked.id}`, { token: admin });
  expect(del.status).toBe(200);

  await createEndpoint({ path: '/api/acc/public', method: 'GET', accessType: 'public' });
  await createEndpoint({ path: '/api/acc/authn', method: 'GET', accessType: 'authenticated' });
  await createEndpoint({ path: '/api/acc/authn', method: 'POST', accessType: 'authenticated', schema: { title: { type: 'string', required: true } } });
  await createEndpoint({ path: '/api/acc/members', method: 'GET', accessType: 'group', allowedGroupIds: [member.groupId, second.groupId] });
  await createEndpoint({ path: '/api/acc/members', method: 'POST', accessType: 'group', allowedGroupIds: [member.groupId], schema: { title: { type: 'string', required: true } } });
});

afterAll(async () => {
  await t.close();
});

type Who = 'nobody' | 'garbage bearer' | 'garbage api key' | 'revoked key' | 'api key' | 'api key (ApiKey header)' | 'powerful api key' | 'member' | 'second-group member' | 'other user' | 'admin';

function as(who: Who): RequestOptions {
  switch (who) {
    case 'nobody':
      return {};
    case 'garbage bearer':
      return { token: 'not.a.jwt' };
    case 'garbage api key':
      return { apiKey: 'dyn_nope_nope' };
    case 'revoked key':
      return { apiKey: revokedKey };
    case 'api key':
      return { apiKey };
    case 'api key (ApiKey header)':
      return { headers: { authorization: `ApiKey ${apiKey}` } };
    case 'powerful api key':
      return { apiKey: powerfulKey };
    case 'member':
      return { token: member.token };
    case 'second-group member':
      return { token: secondMember.token };
    case 'other user':
      return { token: otherUser.token };
    case 'admin':
      return { token: admin };
  }
}

const rows: Array<{ path: string; who: Who; status: number }> = [
  { path: '/api/acc/public', who: 'nobody', status: 200 },
  { path: '/api/acc/public', who: 'member', status: 200 },
  { path: '/api/acc/public', who: 'api key', status: 200 },
  // Rejected credentials do not lock anyone out of a public endpoint.
  { path: '/api/acc/public', who: 'garbage bearer', status: 200 },
  { path: '/api/acc/public', who: 'revoked key', status: 200 },

  { path: '/api/acc/authn', who: 'nobody', status: 401 },
  { path: '/api/acc/authn', who: 'garbage bearer', status: 401 },
  { path: '/api/acc/authn', who: 'garbage api key', status: 401 },
  { path: '/api/acc/authn', who: 'revoked key', status: 401 },
  { path: '/api/acc/authn', who: 'api key', status: 200 },
  { path: '/api/acc/authn', who: 'api key (ApiKey header)', status: 200 },
  { path: '/api/acc/authn', who: 'member', status: 200 },
  { path: '/api/acc/authn', who: 'other user', status: 200 },
  { path: '/api/acc/authn', who: 'admin', status: 200 },

  { path: '/api/acc/members', who: 'nobody', status: 401 },
  { path: '/api/acc/members', who: 'garbage bearer', status: 401 },
  { path: '/api/acc/members', who: 'revoked key', status: 401 },
  { path: '/api/acc/members', who: 'member', status: 200 },
  { path: '/api/acc/members', who: 'second-group member', status: 200 },
  { path: '/api/acc/members', who: 'other user', status: 403 },
  // Administrators are not in allowedGroupIds: permissions do not widen a group endpoint.
  { path: '/api/acc/members', who: 'admin', status: 403 },
  { path: '/api/acc/members', who: 'api key', status: 403 },
  { path: '/api/acc/members', who: 'powerful api key', status: 403 },
];

describe('access types over HTTP', () => {
  it.each(rows)('GET $path as $who → $status', async ({ path, who, status }) => {
    const res = await t.api('GET', path, as(who));
    expect(res.status, res.text).toBe(status);
    if (status === 200) {
      expect(res.body).toMatchObject({ success: true, data: [] });
    } else {
      expect(res.body.success).toBe(false);
      expect(typeof res.body.error).toBe('string');
    }
  });

  it('a 401 says why: missing credentials vs rejected ones', async () => {
    const missing = await t.api('GET', '/api/acc/authn');
    expect(missing.body).toEqual({ success: false, error: 'Authentication required' });
    const revoked = await t.api('GET', '/api/acc/authn', { apiKey: revokedKey });
    expect(revoked.status).toBe(401);
    expect(revoked.body.error).not.toBe('Authentication required');
  });

  it('a 403 on a group endpoint is the forbidden shape', async () => {
    const res = await t.api('GET', '/api/acc/members', { token: otherUser.token });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ success: false, error: 'Forbidden: this endpoint is for members of specific groups' });
  });

  it('access is checked before the body is validated', async () => {
    // An invalid body from someone without access is a 401/403, never a 400 that leaks the schema.
    expect((await t.api('POST', '/api/acc/authn', { body: { nope: 1 } })).status).toBe(401);
    expect((await t.api('POST', '/api/acc/members', { token: otherUser.token, body: { nope: 1 } })).status).toBe(403);
    expect((await t.api('POST', '/api/acc/members', { apiKey, body: { nope: 1 } })).status).toBe(403);
    // With access, the same body is a 400, and a valid one is stored.
    expect((await t.api('POST', '/api/acc/members', { token: member.token, body: { nope: 1 } })).status).toBe(400);
    const created = await t.api('POST', '/api/acc/members', { token: member.token, body: { title: 'mine' } });
    expect(created.status).toBe(201);
    const listed = await t.api('GET', '/api/acc/members', { token: member.token });
    expect(listed.body.data.map((r: { title: string }) => r.title)).toContain('mine');
  });

  it('authenticated endpoints accept an API key for writes too', async () => {
    const res = await t.api('POST', '/api/acc/authn', { apiKey, body: { title: 'by key' } });
    expect(res.status).toBe(201);
    expect(res.body.data.title).toBe('by key');
  });

  it('a key revoked after use fails on the next request', async () => {
    const key = await createKey([]);
    expect((await t.api('GET', '/api/acc/authn', { apiKey: key.key })).status).toBe(200);
    expect((await t.api('DELETE', `/api/api-keys/${key.id}`, { token: admin })).status).toBe(200);
    expect((await t.api('GET', '/api/acc/authn', { apiKey: key.key })).status).toBe(401);
  });

  it('changing accessType applies on the next request', async () => {
    const path = `/api/acc/${unique('switch')}`;
    const id = await createEndpoint({ path, method: 'GET', accessType: 'public' });
    expect((await t.api('GET', path)).status).toBe(200);
    expect((await t.api('PUT', `/api/endpoints/${id}`, { token: admin, body: { accessType: 'authenticated' } })).status).toBe(200);
    expect((await t.api('GET', path)).status).toBe(401);
    expect((await t.api('GET', path, { apiKey })).status).toBe(200);
    expect((await t.api('PUT', `/api/endpoints/${id}`, { token: admin, body: { accessType: 'group', allowedGroupIds: [member.groupId] } })).status).toBe(200);
    expect((await t.api('GET', path, { apiKey })).status).toBe(403);
    expect((await t.api('GET', path, { token: member.token })).status).toBe(200);
  });

  it('a user taken out of the allowed group loses access within 2 seconds', async () => {
    const user = await createUserWith(t, ['view']);
    const path = `/api/acc/${unique('leave')}`;
    await createEndpoint({ path, method: 'GET', accessType: 'group', allowedGroupIds: [user.groupId] });
    expect((await t.api('GET', path, { token: user.token })).status).toBe(200);
    expect((await t.api('PUT', `/api/users/${user.userId}`, { token: admin, body: { groupIds: [] } })).status).toBe(200);
    const started = Date.now();
    let status = 200;
    while (Date.now() - started < 3000) {
      status = (await t.api('GET', path, { token: user.token })).status;
      if (status === 403) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(403);
  });
});
