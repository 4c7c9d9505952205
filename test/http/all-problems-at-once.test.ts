import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * A definition with several faults is refused once, with every fault in `details` (a form shows
 * them all beside their fields), whichever check finds each: the body's schema, the reference
 * lookup, the path and schema rules, the handler's compile, the URL policy, the cron parser.
 */
let t: TestServer;
let admin: string;

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
});
afterAll(async () => {
  await t.close();
});

const send = (method: string, path: string, body: unknown) => t.api(method, path, { token: admin, body });
const fields = (res: { body: { details?: Array<{ field: string }> } }) => (res.body.details ?? []).map((detail) => detail.field);

describe('every problem at once', () => {
  it('an endpoint: a blank name, a bad path, an unknown field type, a reference to no endpoint and a handler that does not compile', async () => {
    const before = (await send('GET', '/api/endpoints?limit=1', undefined)).body.meta.total;
    const res = await send('POST', '/api/endpoints', {
      name: ' ',
      path: '/api/bad path',
      method: 'GET',
      accessType: 'public',
      schema: [{ name: 'kind', type: 'nope' }, { name: 'owner', type: 'reference', refEndpointId: '0123456789abcdef01234567' }],
      handler: { enabled: true, code: 'function (' },
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toBe('Invalid schema: schema.owner.refEndpointId is not the id of an endpoint (0123456789abcdef01234567)');
    expect(fields(res)).toEqual(['schema.owner.refEndpointId', 'name', 'path', 'schema.kind.type', 'handler.code']);
    expect(res.body.details[1]).toEqual({ field: 'name', message: 'must not be empty or blank' });
    // The body was valid but for the schema rules: the same faults, found by the later checks.
    const valid = await send('POST', '/api/endpoints', {
      name: 'Faulty',
      path: '/api/bad path',
      method: 'GET',
      accessType: 'group',
      schema: [{ name: 'kind', type: 'nope' }, { name: 'owner', type: 'reference', refEndpointId: '0123456789abcdef01234567' }],
      handler: { enabled: true, code: 'function (' },
    });
    expect(valid.status, valid.text).toBe(400);
    expect(fields(valid)).toEqual(['schema.owner.refEndpointId', 'path', 'schema.kind.type', 'allowedGroupIds', 'handler.code']);
    expect((await send('GET', '/api/endpoints?limit=1', undefined)).body.meta.total).toBe(before);
  });

  it('an endpoint update: a bad path and a reference to no endpoint, both listed; a field the body refused is named once', async () => {
    const created = await send('POST', '/api/endpoints', { name: 'Fine', path: '/api/fine', method: 'GET', accessType: 'public', schema: [{ name: 'a', type: 'string' }] });
    expect(created.status, created.text).toBe(201);
    const res = await send('PUT', `/api/endpoints/${created.body.data._id}`, { path: '/api/bad path', schema: [{ name: 'owner', type: 'reference', refEndpointId: '0123456789abcdef01234567' }] });
    expect(res.status, res.text).toBe(400);
    expect(fields(res)).toEqual(['schema.owner.refEndpointId', 'path']);
    const once = await send('POST', '/api/endpoints', { name: 'x', path: '/api/once', method: 'GET', accessType: 'group', allowedGroupIds: 'nope', schema: [] });
    expect(once.status, once.text).toBe(400);
    expect(fields(once)).toEqual(['allowedGroupIds']);
    expect((await send('GET', `/api/endpoints/${created.body.data._id}`, undefined)).body.data.path).toBe('/api/fine');
  });

  it('a cron job: a missing action path, a bad schedule, an unknown time zone and an unknown runAs user', async () => {
    const res = await send('POST', '/api/cron', { name: 'nightly', schedule: 'every night', timezone: 'Mars/Base', runAs: 'ghost', action: { type: 'endpoint' } });
    expect(res.status, res.text).toBe(400);
    expect(fields(res)).toEqual(['action.path', 'action.method', 'schedule', 'timezone', 'runAs']);
    // No `must match "then" schema` line: the errors inside it say it all.
    expect(res.body.details.map((d: { message: string }) => d.message)).not.toContain('must match "then" schema');
    const shaped = await send('POST', '/api/cron', { name: 'nightly', schedule: 'every night', timezone: 'Mars/Base', action: { type: 'endpoint', path: '/api/x', method: 'GET' } });
    expect(shaped.status, shaped.text).toBe(400);
    expect(fields(shaped)).toEqual(['schedule', 'timezone']);
    expect((await send('GET', '/api/cron', undefined)).body.meta.total).toBe(0);
  });

  it("a cron job running as a stronger user: the body's problems first (400), the permission (403) only for a job that is otherwise right", async () => {
    const editor = await createUserWith(t, ['manage_api']);
    const faulty = await t.api('POST', '/api/cron', { token: editor.token, body: { name: 'as-admin', schedule: 'nope', runAs: 'admin', action: { type: 'endpoint', path: '/api/x', method: 'GET' } } });
    expect(faulty.status, faulty.text).toBe(400);
    expect(fields(faulty)).toEqual(['schedule']);
    const right = await t.api('POST', '/api/cron', { token: editor.token, body: { name: 'as-admin', schedule: '0 3 * * *', runAs: 'admin', action: { type: 'endpoint', path: '/api/x', method: 'GET' } } });
    expect(right.status, right.text).toBe(403);
    expect((await send('GET', '/api/cron', undefined)).body.meta.total).toBe(0);
  });

  it('a webhook: no name, an unknown event, a header it may not set and a URL the policy refuses', async () => {
    const res = await send('POST', '/api/webhooks', { url: 'ftp://example.test/x', events: ['nope'], headers: { Connection: 'close' } });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toBe('Invalid request body: name is required');
    expect(fields(res)).toEqual(['name', 'events.0', 'headers.Connection', 'url']);
    const named = await send('POST', '/api/webhooks', { name: 'hook', url: 'ftp://example.test/x', events: ['record.created'], headers: { Connection: 'close' } });
    expect(named.status, named.text).toBe(400);
    expect(fields(named)).toEqual(['headers.Connection', 'url']);
    expect((await send('GET', '/api/webhooks', undefined)).body.meta.total).toBe(0);
  });

  it('a user: a bad login, a short password and a group that does not exist; a password too long in bytes with it', async () => {
    const before = (await send('GET', '/api/users?limit=1', undefined)).body.meta.total;
    const res = await send('POST', '/api/users', { login: 'a b', password: 'short', groupIds: ['0123456789abcdef01234567'] });
    expect(res.status, res.text).toBe(400);
    expect(fields(res)).toEqual(['login', 'password', 'groupIds']);
    expect(res.body.details[2]).toEqual({ field: 'groupIds', message: 'unknown group 0123456789abcdef01234567' });
    // 24 four-byte characters: within the schema's 72 characters, beyond bcrypt's 72 bytes.
    const long = await send('POST', '/api/users', { login: 'longpass', password: '😀'.repeat(24), groupIds: ['0123456789abcdef01234567'] });
    expect(long.status, long.text).toBe(400);
    expect(long.body.details).toEqual([
      { field: 'password', message: 'must be at most 72 bytes' },
      { field: 'groupIds', message: 'unknown group 0123456789abcdef01234567' },
    ]);
    expect((await send('GET', '/api/users?limit=1', undefined)).body.meta.total).toBe(before);
    const user = await send('POST', '/api/users', { login: 'fine', password: 'fine-password-1' });
    expect(user.status, user.text).toBe(201);
    const update = await send('PUT', `/api/users/${user.body.data._id}`, { status: 'gone', groupIds: ['0123456789abcdef01234567'] });
    expect(update.status, update.text).toBe(400);
    expect(fields(update)).toEqual(['status', 'groupIds']);
  });
});
