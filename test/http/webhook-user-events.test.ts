import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

// user.* events carry user records, which manage_api alone may not read (README, Webhooks). A
// manage_api-only caller must not reach them through someone else's hook: not by repointing it,
// not by redelivering one of its deliveries, not by reading its deliveries. Both receivers are on
// the allow list, so a 403 below is the permission, never the outbound policy. Retries wait the
// default 60 s, so a delivery whose first attempt failed stays pending for the whole file.
let t: TestServer;
let admin: string;
const receiver = new WebhookReceiver();
/** The attacker's server. */
const exfil = new WebhookReceiver();
let apiOnly: { token: string };
let reader: { token: string };

let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}${(seq++).toString(36)}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const FOLLOWING = 'Forbidden: a hook following user.* events (or *) requires view or manage_users: they carry user records';
const QUEUED = 'Forbidden: this hook has user.* deliveries queued, which carry user records: changing it requires view or manage_users';
const REDELIVER = 'Forbidden: redelivering a user.* event requires view or manage_users: it carries a user record';

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > end) throw new Error(`condition not met in ${ms} ms: ${JSON.stringify(value)}`);
    await sleep(50);
  }
}

async function createHook(events: string[], path = 'ok'): Promise<any> {
  const name = unique('hook');
  const res = await t.api('POST', '/api/webhooks', { token: admin, body: { name, url: `${receiver.url}/${path}/${name}`, events } });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}
const hookOf = async (id: string) => (await t.api('GET', `/api/webhooks/${id}`, { token: admin })).body.data;
const deliveriesOf = async (id: string, token = admin) => (await t.api('GET', `/api/webhooks/${id}/deliveries?limit=100`, { token })).body.data as any[];

/** Creates a user (as admin) and returns it: a user.created delivery for every hook that follows it. */
async function createUser(): Promise<any> {
  const login = unique('person');
  const res = await t.api('POST', '/api/users', { token: admin, body: { login, email: `${login}@example.com`, password: 'password-123' } });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

beforeAll(async () => {
  await receiver.listen();
  await exfil.listen();
  t = await startTestServer();
  admin = await t.adminToken();
  const settings = await t.api('PUT', '/api/settings', { token: admin, body: { outboundAllowList: [`127.0.0.1:${receiver.port}`, `127.0.0.1:${exfil.port}`] } });
  expect(settings.status, settings.text).toBe(200);
  apiOnly = await createUserWith(t, ['manage_api']);
  reader = await createUserWith(t, ['manage_api', 'view']);
  // Paths under /fail/ fail, so their deliveries stay pending (the first retry is a minute away).
  receiver.answer = (request) => (request.url.startsWith('/fail/') ? { status: 500 } : { status: 200 });
});

afterAll(async () => {
  await t.close();
  await receiver.close();
  await exfil.close();
});

beforeEach(() => {
  exfil.reset();
});

describe('a hook that follows user.* events (or *)', () => {
  const changes: Array<{ name: string; method: string; body?: Record<string, unknown> }> = [
    { name: 'narrowing its events and repointing it (the reported hole)', method: 'PUT', body: { events: ['record.deleted'], url: 'EXFIL' } },
    { name: 'repointing it', method: 'PUT', body: { url: 'EXFIL' } },
    { name: 'narrowing its events', method: 'PUT', body: { events: ['record.deleted'] } },
    { name: 'disabling it', method: 'PUT', body: { enabled: false } },
    { name: 'renaming it', method: 'PUT', body: { name: 'renamed-by-api-only' } },
    { name: 'changing its headers', method: 'PUT', body: { headers: { 'X-Team': 'api' } } },
    { name: 'an invalid change (403 before 400)', method: 'PUT', body: { events: ['user.exploded'] } },
    { name: 'deleting it', method: 'DELETE' },
  ];

  for (const events of [['*'], ['record.created', 'user.deleted']]) {
    for (const change of changes) {
      it(`refuses ${change.name} to manage_api alone (events ${events.join()}), and changes nothing`, async () => {
        const hook = await createHook(events);
        const body = change.body && { ...change.body, ...(change.body.url ? { url: `${exfil.url}/exfil` } : {}) };
        const res = await t.api(change.method, `/api/webhooks/${hook.name}`, { token: apiOnly.token, ...(body ? { body } : {}) });
        expect(res.status, res.text).toBe(403);
        expect(res.body.error).toBe(FOLLOWING);
        expect(await hookOf(hook._id)).toEqual(hook);
      });
    }
  }

  it('is changed and deleted by a caller who may also read users', async () => {
    const hook = await createHook(['*']);
    const res = await t.api('PUT', `/api/webhooks/${hook.name}`, { token: reader.token, body: { events: ['record.deleted'], enabled: false } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ events: ['record.deleted'], enabled: false });
    expect((await t.api('DELETE', `/api/webhooks/${hook._id}`, { token: reader.token })).status).toBe(200);
  });

  it('stays open to manage_api alone when it follows no user events and has none queued', async () => {
    const hook = await createHook(['record.created']);
    const res = await t.api('PUT', `/api/webhooks/${hook.name}`, { token: apiOnly.token, body: { url: `${exfil.url}/records` } });
    expect(res.status, res.text).toBe(200);
    expect((await t.api('DELETE', `/api/webhooks/${hook._id}`, { token: apiOnly.token })).status).toBe(200);
  });
});

describe('a delivered user.* event', () => {
  it('cannot be read through its hook by manage_api alone: not repointed, not redelivered (the reported repro)', async () => {
    const wall = await createHook(['*']);
    const user = await createUser();
    const list = await until(() => deliveriesOf(wall._id), (items) => items.some((d) => d.event === 'user.created' && d.status === 'delivered'));
    const created = list.find((d) => d.event === 'user.created')!;

    const repoint = await t.api('PUT', `/api/webhooks/${wall.name}`, { token: apiOnly.token, body: { events: ['record.deleted'], url: `${exfil.url}/exfil` } });
    expect(repoint.status).toBe(403);
    const redeliver = await t.api('POST', `/api/webhooks/${wall.name}/deliveries/${created._id}/redeliver`, { token: apiOnly.token });
    expect(redeliver.status).toBe(403);
    expect(redeliver.body.error).toBe(REDELIVER);
    await sleep(800);
    expect(exfil.connections).toBe(0);
    expect(receiver.requestsTo(`/ok/${wall.name}`).filter((r) => r.headers['x-webhook-id'] === created._id)).toHaveLength(1);
    expect((await deliveriesOf(wall._id)).find((d) => d._id === created._id)).toEqual(created);
    expect(JSON.stringify(await deliveriesOf(wall._id))).not.toContain(user.login);
  });

  it('is listed to manage_api alone without its payload: no delivery shows a body', async () => {
    const wall = await createHook(['user.created']);
    const user = await createUser();
    const list = await until(() => deliveriesOf(wall._id, apiOnly.token), (items) => items[0]?.status === 'delivered');
    expect(list).toHaveLength(1);
    expect(Object.keys(list[0]).sort()).toEqual(['_id', 'attempts', 'createdAt', 'durationMs', 'error', 'event', 'nextAttemptAt', 'responseCode', 'status', 'updatedAt', 'webhookId']);
    expect(list[0].event).toBe('user.created');
    expect(JSON.stringify(list)).not.toContain(user.login);
    expect(JSON.stringify(list)).not.toContain(user.email);
  });

  it('is redelivered by a caller who may read users; other events of the hook by manage_api alone', async () => {
    const wall = await createHook(['*']);
    await createUser();
    const endpoint = await t.api('POST', '/api/endpoints', { token: admin, body: { name: unique('things'), path: `/api/${unique('things')}`, method: 'POST', accessType: 'public', schema: { title: { type: 'string' } } } });
    expect(endpoint.status, endpoint.text).toBe(201);
    const list = await until(() => deliveriesOf(wall._id), (items) => items.length === 2 && items.every((d) => d.status === 'delivered'));
    const userDelivery = list.find((d) => d.event === 'user.created')!;
    const endpointDelivery = list.find((d) => d.event === 'endpoint.created')!;

    expect((await t.api('POST', `/api/webhooks/${wall._id}/deliveries/${endpointDelivery._id}/redeliver`, { token: apiOnly.token })).status).toBe(202);
    const again = await t.api('POST', `/api/webhooks/${wall._id}/deliveries/${userDelivery._id}/redeliver`, { token: reader.token });
    expect(again.status, again.text).toBe(202);
    const received = await until(async () => receiver.requestsTo(`/ok/${wall.name}`), (requests) => requests.length === 4);
    expect(received.filter((r) => r.headers['x-webhook-id'] === userDelivery._id)).toHaveLength(2);
    expect(received.filter((r) => r.headers['x-webhook-id'] === endpointDelivery._id)).toHaveLength(2);
  });
});

describe('a queued user.* delivery', () => {
  it('never reaches a URL set by manage_api alone, also once the hook no longer follows user events', async () => {
    const hook = await createHook(['*'], 'fail');
    await createUser();
    const [pending] = await until(() => deliveriesOf(hook._id), (list) => list[0]?.attempts === 1);
    expect(pending).toMatchObject({ event: 'user.created', status: 'pending' });

    // Following *: refused as above.
    const first = await t.api('PUT', `/api/webhooks/${hook._id}`, { token: apiOnly.token, body: { url: `${exfil.url}/exfil` } });
    expect(first.status).toBe(403);
    expect(first.body.error).toBe(FOLLOWING);

    // Narrowed by an administrator, the user.created delivery is still queued for whatever URL the
    // hook will have: changing the hook still takes the permission to read users.
    expect((await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { events: ['record.created'] } })).status).toBe(200);
    const narrowed = await hookOf(hook._id);
    for (const body of [{ url: `${exfil.url}/exfil` }, { enabled: false }]) {
      const res = await t.api('PUT', `/api/webhooks/${hook._id}`, { token: apiOnly.token, body });
      expect(res.status, JSON.stringify(body)).toBe(403);
      expect(res.body.error).toBe(QUEUED);
    }
    const removed = await t.api('DELETE', `/api/webhooks/${hook._id}`, { token: apiOnly.token });
    expect(removed.status).toBe(403);
    expect(removed.body.error).toBe(QUEUED);
    expect(await hookOf(hook._id)).toEqual(narrowed);
    expect((await deliveriesOf(hook._id))[0]).toMatchObject({ _id: pending._id, status: 'pending', attempts: 1 });
    expect(exfil.connections).toBe(0);

    // Once an administrator sent it (or let it fail), the hook is open to manage_api again.
    expect((await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { url: `${receiver.url}/ok/${hook.name}`, enabled: false } })).status).toBe(200);
    expect((await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { enabled: true } })).status).toBe(200);
    await until(() => deliveriesOf(hook._id), (list) => list[0]?.status === 'delivered');
    expect((await t.api('PUT', `/api/webhooks/${hook._id}`, { token: apiOnly.token, body: { url: `${exfil.url}/records` } })).status).toBe(200);
  });
});

describe('an administrator widening a hook while a manage_api caller saves it', () => {
  // A save checked before the widening landed and written after it would undo it unseen, and
  // send a user.* delivery queued in between to the URL it sets.
  it('the widening is never undone by a save checked before it: that save is a 409 (or a 403 once it sees it)', async () => {
    // A host name to look up widens the moment between the save's checks and its write.
    const allowed = await t.api('PUT', '/api/settings', { token: admin, body: { outboundAllowList: [`127.0.0.1:${receiver.port}`, `127.0.0.1:${exfil.port}`, `localhost:${exfil.port}`] } });
    expect(allowed.status, allowed.text).toBe(200);
    const seen = new Set<number>();
    for (let round = 0; round < 30; round++) {
      const hook = await createHook(['record.created']);
      const [repoint, widen] = await Promise.all([
        t.api('PUT', `/api/webhooks/${hook._id}`, { token: apiOnly.token, body: { url: `${exfil.url.replace("127.0.0.1", "localhost")}/race/${round}` } }),
        sleep(round % 10).then(() => t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { events: ['user.created'] } })),
      ]);
      expect(widen.status, widen.text).toBe(200);
      seen.add(repoint.status);
      expect((await hookOf(hook._id)).events, JSON.stringify(repoint.body)).toEqual(['user.created']);
      if (repoint.status === 409) expect(repoint.body).toEqual({ success: false, error: 'The hook changed while this save was checked; read it again and retry' });
      else if (repoint.status === 403) expect(repoint.body.error).toBe(FOLLOWING);
      else expect(repoint.status).toBe(200);
    }
    expect(seen.size).toBeGreaterThan(0);
    expect(exfil.connections).toBe(0);
  });
});
