import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

let t: TestServer;
let admin: string;
beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
});
afterAll(async () => {
  await t.close();
});

const KEY_FORMAT = /^dyn_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/;
const BCRYPT_HASH = /\$2[aby]\$\d\d\$/;
let seq = 0;
const uniqueName = (label: string) => `${label}-${Date.now().toString(36)}-${++seq}`;

async function createKey(permissions: string[], extra: Record<string, unknown> = {}, token = admin) {
  const name = uniqueName('key');
  const res = await t.api('POST', '/api/api-keys', { token, body: { name, permissions, ...extra } });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.data._id as string, key: res.body.data.key as string, name, res };
}

/** Audit entries for one action whose message/action/source/ip contains `search`. */
async function auditEntries(action: string, search: string) {
  const res = await t.api('GET', `/api/dashboard/logs?action=${action}&search=${encodeURIComponent(search)}&limit=100`, { token: admin });
  expect(res.status, res.text).toBe(200);
  return res.body.data as Array<Record<string, unknown>>;
}

/** Polls until `check` passes or `ms` elapse (buffered audit writes land within ~0.5 s). */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, ms = 3000): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await read();
  while (!check(value) && Date.now() < deadline) {
    await sleep(100);
    value = await read();
  }
  return value;
}

describe('creating and reading keys', () => {
  it('returns the key once as data.key in the documented format, and never again', async () => {
    const { id, key, name, res } = await createKey(['view']);
    expect(key).toMatch(KEY_FORMAT);
    expect(res.body.data).toMatchObject({ name, permissions: ['view'], expiresAt: null, lastUsedAt: null, prefix: key.slice(0, 16) });

    const one = await t.api('GET', `/api/api-keys/${id}`, { token: admin });
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ _id: id, name, prefix: key.slice(0, 16) });
    expect(one.body.data).not.toHaveProperty('key');

    const list = await t.api('GET', '/api/api-keys', { token: admin });
    expect(list.status).toBe(200);
    expect(list.body.data.some((k: { _id: string }) => k._id === id)).toBe(true);
    for (const response of [one, list]) {
      expect(response.text).not.toContain(key);
      expect(response.text).not.toContain(key.slice(17)); // the secret part
      expect(response.text).not.toMatch(BCRYPT_HASH);
      expect(response.text).not.toMatch(/keyHash/);
    }
  });

  it('lists keys paged, with meta', async () => {
    await createKey(['view']);
    await createKey(['view']);
    const res = await t.api('GET', '/api/api-keys?limit=1&page=2', { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.meta).toMatchObject({ page: 2, limit: 1 });
    expect(res.body.meta.total).toBeGreaterThanOrEqual(2);
  });

  it.each([
    ['a missing name', { permissions: ['view'] }],
    ['an unknown permission', { name: 'x', permissions: ['root'] }],
    ['an unknown field', { name: 'x', permissions: [], admin: true }],
    ['an expiry in the past', { name: 'x', permissions: ['view'], expiresAt: new Date(Date.now() - 60_000).toISOString() }],
    ['an expiry that is not a date', { name: 'x', permissions: ['view'], expiresAt: 'tomorrow' }],
  ])('refuses a key with %s (400) and creates nothing', async (_label, body) => {
    const before = (await t.api('GET', '/api/api-keys', { token: admin })).body.meta.total;
    const res = await t.api('POST', '/api/api-keys', { token: admin, body });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(typeof res.body.error).toBe('string');
    expect((await t.api('GET', '/api/api-keys', { token: admin })).body.meta.total).toBe(before);
  });

  it('an unknown id is a 404', async () => {
    const res = await t.api('GET', '/api/api-keys/ffffffffffffffffffffffff', { token: admin });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: 'API key not found' });
  });

  it('needs manage_api: a view user gets 403, no credentials 401', async () => {
    const viewer = await createUserWith(t, ['view']);
    expect((await t.api('GET', '/api/api-keys', { token: viewer.token })).status).toBe(403);
    expect((await t.api('POST', '/api/api-keys', { token: viewer.token, body: { name: 'x', permissions: [] } })).status).toBe(403);
    expect((await t.api('GET', '/api/api-keys')).status).toBe(401);
  });
});

describe('using a key', () => {
  it.each([
    ['X-API-Key', (key: string) => ({ 'x-api-key': key })],
    ['Authorization: ApiKey', (key: string) => ({ authorization: `ApiKey ${key}` })],
  ])('is accepted as %s and acts with exactly its permissions', async (_label, headers) => {
    const { key } = await createKey(['view']);
    const read = await t.api('GET', '/api/users', { headers: headers(key) });
    expect(read.status).toBe(200);
    expect(read.body.success).toBe(true);
    const write = await t.api('POST', '/api/groups', { headers: headers(key), body: { name: uniqueName('g'), permissions: [] } });
    expect(write.status).toBe(403);
    expect((await t.api('GET', '/api/dashboard/logs', { headers: headers(key) })).status).toBe(403);
  });

  it.each([
    ['a changed last character', (key: string) => key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A')],
    ['a changed key id', (key: string) => `dyn_${key.slice(4, 15)}${key[15] === '0' ? '1' : '0'}${key.slice(16)}`],
    ['a truncated key', (key: string) => key.slice(0, -2)],
    ['garbage', () => 'not-a-key'],
  ])('refuses a key with %s (401)', async (_label, tamper) => {
    const { key } = await createKey(['view']);
    const res = await t.api('GET', '/api/users', { apiKey: tamper(key) });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, error: 'Invalid or expired API key' });
  });

  it('sets lastUsedAt when the key is used', async () => {
    const { id, key } = await createKey(['view']);
    const before = Date.now();
    expect((await t.api('GET', '/api/users', { apiKey: key })).status).toBe(200);
    const res = await t.api('GET', `/api/api-keys/${id}`, { token: admin });
    expect(res.body.data.lastUsedAt).not.toBeNull();
    expect(Date.parse(res.body.data.lastUsedAt)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('stops working once it expires', async () => {
    const expiresAt = new Date(Date.now() + 2000).toISOString();
    const { key, res } = await createKey(['view'], { expiresAt });
    expect(res.body.data.expiresAt).toBe(expiresAt);
    expect((await t.api('GET', '/api/users', { apiKey: key })).status).toBe(200);
    await sleep(Date.parse(expiresAt) - Date.now() + 100);
    const after = await t.api('GET', '/api/users', { apiKey: key });
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ success: false, error: 'Invalid or expired API key' });
  });
});

describe('changing and revoking a key', () => {
  it('takes back the key a GET showed, changed where the client changed it; its _id cannot change', async () => {
    const { id } = await createKey(['view']);
    const read = (await t.api('GET', `/api/api-keys/${id}`, { token: admin })).body.data;
    const back = await t.api('PUT', `/api/api-keys/${id}`, { token: admin, body: { ...read, name: 'sent back', lastUsedAt: null, prefix: 'dyn_x' } });
    expect(back.status, back.text).toBe(200);
    expect(back.body.data).toMatchObject({ _id: id, name: 'sent back', prefix: read.prefix, permissions: ['view'] });
    const moved = await t.api('PUT', `/api/api-keys/${id}`, { token: admin, body: { ...read, _id: 'ffffffffffffffffffffffff' } });
    expect(moved.body.error).toBe('Invalid request body: _id cannot be changed');
  });

  it('writes nothing for a save that changes nothing, and the audit entry of a change names what changed', async () => {
    const { id } = await createKey(['view']);
    const read = (await t.api('GET', `/api/api-keys/${id}`, { token: admin })).body.data;
    const entries = async () => (await t.api('GET', '/api/dashboard/logs?action=api_key_updated&limit=100', { token: admin })).body.data.filter((e: { message: string }) => e.message.includes(read.name));
    const same = await t.api('PUT', `/api/api-keys/${id}`, { token: admin, body: { ...read, name: ` ${read.name} ` } });
    expect(same.status, same.text).toBe(200);
    expect(same.body.data.updatedAt).toBe(read.updatedAt);
    expect(await entries()).toEqual([]);
    const changed = await t.api('PUT', `/api/api-keys/${id}`, { token: admin, body: { permissions: ['view_logs'] } });
    expect(changed.body.data.updatedAt).not.toBe(read.updatedAt);
    expect((await entries()).map((e: { message: string }) => e.message)).toEqual([`API key "${read.name}" updated (permissions)`]);
  });

  it('a key sent back unchanged is no new grant: a caller without its permissions may still rename it', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const { id } = await createKey(['view', 'view_logs'], { expiresAt });
    const apiManager = await createUserWith(t, ['manage_api']);
    const read = (await t.api('GET', `/api/api-keys/${id}`, { token: apiManager.token })).body.data;
    expect(read.expiresAt).toBe(expiresAt);
    const renamed = await t.api('PUT', `/api/api-keys/${id}`, { token: apiManager.token, body: { ...read, name: 'renamed' } });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: 'renamed', permissions: ['view', 'view_logs'], expiresAt });
    const widened = await t.api('PUT', `/api/api-keys/${id}`, { token: apiManager.token, body: { ...read, permissions: ['view', 'view_logs', 'manage_users'] } });
    expect(widened.status).toBe(403);
  });

  it('a caller without a key\'s permissions cannot lengthen its life or revive it, but may shorten it or revoke it', async () => {
    const soon = new Date(Date.now() + 86_400_000).toISOString();
    const { id, key } = await createKey(['view', 'view_logs'], { expiresAt: soon });
    const apiManager = await createUserWith(t, ['manage_api']);
    for (const expiresAt of [null, new Date(Date.now() + 30 * 86_400_000).toISOString()]) {
      const res = await t.api('PUT', `/api/api-keys/${id}`, { token: apiManager.token, body: { expiresAt } });
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('You cannot extend a key holding permissions you do not have: view, view_logs');
    }
    expect((await t.api('GET', `/api/api-keys/${id}`, { token: admin })).body.data.expiresAt).toBe(soon);
    const sooner = new Date(Date.now() + 3_600_000).toISOString();
    const shortened = await t.api('PUT', `/api/api-keys/${id}`, { token: apiManager.token, body: { expiresAt: sooner } });
    expect(shortened.status, shortened.text).toBe(200);
    expect(shortened.body.data.expiresAt).toBe(sooner);
    expect((await t.api('DELETE', `/api/api-keys/${id}`, { token: apiManager.token })).status).toBe(200);
    expect((await t.api('GET', '/api/users', { apiKey: key })).status).toBe(401);
  });

  it('a permission change applies on the next request', async () => {
    const { id, key } = await createKey(['view']);
    expect((await t.api('GET', '/api/users', { apiKey: key })).status).toBe(200);
    expect((await t.api('GET', '/api/dashboard/logs', { apiKey: key })).status).toBe(403);

    const put = await t.api('PUT', `/api/api-keys/${id}`, { token: admin, body: { permissions: ['view_logs'] } });
    expect(put.status).toBe(200);
    expect(put.body.data.permissions).toEqual(['view_logs']);
    expect(put.text).not.toContain(key);

    expect((await t.api('GET', '/api/users', { apiKey: key })).status).toBe(403);
    expect((await t.api('GET', '/api/dashboard/logs', { apiKey: key })).status).toBe(200);
  });

  it('a revoked key is refused on the next request and is gone', async () => {
    const { id, key, name } = await createKey(['view']);
    expect((await t.api('GET', '/api/users', { apiKey: key })).status).toBe(200);
    const del = await t.api('DELETE', `/api/api-keys/${id}`, { token: admin });
    expect(del.status).toBe(200);
    expect(del.body.data).toMatchObject({ _id: id, name });
    const after = await t.api('GET', '/api/users', { apiKey: key });
    expect(after.status).toBe(401);
    expect(after.body.error).toBe('Invalid or expired API key');
    expect((await t.api('GET', `/api/api-keys/${id}`, { token: admin })).status).toBe(404);
    expect((await t.api('DELETE', `/api/api-keys/${id}`, { token: admin })).status).toBe(404);
  });

  it('a caller cannot grant permissions it lacks, on create or on update', async () => {
    const manager = await createUserWith(t, ['manage_api', 'view']);
    const denied = await t.api('POST', '/api/api-keys', { token: manager.token, body: { name: uniqueName('k'), permissions: ['manage_users'] } });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ success: false, error: 'You cannot grant permissions you do not have: manage_users' });

    const { id, key } = await createKey(['view'], {}, manager.token);
    const raise = await t.api('PUT', `/api/api-keys/${id}`, { token: manager.token, body: { permissions: ['view', 'view_logs'] } });
    expect(raise.status).toBe(403);
    expect((await t.api('GET', `/api/api-keys/${id}`, { token: admin })).body.data.permissions).toEqual(['view']);
    expect((await t.api('GET', '/api/dashboard/logs', { apiKey: key })).status).toBe(403);
  });

  it('a key with manage_api cannot mint a stronger key either', async () => {
    const { key } = await createKey(['manage_api']);
    const res = await t.api('POST', '/api/api-keys', { apiKey: key, body: { name: uniqueName('k'), permissions: ['manage_api', 'view'] } });
    expect(res.status).toBe(403);
    const same = await t.api('POST', '/api/api-keys', { apiKey: key, body: { name: uniqueName('k'), permissions: ['manage_api'] } });
    expect(same.status).toBe(201);
  });

  it('a key that expires cannot outlive itself: not by removing its own expiry, nor through a key it mints', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const { id, key } = await createKey(['manage_api'], { expiresAt });
    const bound = `An API key that expires cannot give a key a later expiry than its own: set expiresAt no later than ${expiresAt}`;
    const forever = await t.api('PUT', `/api/api-keys/${id}`, { apiKey: key, body: { expiresAt: null } });
    expect(forever.status, forever.text).toBe(403);
    expect(forever.body.error).toBe(bound);
    expect((await t.api('PUT', `/api/api-keys/${id}`, { apiKey: key, body: { expiresAt: new Date(Date.now() + 7_200_000).toISOString() } })).status).toBe(403);
    expect((await t.api('GET', `/api/api-keys/${id}`, { token: admin })).body.data.expiresAt).toBe(expiresAt);
    const child = await t.api('POST', '/api/api-keys', { apiKey: key, body: { name: uniqueName('child'), permissions: ['manage_api'] } });
    expect(child.status, child.text).toBe(403);
    expect(child.body.error).toBe(bound);
    const within = await t.api('POST', '/api/api-keys', { apiKey: key, body: { name: uniqueName('child'), permissions: ['manage_api'], expiresAt } });
    expect(within.status, within.text).toBe(201);
    // A user may still give it a longer life; so may a key that never expires.
    expect((await t.api('PUT', `/api/api-keys/${id}`, { token: admin, body: { expiresAt: null } })).status).toBe(200);
  });
});

describe('audit', () => {
  it('records api_key_used at most once a minute per key', async () => {
    const { key, name } = await createKey(['view']);
    for (let i = 0; i < 5; i++) expect((await t.api('GET', '/api/users', { apiKey: key })).status).toBe(200);
    const entries = await eventually(() => auditEntries('api_key_used', name), (e) => e.length > 0);
    await sleep(700); // a second, wrongly buffered entry would have been flushed by now
    const settled = await auditEntries('api_key_used', name);
    expect(entries).toHaveLength(1);
    expect(settled).toHaveLength(1);
    expect(settled[0]).toMatchObject({ action: 'api_key_used', message: `API key "${name}" used`, ip: '127.0.0.1', method: 'GET', path: '/api/users' });
  });

  it('names the key that made a change (a key has no user to name)', async () => {
    const { key, id: keyId, name: keyName } = await createKey(['manage_api']);
    const made = await t.api('POST', '/api/api-keys', { apiKey: key, body: { name: uniqueName('by-key'), permissions: ['manage_api'] } });
    expect(made.status).toBe(201);
    const [entry] = await eventually(() => auditEntries('api_key_created', made.body.data.name), (e) => e.length > 0);
    expect(entry).toMatchObject({ message: `API key "${made.body.data.name}" created by API key "${keyName}" (${keyId})`, userId: null, method: 'POST' });
  });

  it('records api_key_created and api_key_revoked', async () => {
    const { id, name } = await createKey(['view']);
    expect((await t.api('DELETE', `/api/api-keys/${id}`, { token: admin })).status).toBe(200);
    const created = await auditEntries('api_key_created', name);
    const revoked = await auditEntries('api_key_revoked', name);
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ message: `API key "${name}" created`, statusCode: 201, ip: '127.0.0.1', method: 'POST' });
    expect(revoked).toHaveLength(1);
    expect(revoked[0]).toMatchObject({ message: `API key "${name}" revoked`, statusCode: 200, method: 'DELETE' });
  });
});
