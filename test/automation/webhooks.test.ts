import { createHmac, timingSafeEqual } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

// Webhooks over the real API, delivering to real listeners on 127.0.0.1 (allowed through
// outboundAllowList). Retries run on a 100 ms base (WEBHOOK_RETRY_BASE_MS) so they fit a test.
let t: TestServer;
let admin: string;
const receiver = new WebhookReceiver();
/** Never on the allow list: whatever reaches it is a policy failure. */
const forbidden = new WebhookReceiver();

let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}${(seq++).toString(36)}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// The receiver's check as the README documents it (section "Verifying a delivery").
function verify(secret: string, headers: Record<string, string | string[] | undefined>, rawBody: string, maxAgeSeconds = 300): boolean {
  const timestamp = String(headers['x-webhook-timestamp'] ?? '');
  const received = String(headers['x-webhook-signature'] ?? '');
  if (!timestamp || Math.abs(Date.now() / 1000 - Number(timestamp)) > maxAgeSeconds) return false;
  const expected = 'sha256=' + createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex');
  const a = Buffer.from(received);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

beforeAll(async () => {
  await receiver.listen();
  await forbidden.listen();
  t = await startTestServer({ WEBHOOK_RETRY_BASE_MS: '100' });
  admin = await t.adminToken();
  const settings = await t.api('PUT', '/api/settings', { token: admin, body: { outboundAllowList: [`127.0.0.1:${receiver.port}`] } });
  expect(settings.status, settings.text).toBe(200);
  const endpoint = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'things', path: '/api/things', method: 'POST', accessType: 'public', schema: { title: { type: 'string' } } } });
  expect(endpoint.status, endpoint.text).toBe(201);
  const other = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'others', path: '/api/others', method: 'POST', accessType: 'public', schema: { title: { type: 'string' } } } });
  expect(other.status, other.text).toBe(201);
});

afterAll(async () => {
  await t.close();
  await receiver.close();
  await forbidden.close();
});

beforeEach(() => {
  receiver.reset();
  forbidden.reset();
});

async function createHook(body: Record<string, unknown>) {
  const name = unique('hook');
  const res = await t.api('POST', '/api/webhooks', { token: admin, body: { name, url: `${receiver.url}/${name}`, events: ['record.created'], ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}
const removeHook = (id: string) => t.api('DELETE', `/api/webhooks/${id}`, { token: admin });
const deliveriesOf = async (id: string) => (await t.api('GET', `/api/webhooks/${id}/deliveries?limit=100`, { token: admin })).body.data as any[];

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > end) throw new Error(`condition not met in ${ms} ms: ${JSON.stringify(value)}`);
    await sleep(50);
  }
}

describe('webhook definitions', () => {
  it('creates a hook, never returns its secret, and finds it by id or name', async () => {
    const hook = await createHook({ secret: 's3cret-value', headers: { 'X-Team': 'ops' } });
    expect(hook).toMatchObject({ url: `${receiver.url}/${hook.name}`, events: ['record.created'], filter: null, secret: 'set', enabled: true, headers: { 'X-Team': 'ops' }, health: 'unknown' });
    const byName = await t.api('GET', `/api/webhooks/${hook.name}`, { token: admin });
    expect(byName.body.data._id).toBe(hook._id);
    expect(byName.text).not.toContain('s3cret-value');
    const list = await t.api('GET', '/api/webhooks', { token: admin });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain('s3cret-value');
    expect(list.body.data.some((h: any) => h._id === hook._id)).toBe(true);
    const cleared = await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { secret: null } });
    expect(cleared.body.data.secret).toBe('unset');
    await removeHook(hook._id);
    expect((await t.api('GET', `/api/webhooks/${hook._id}`, { token: admin })).status).toBe(404);
  });

  it('takes back the hook a GET showed: its secret (shown as set) and credential headers are kept', async () => {
    const hook = await createHook({ secret: 'kept-secret-1', headers: { Authorization: 'Bearer kept-1' } });
    const read = (await t.api('GET', `/api/webhooks/${hook._id}`, { token: admin })).body.data;
    expect(read).toMatchObject({ secret: 'set', headers: { Authorization: '(secret)' }, health: 'unknown' });
    const back = await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: read });
    expect(back.status, back.text).toBe(200);
    expect(back.body.data).toMatchObject({ enabled: true, secret: 'set', headers: { Authorization: '(secret)' } });
    // The delivery is still signed with the secret and sends the header as they were saved.
    const record = await t.api('POST', '/api/things', { body: { title: 'after a round trip' } });
    expect(record.status, record.text).toBe(201);
    const [request] = await receiver.waitFor(1, { path: `/${hook.name}` });
    expect(verify('kept-secret-1', request!.headers, request!.body)).toBe(true);
    expect(request!.headers.authorization).toBe('Bearer kept-1');
    const created = await t.api('POST', '/api/webhooks', { token: admin, body: { name: unique('hook'), url: `${receiver.url}/x`, events: ['record.created'], secret: 'set' } });
    expect(created.status).toBe(400);
    expect(created.body.details).toEqual([{ field: 'secret', message: 'is the shown form, not a secret' }]);
    expect((await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { ...read, _id: 'ffffffffffffffffffffffff' } })).body.error).toBe('Invalid request body: _id cannot be changed');
    await removeHook(hook._id);
  });

  it('shows credential headers as (secret), sends their values, and keeps them when (secret) comes back', async () => {
    const hook = await createHook({ headers: { Authorization: 'Bearer tok-1', 'X-Api-Key': 'key-1', 'X-Team': 'ops' } });
    const masked = { Authorization: '(secret)', 'X-Api-Key': '(secret)', 'X-Team': 'ops' };
    expect(hook.headers).toEqual(masked);
    const one = await t.api('GET', `/api/webhooks/${hook._id}`, { token: admin });
    const list = await t.api('GET', '/api/webhooks?limit=100', { token: admin });
    expect(one.body.data.headers).toEqual(masked);
    expect(list.body.data.find((h: any) => h._id === hook._id).headers).toEqual(masked);
    expect(one.text + list.text).not.toMatch(/tok-1|key-1/);
    const sent = async () => {
      receiver.reset();
      expect((await t.api('POST', `/api/webhooks/${hook._id}/test`, { token: admin })).status).toBe(200);
      const headers = receiver.received[0]!.headers;
      return { authorization: headers.authorization, key: headers['x-api-key'], team: headers['x-team'] };
    };
    expect(await sent()).toEqual({ authorization: 'Bearer tok-1', key: 'key-1', team: 'ops' });

    // The form as shown, one plain header changed (and a name in another letter case): the credentials stay.
    const saved = await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { headers: { authorization: '(secret)', 'X-Api-Key': '(secret)', 'X-Team': 'platform' } } });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body.data.headers).toEqual({ authorization: '(secret)', 'X-Api-Key': '(secret)', 'X-Team': 'platform' });
    expect(await sent()).toEqual({ authorization: 'Bearer tok-1', key: 'key-1', team: 'platform' });

    // A new value replaces it; a header left out is gone.
    await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { headers: { Authorization: 'Bearer tok-2' } } });
    expect(await sent()).toEqual({ authorization: 'Bearer tok-2', key: undefined, team: undefined });
    await removeHook(hook._id);
  });

  it('refuses (secret) for a credential header with no value to keep, and stores nothing', async () => {
    const name = unique('masked');
    const created = await t.api('POST', '/api/webhooks', { token: admin, body: { name, url: `${receiver.url}/${name}`, events: ['*'], headers: { Authorization: '(secret)' } } });
    expect(created.status).toBe(400);
    expect(created.body.error).toMatch(/^Invalid request body: headers\.Authorization: \(secret\) keeps the value stored for this header, and none is stored/);
    expect(created.body.details).toEqual([{ field: 'headers.Authorization', message: expect.any(String) }]);
    expect((await t.api('GET', `/api/webhooks/${name}`, { token: admin })).status).toBe(404);

    const hook = await createHook({ headers: { 'X-Team': 'ops' } });
    const updated = await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { headers: { 'X-Team': 'ops', 'X-Auth-Token': '(secret)' } } });
    expect(updated.status).toBe(400);
    expect(updated.body.details).toEqual([{ field: 'headers.X-Auth-Token', message: expect.any(String) }]);
    expect((await t.api('GET', `/api/webhooks/${hook._id}`, { token: admin })).body.data.headers).toEqual({ 'X-Team': 'ops' });
    await removeHook(hook._id);
  });

  it.each([
    { name: 'an unknown event', body: { events: ['user.exploded'] }, field: 'events.0' },
    { name: 'no events', body: { events: [] }, field: 'events' },
    { name: 'a hop-by-hop header', body: { headers: { Connection: 'close' } }, field: 'headers.Connection' },
    { name: 'a signature header', body: { headers: { 'X-Webhook-Signature': 'x' } }, field: 'headers.X-Webhook-Signature' },
    { name: 'a filter with two keys', body: { filter: { path: '/api/things', group: 'shop' } }, field: 'filter' },
    { name: 'an ftp URL', body: { url: 'ftp://example.com/' }, field: 'url' },
  ])('refuses $name with a 400 naming the field', async ({ body, field }) => {
    const res = await t.api('POST', '/api/webhooks', { token: admin, body: { name: unique('bad'), url: `${receiver.url}/hook`, events: ['*'], ...body } });
    expect(res.status, res.text).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.details.map((d: any) => d.field)).toContain(field);
  });

  it.each([
    { name: 'a filter with two keys', body: { filter: { path: '/api/things', group: 'shop' } }, error: 'filter must NOT have more than 1 properties' },
    { name: 'an empty filter', body: { filter: {} }, error: 'filter must NOT have fewer than 1 properties' },
    { name: 'a filter path without its slash', body: { filter: { path: 'api/things' } }, error: 'filter.path must match pattern "^/[^?#\\s]*$"' },
    { name: 'a filter of the wrong type', body: { filter: 'api/things' }, error: 'filter must be object,null' },
    { name: 'an empty secret', body: { secret: '' }, error: 'secret must not be empty or blank' },
    { name: 'a secret of the wrong type', body: { secret: 42 }, error: 'secret must be string,null' },
  ])('names the real problem first for $name, and only it', async ({ body, error }) => {
    const res = await t.api('POST', '/api/webhooks', { token: admin, body: { name: unique('bad'), url: `${receiver.url}/hook`, events: ['*'], ...body } });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toBe(`Invalid request body: ${error}`);
    expect(res.body.details).toHaveLength(1);
    const hook = await createHook({});
    const put = await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body });
    expect(put.body.error).toBe(`Invalid request body: ${error}`);
    await removeHook(hook._id);
  });

  it('refuses a second hook with the same name (409)', async () => {
    const hook = await createHook({});
    const again = await t.api('POST', '/api/webhooks', { token: admin, body: { name: hook.name.toUpperCase(), url: `${receiver.url}/x`, events: ['*'] } });
    expect(again.status).toBe(409);
    await removeHook(hook._id);
  });

  it('refuses a name that looks like an id, on create and on update, since :id takes an id or a name', async () => {
    const hook = await createHook({});
    for (const name of ['6b09b089031e919c8cff5629', hook._id.toUpperCase()]) {
      const created = await t.api('POST', '/api/webhooks', { token: admin, body: { name, url: `${receiver.url}/x`, events: ['*'] } });
      expect(created.status).toBe(400);
      expect(created.body).toMatchObject({ error: 'Invalid request body: name must not look like an id (24 hexadecimal characters)', details: [{ field: 'name' }] });
      const renamed = await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { name } });
      expect(renamed.status).toBe(400);
      expect(renamed.body.details).toEqual([{ field: 'name', message: 'must not look like an id (24 hexadecimal characters)' }]);
    }
    expect((await t.api('GET', `/api/webhooks/${hook._id}`, { token: admin })).body.data.name).toBe(hook.name);
    const bundle = await t.api('POST', '/api/project/plan', { token: admin, body: { webhooks: [{ name: '6b09b089031e919c8cff5629', url: `${receiver.url}/x`, events: ['*'] }] } });
    expect(bundle.status).toBe(400);
    expect(JSON.stringify(bundle.body)).toContain('must not look like an id (24 hexadecimal characters)');
    await removeHook(hook._id);
  });

  it.each(['X-Webhook-Foo', 'x-webhook-id', 'X-WEBHOOK-Anything'])('refuses the header %s (X-Webhook-* are the delivery\'s own) with a 400 naming it, on create and update', async (header) => {
    const name = unique('xhook');
    const created = await t.api('POST', '/api/webhooks', { token: admin, body: { name, url: `${receiver.url}/x`, events: ['record.created'], headers: { [header]: 'v' } } });
    expect(created.status).toBe(400);
    expect(created.body).toMatchObject({ error: `Invalid request body: headers.${header}: this header cannot be set on a webhook`, details: [{ field: `headers.${header}`, message: 'hop-by-hop, framing and X-Webhook-* headers cannot be set' }] });
    expect((await t.api('GET', `/api/webhooks/${name}`, { token: admin })).status).toBe(404);
    const hook = await createHook({});
    const updated = await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { headers: { 'X-Team': 'ops', [header]: 'v' } } });
    expect(updated.status).toBe(400);
    expect(updated.body.details).toEqual([{ field: `headers.${header}`, message: 'hop-by-hop, framing and X-Webhook-* headers cannot be set' }]);
    await removeHook(hook._id);
  });

  it('takes headers that only start like X-Webhook (X-Webhooks-Team, X-WebhookTeam)', async () => {
    const hook = await createHook({ headers: { 'X-Webhooks-Team': 'a', 'X-WebhookTeam': 'b' } });
    expect(hook.headers).toEqual({ 'X-Webhooks-Team': 'a', 'X-WebhookTeam': 'b' });
    await removeHook(hook._id);
  });

  it('keeps a header stored before X-Webhook-* were refused: the hook stays editable, and the header can be left out', async () => {
    const hook = await createHook({ headers: { 'X-Team': 'ops' } });
    await t.server.services.store.collection('webhooks').updateOne({ _id: hook._id }, { $set: { headers: { 'X-Team': 'ops', 'X-Webhook-Foo': 'v' } } });
    const disabled = await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { enabled: false } });
    expect(disabled.status, disabled.text).toBe(200);
    const shown = (await t.api('GET', `/api/webhooks/${hook._id}`, { token: admin })).body.data;
    expect((await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: shown })).status).toBe(200);
    const dropped = await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { headers: { 'X-Team': 'ops' } } });
    expect(dropped.body.data.headers).toEqual({ 'X-Team': 'ops' });
    await removeHook(hook._id);
  });

  it('refuses a target the outbound policy blocks on save, with no connection made', async () => {
    const res = await t.api('POST', '/api/webhooks', { token: admin, body: { name: unique('blocked'), url: `${forbidden.url}/`, events: ['*'] } });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('outboundAllowList');
    expect(forbidden.connections).toBe(0);
  });

  it('is for manage_api holders only', async () => {
    expect((await t.api('GET', '/api/webhooks')).status).toBe(401);
  });

  it('follows user.* events (or *) only for someone who may read users: they carry user records', async () => {
    const apiOnly = await createUserWith(t, ['manage_api']);
    const body = (events: string[]) => ({ name: unique('users'), url: `${receiver.url}/users`, events });
    for (const events of [['user.created'], ['*'], ['record.created', 'user.deleted']]) {
      const res = await t.api('POST', '/api/webhooks', { token: apiOnly.token, body: body(events) });
      expect(res.status, events.join()).toBe(403);
      expect(res.body.error).toBe('Forbidden: a hook following user.* events (or *) requires view or manage_users: they carry user records');
    }
    const allowed = await t.api('POST', '/api/webhooks', { token: apiOnly.token, body: body(['record.created']) });
    expect(allowed.status, allowed.text).toBe(201);
    const widen = await t.api('PUT', `/api/webhooks/${allowed.body.data._id}`, { token: apiOnly.token, body: { events: ['record.created', 'user.updated'] } });
    expect(widen.status).toBe(403);
    expect((await t.api('GET', `/api/webhooks/${allowed.body.data._id}`, { token: admin })).body.data.events).toEqual(['record.created']);
    const both = await createUserWith(t, ['manage_api', 'view']);
    expect((await t.api('POST', '/api/webhooks', { token: both.token, body: body(['*']) })).status).toBe(201);
  });
});

describe('deliveries', () => {
  it('posts {event, timestamp, data} with the record flat, and a signature that verifies with the documented recipe', async () => {
    const hook = await createHook({ secret: 'whsec-test-1', headers: { 'X-Team': 'ops' } });
    const created = await t.api('POST', '/api/things', { body: { title: 'first' } });
    expect(created.status, created.text).toBe(201);
    const [request] = await receiver.waitFor(1, { path: `/${hook.name}` });
    expect(request!.method).toBe('POST');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['x-webhook-event']).toBe('record.created');
    expect(request!.headers['x-team']).toBe('ops');
    const payload = JSON.parse(request!.body);
    expect(payload).toEqual({ event: 'record.created', timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/), data: created.body.data });
    expect(verify('whsec-test-1', request!.headers, request!.body)).toBe(true);
    expect(verify('another-secret', request!.headers, request!.body)).toBe(false);
    expect(verify('whsec-test-1', request!.headers, request!.body.replace('first', 'forged'))).toBe(false);
    const [delivery] = await until(() => deliveriesOf(hook._id), (list) => list[0]?.status === 'delivered');
    expect(delivery).toMatchObject({ _id: request!.headers['x-webhook-id'], event: 'record.created', status: 'delivered', attempts: 1, responseCode: 200, error: null, nextAttemptAt: null });
    await removeHook(hook._id);
  });

  it('sends endpoint.called as {path, method, statusCode} and user events without a password hash', async () => {
    const hook = await createHook({ events: ['endpoint.called', 'user.created'] });
    await t.api('POST', '/api/things', { body: { title: 'called' } });
    const user = await t.api('POST', '/api/users', { token: admin, body: { login: unique('u'), password: 'password-123' } });
    expect(user.status, user.text).toBe(201);
    const received = await receiver.waitFor(2, { path: `/${hook.name}` });
    const payloads = received.map((r) => JSON.parse(r.body));
    expect(payloads.find((p) => p.event === 'endpoint.called').data).toEqual({ path: '/api/things', method: 'POST', statusCode: 201 });
    const userEvent = payloads.find((p) => p.event === 'user.created');
    expect(userEvent.data).toMatchObject({ _id: user.body.data._id, login: user.body.data.login });
    expect(JSON.stringify(userEvent)).not.toMatch(/password/i);
    await removeHook(hook._id);
  });

  it('follows one resource when the hook has a path filter', async () => {
    const hook = await createHook({ filter: { path: '/api/others' } });
    await t.api('POST', '/api/things', { body: { title: 'not followed' } });
    await t.api('POST', '/api/others', { body: { title: 'followed' } });
    const [request] = await receiver.waitFor(1, { path: `/${hook.name}` });
    await sleep(300);
    expect(receiver.requestsTo(`/${hook.name}`)).toHaveLength(1);
    expect(JSON.parse(request!.body).data.title).toBe('followed');
    await removeHook(hook._id);
  });

  it('follows calls through the versioned path with a filter on the definition\'s path', async () => {
    const endpoint = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'versioned', path: '/api/versioned', method: 'POST', accessType: 'public', apiVersion: 'v1', schema: { title: { type: 'string' } } } });
    expect(endpoint.status, endpoint.text).toBe(201);
    const hook = await createHook({ events: ['*'], filter: { path: '/api/versioned' } });
    const created = await t.api('POST', '/api/v1/versioned', { body: { title: 'through v1' } });
    expect(created.status, created.text).toBe(201);
    const refused = await t.api('POST', '/api/v1/versioned', { body: { title: 42 } });
    expect(refused.status).toBe(400);
    const received = await receiver.waitFor(3, { path: `/${hook.name}` });
    await sleep(300);
    const payloads = receiver.requestsTo(`/${hook.name}`).map((r) => JSON.parse(r.body));
    expect(payloads.map((p) => p.event).sort()).toEqual(['api.error', 'endpoint.called', 'record.created']);
    expect(received).toHaveLength(3);
    // The data keeps the path the call was made on.
    expect(payloads.find((p) => p.event === 'endpoint.called').data).toEqual({ path: '/api/v1/versioned', method: 'POST', statusCode: 201 });
    expect(payloads.find((p) => p.event === 'api.error').data).toMatchObject({ path: '/api/v1/versioned', statusCode: 400 });
    await removeHook(hook._id);
    await t.api('DELETE', `/api/endpoints/${endpoint.body.data._id}`, { token: admin });
  });

  it('follows the endpoints of one group when the hook has a group filter', async () => {
    const group = await t.api('POST', '/api/endpoints/groups', { token: admin, body: { name: 'Shop' } });
    expect(group.status, group.text).toBe(201);
    const endpoint = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'carts', path: '/api/carts', method: 'POST', accessType: 'public', groupId: group.body.data._id, schema: { title: { type: 'string' } } } });
    expect(endpoint.status, endpoint.text).toBe(201);
    const hook = await createHook({ events: ['record.created', 'endpoint.called'], filter: { group: 'shop' } });
    await t.api('POST', '/api/things', { body: { title: 'outside the group' } });
    await t.api('POST', '/api/carts', { body: { title: 'in the group' } });
    const received = await receiver.waitFor(2, { path: `/${hook.name}` });
    await sleep(300);
    expect(receiver.requestsTo(`/${hook.name}`)).toHaveLength(2);
    expect(received.map((r) => JSON.parse(r.body).event).sort()).toEqual(['endpoint.called', 'record.created']);
    expect(received.every((r) => !r.body.includes('outside the group'))).toBe(true);
    await removeHook(hook._id);
  });

  it('applies a change of events to the next change, and sends definitions as the API shows them', async () => {
    const hook = await createHook({ events: ['record.created'] });
    const put = await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { events: ['endpoint.created', 'endpoint.deleted'] } });
    expect(put.status, put.text).toBe(200);
    await t.api('POST', '/api/things', { body: { title: 'no longer followed' } });
    const created = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'temp', path: '/api/temp', method: 'GET', accessType: 'public', schema: [{ name: 'n', type: 'number' }] } });
    expect(created.status, created.text).toBe(201);
    await t.api('DELETE', `/api/endpoints/${created.body.data._id}`, { token: admin });
    const received = await receiver.waitFor(2, { path: `/${hook.name}` });
    const payloads = received.map((r) => JSON.parse(r.body));
    expect(payloads.map((p) => p.event).sort()).toEqual(['endpoint.created', 'endpoint.deleted']);
    expect(payloads.find((p) => p.event === 'endpoint.created').data).toEqual(created.body.data);
    await removeHook(hook._id);
  });

  it('sends api.error as {path, method, statusCode, error}', async () => {
    const hook = await createHook({ events: ['api.error'] });
    const refused = await t.api('POST', '/api/things', { body: { title: 42 } });
    expect(refused.status).toBe(400);
    const [request] = await receiver.waitFor(1, { path: `/${hook.name}` });
    expect(JSON.parse(request!.body).data).toEqual({ path: '/api/things', method: 'POST', statusCode: 400, error: refused.body.error });
    await removeHook(hook._id);
  });

  it('sends an api.error that follows a hook saved here, though another connection wrote in between', async () => {
    // The outbox's table is loaded and confirmed (a delivery for the first hook), so within a
    // second a call event trusts it unless this instance has seen a newer revision (its own save):
    // a write by another connection since (here a second connection to the same file, in the
    // server the audit log's worker) must not make it forget that save.
    const first = await createHook({ events: ['record.created'] });
    await t.api('POST', '/api/things', { body: { title: 'loads the table' } });
    await receiver.waitFor(1, { path: `/${first.name}` });
    const hook = await createHook({ events: ['api.error'] });
    const other = new DatabaseSync(join(t.dataDir, 'dyn.db'));
    try {
      other.exec('PRAGMA busy_timeout = 5000');
      other.exec('CREATE TABLE IF NOT EXISTS other_connection (n INTEGER)');
      other.exec('INSERT INTO other_connection VALUES (1)');
    } finally {
      other.close();
    }
    const refused = await t.api('POST', '/api/things', { body: { title: 7 } });
    expect(refused.status).toBe(400);
    const [request] = await receiver.waitFor(1, { path: `/${hook.name}` });
    expect(JSON.parse(request!.body)).toMatchObject({ event: 'api.error', data: { path: '/api/things', statusCode: 400 } });
    await removeHook(hook._id);
    await removeHook(first._id);
  });

  it('retries a receiver that is down for the first attempts, with the same X-Webhook-Id, until it takes the event', async () => {
    receiver.answer = (request) => (receiver.requestsTo(request.url).length <= 2 ? { status: 503, body: 'down for maintenance' } : { status: 204 });
    const hook = await createHook({});
    await t.api('POST', '/api/things', { body: { title: 'eventually' } });
    const received = await receiver.waitFor(3, { path: `/${hook.name}` });
    expect(new Set(received.map((r) => r.headers['x-webhook-id'])).size).toBe(1);
    const [delivery] = await until(() => deliveriesOf(hook._id), (list) => list[0]?.status === 'delivered');
    expect(delivery).toMatchObject({ attempts: 3, responseCode: 204, status: 'delivered' });
    // Attempts are audited through the buffered log, flushed within half a second.
    const logged = await until(
      async () => (await t.api('GET', '/api/dashboard/logs?action=webhook_dispatch&limit=100', { token: admin })).body.data.filter((entry: any) => entry.message.includes(delivery._id)),
      (entries) => entries.length >= 3,
    );
    expect(logged).toHaveLength(3);
    await removeHook(hook._id);
  });

  it('shows a hook that keeps failing as failing, on the hook and on the dashboard', async () => {
    receiver.answer = () => ({ status: 500, body: 'x'.repeat(100_000) });
    const hook = await createHook({});
    await t.api('POST', '/api/things', { body: { title: 'never taken' } });
    const failing = await until(async () => (await t.api('GET', `/api/webhooks/${hook._id}`, { token: admin })).body.data, (h) => h.health === 'failing');
    expect(failing.lastStatus).toBe('failed');
    expect(failing.lastError).toContain('answered 500');
    const [delivery] = await deliveriesOf(hook._id);
    expect(delivery.status).toBe('pending');
    expect(delivery.error.length).toBeLessThan(1100);
    expect(Date.parse(delivery.nextAttemptAt)).toBeGreaterThan(Date.now() - 1000);
    const stats = await t.api('GET', '/api/dashboard/stats', { token: admin });
    expect(stats.body.data.automationHealth.failingWebhooks).toBeGreaterThanOrEqual(1);
    await removeHook(hook._id);
  });

  it('sends webhook.test now and answers with the delivery; redeliver sends it again under the same id', async () => {
    const hook = await createHook({ enabled: false });
    const tested = await t.api('POST', `/api/webhooks/${hook.name}/test`, { token: admin });
    expect(tested.status, tested.text).toBe(200);
    expect(tested.body.data).toMatchObject({ event: 'webhook.test', status: 'delivered', attempts: 1, responseCode: 200 });
    expect(JSON.parse(receiver.requestsTo(`/${hook.name}`)[0]!.body)).toMatchObject({ event: 'webhook.test', data: { name: hook.name } });
    const again = await t.api('POST', `/api/webhooks/${hook._id}/deliveries/${tested.body.data._id}/redeliver`, { token: admin });
    expect(again.status).toBe(202);
    const received = await receiver.waitFor(2, { path: `/${hook.name}` });
    expect(received[1]!.headers['x-webhook-id']).toBe(tested.body.data._id);
    await removeHook(hook._id);
  });

  it('sends nothing for a disabled hook', async () => {
    const hook = await createHook({ enabled: false });
    await t.api('POST', '/api/things', { body: { title: 'quiet' } });
    await sleep(700);
    expect(receiver.requestsTo(`/${hook.name}`)).toHaveLength(0);
    expect(await deliveriesOf(hook._id)).toHaveLength(0);
    await removeHook(hook._id);
  });

  it('holds the queued deliveries of a disabled hook, unattempted and with no next attempt, and sends them as soon as it is enabled', async () => {
    const hook = await createHook({});
    await t.api('POST', '/api/things', { body: { title: 'queued' } });
    const [first] = await receiver.waitFor(1, { path: `/${hook.name}` });
    const [delivered] = await until(() => deliveriesOf(hook._id), (list) => list[0]?.status === 'delivered');
    expect((await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { enabled: false } })).status).toBe(200);
    // Queued again while the hook is disabled: held, not sent.
    expect((await t.api('POST', `/api/webhooks/${hook._id}/deliveries/${delivered._id}/redeliver`, { token: admin })).status).toBe(202);
    await sleep(800);
    expect(receiver.requestsTo(`/${hook.name}`)).toHaveLength(1);
    expect((await deliveriesOf(hook._id))[0]).toMatchObject({ status: 'pending', attempts: 0, nextAttemptAt: null });

    const enabledAt = Date.now();
    expect((await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { enabled: true } })).status).toBe(200);
    const [, again] = await receiver.waitFor(2, { path: `/${hook.name}`, ms: 3000 });
    expect(Date.now() - enabledAt).toBeLessThan(1500);
    expect(again!.headers['x-webhook-id']).toBe(first!.headers['x-webhook-id']);
    await until(() => deliveriesOf(hook._id), (list) => list[0]?.status === 'delivered');
    await removeHook(hook._id);
  });

  it('fails a delivery whose target the policy refuses at send time, with no connection made', async () => {
    // Allowed on save, then taken off the allow list: what a DNS change would do to a name.
    await t.api('PUT', '/api/settings', { token: admin, body: { outboundAllowList: [`127.0.0.1:${receiver.port}`, `127.0.0.1:${forbidden.port}`] } });
    const hook = await createHook({ url: `${forbidden.url}/hook` });
    await t.api('PUT', '/api/settings', { token: admin, body: { outboundAllowList: [`127.0.0.1:${receiver.port}`] } });
    await t.api('POST', '/api/things', { body: { title: 'refused' } });
    const [delivery] = await until(() => deliveriesOf(hook._id), (list) => (list[0]?.attempts ?? 0) >= 1);
    expect(delivery.error).toContain('refused');
    expect(forbidden.connections).toBe(0);
    await removeHook(hook._id);
  });

  it('does not follow a redirect, not even to a refused target, and records its status and where it pointed (no query)', async () => {
    receiver.answer = () => ({ status: 302, headers: { location: `${forbidden.url}/landed?token=leaked-1` } });
    const hook = await createHook({});
    await t.api('POST', '/api/things', { body: { title: 'redirected' } });
    const [delivery] = await until(() => deliveriesOf(hook._id), (list) => (list[0]?.attempts ?? 0) >= 1);
    expect(delivery).toMatchObject({ status: 'pending', responseCode: 302, error: `Redirects are not followed (302 to ${forbidden.url}/landed)` });
    expect(forbidden.connections).toBe(0);
    const shown = await t.api('GET', `/api/webhooks/${hook._id}`, { token: admin });
    expect(shown.body.data.lastError).toBe(`Redirects are not followed (302 to ${forbidden.url}/landed)`);
    await removeHook(hook._id);
  });

  it('says "elsewhere" for a redirect whose location is not an http(s) URL', async () => {
    receiver.answer = () => ({ status: 301, headers: { location: 'mailto:ops@example.com?subject=secret' } });
    const hook = await createHook({});
    await t.api('POST', '/api/things', { body: { title: 'redirected elsewhere' } });
    const [delivery] = await until(() => deliveriesOf(hook._id), (list) => (list[0]?.attempts ?? 0) >= 1);
    expect(delivery).toMatchObject({ responseCode: 301, error: 'Redirects are not followed (301 to elsewhere)' });
    await removeHook(hook._id);
  });

  it('keeps the API fast while a receiver hangs', async () => {
    receiver.answer = () => 'hang';
    const hook = await createHook({});
    for (let i = 0; i < 10; i++) {
      const started = performance.now();
      const res = await t.api('POST', '/api/things', { body: { title: `slow ${i}` } });
      expect(res.status).toBe(201);
      expect(performance.now() - started).toBeLessThan(1000);
    }
    await receiver.waitFor(3, { path: `/${hook.name}` });
    const started = performance.now();
    const health = await t.api('GET', '/api/health');
    expect(health.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(1000);
    // At most 3 deliveries of one hook are under way at once.
    await sleep(500);
    expect(receiver.requestsTo(`/${hook.name}`).length).toBeLessThanOrEqual(3);
    await removeHook(hook._id);
  });
});

describe('the deliveries list', () => {
  it('is paged, and refuses search (400 naming it) rather than ignoring it', async () => {
    const hook = await createHook({ enabled: false });
    await t.api('POST', `/api/webhooks/${hook._id}/test`, { token: admin });
    await t.api('POST', `/api/webhooks/${hook._id}/test`, { token: admin });
    const page = await t.api('GET', `/api/webhooks/${hook._id}/deliveries?page=2&limit=1`, { token: admin });
    expect(page.body.meta).toEqual({ page: 2, limit: 1, total: 2 });
    const searched = await t.api('GET', `/api/webhooks/${hook._id}/deliveries?search=failed`, { token: admin });
    expect(searched.status).toBe(400);
    expect(searched.body).toMatchObject({ error: 'Unknown query parameter "search"', details: [{ field: 'search', message: 'is not an allowed query parameter' }] });
    await removeHook(hook._id);
  });
});

describe('shutdown', () => {
  it('cancels an attempt under way without counting it, and the next start sends the delivery', async () => {
    const own = await new WebhookReceiver().listen();
    own.answer = () => 'hang';
    const first = await startTestServer({ WEBHOOK_RETRY_BASE_MS: '100' });
    try {
      const token = await first.adminToken();
      await first.api('PUT', '/api/settings', { token, body: { outboundAllowList: [`127.0.0.1:${own.port}`] } });
      const hook = await first.api('POST', '/api/webhooks', { token, body: { name: 'slow-sink', url: `${own.url}/in`, events: ['user.created'] } });
      expect(hook.status, hook.text).toBe(201);
      expect((await first.api('POST', '/api/users', { token, body: { login: 'late-user', password: 'password-123' } })).status).toBe(201);
      await own.waitFor(1);
      const started = performance.now();
      await first.server.close();
      expect(performance.now() - started).toBeLessThan(5000);

      own.answer = () => ({ status: 200 });
      const second = await startTestServer({ WEBHOOK_RETRY_BASE_MS: '100' }, first.dataDir);
      try {
        const again = await own.waitFor(2);
        expect(again[1]!.headers['x-webhook-id']).toBe(again[0]!.headers['x-webhook-id']);
        const token2 = await second.adminToken();
        const [delivery] = await until(
          async () => (await second.api('GET', '/api/webhooks/slow-sink/deliveries', { token: token2 })).body.data as any[],
          (list) => list[0]?.status === 'delivered',
        );
        expect(delivery.attempts).toBe(1);
      } finally {
        await second.close();
      }
    } finally {
      await own.close();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });
});

describe('a delivery out of attempts', () => {
  it('is failed after the 8th attempt, stays listed, and can be redelivered', async () => {
    const own = await new WebhookReceiver().listen();
    own.answer = () => ({ status: 500 });
    // A 10 ms base: the 8 attempts take about 11 s.
    const fast = await startTestServer({ WEBHOOK_RETRY_BASE_MS: '10' });
    try {
      const token = await fast.adminToken();
      await fast.api('PUT', '/api/settings', { token, body: { outboundAllowList: [`127.0.0.1:${own.port}`] } });
      expect((await fast.api('POST', '/api/webhooks', { token, body: { name: 'dead-end', url: `${own.url}/in`, events: ['user.created'] } })).status).toBe(201);
      expect((await fast.api('POST', '/api/users', { token, body: { login: 'retried-user', password: 'password-123' } })).status).toBe(201);
      const [failed] = await until(
        async () => (await fast.api('GET', '/api/webhooks/dead-end/deliveries', { token })).body.data as any[],
        (list) => list[0]?.status === 'failed',
        32_000,
      );
      expect(failed).toMatchObject({ attempts: 8, responseCode: 500, nextAttemptAt: null });
      expect(own.received).toHaveLength(8);
      const hook = (await fast.api('GET', '/api/webhooks/dead-end', { token })).body.data;
      expect(hook).toMatchObject({ health: 'failing', consecutiveFailures: 8 });

      own.answer = () => ({ status: 200 });
      const again = await fast.api('POST', `/api/webhooks/dead-end/deliveries/${failed._id}/redeliver`, { token });
      expect(again.status).toBe(202);
      expect(again.body.data).toMatchObject({ status: 'pending', attempts: 0 });
      const [delivered] = await until(
        async () => (await fast.api('GET', '/api/webhooks/dead-end/deliveries', { token })).body.data as any[],
        (list) => list[0]?.status === 'delivered',
      );
      expect(delivered.attempts).toBe(1);
      expect((await fast.api('GET', '/api/webhooks/dead-end', { token })).body.data.health).toBe('ok');
    } finally {
      await fast.close();
      await own.close();
    }
  }, 50_000);
});

describe('a retry waiting when its hook is disabled', () => {
  it('shows no next attempt as soon as the hook is disabled, and is sent at once when it is enabled', async () => {
    const own = await new WebhookReceiver().listen();
    own.answer = () => ({ status: 500 });
    // The default retry base: the first retry is a minute away.
    const slow = await startTestServer();
    try {
      const token = await slow.adminToken();
      await slow.api('PUT', '/api/settings', { token, body: { outboundAllowList: [`127.0.0.1:${own.port}`] } });
      expect((await slow.api('POST', '/api/webhooks', { token, body: { name: 'paused', url: `${own.url}/in`, events: ['user.created'] } })).status).toBe(201);
      expect((await slow.api('POST', '/api/users', { token, body: { login: 'paused-user', password: 'password-123' } })).status).toBe(201);
      const deliveries = async () => (await slow.api('GET', '/api/webhooks/paused/deliveries', { token })).body.data as any[];
      const [waiting] = await until(deliveries, (list) => list[0]?.attempts === 1);
      expect(waiting).toMatchObject({ status: 'pending', responseCode: 500 });
      expect(new Date(waiting.nextAttemptAt).getTime()).toBeGreaterThan(Date.now() + 30_000);

      expect((await slow.api('PUT', '/api/webhooks/paused', { token, body: { enabled: false } })).status).toBe(200);
      expect((await deliveries())[0]).toMatchObject({ _id: waiting._id, status: 'pending', attempts: 1, nextAttemptAt: null });

      own.answer = () => ({ status: 200 });
      const enabledAt = Date.now();
      expect((await slow.api('PUT', '/api/webhooks/paused', { token, body: { enabled: true } })).status).toBe(200);
      const [, again] = await own.waitFor(2, { ms: 3000 });
      expect(Date.now() - enabledAt).toBeLessThan(1500);
      expect(again!.headers['x-webhook-id']).toBe(waiting._id);
      expect((await until(deliveries, (list) => list[0]?.status === 'delivered'))[0]).toMatchObject({ attempts: 2, nextAttemptAt: null });
    } finally {
      await slow.close();
      await own.close();
    }
  });
});
