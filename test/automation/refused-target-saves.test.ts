import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

// A saved target the outbound policy refuses later (the administrator narrowed outboundAllowList):
// the hook or job must still be disabled and edited, since its deliveries and runs keep failing
// meanwhile. The policy is checked on save only when the URL changes or the hook or job is
// enabled; sends check it again themselves. Targets are real listeners on 127.0.0.1.
let t: TestServer;
let admin: string;
const receiver = new WebhookReceiver();
const other = new WebhookReceiver();

let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}${(seq++).toString(36)}`;
const allow = async (...receivers: WebhookReceiver[]) => {
  const res = await t.api('PUT', '/api/settings', { token: admin, body: { outboundAllowList: receivers.map((r) => `127.0.0.1:${r.port}`) } });
  expect(res.status, res.text).toBe(200);
};
const refusedUrl = expect.stringMatching(/is refused: 127\.0\.0\.1 is a loopback address/);

beforeAll(async () => {
  await receiver.listen();
  await other.listen();
  t = await startTestServer({ WEBHOOK_RETRY_BASE_MS: '100' });
  admin = await t.adminToken();
});

afterAll(async () => {
  await t.close();
  await receiver.close();
  await other.close();
});

beforeEach(async () => {
  receiver.reset();
  other.reset();
  await allow(receiver);
});

describe('a webhook whose URL the policy refuses since it was saved', () => {
  async function refusedHook() {
    const created = await t.api('POST', '/api/webhooks', { token: admin, body: { name: unique('sec'), url: `${receiver.url}/hook`, events: ['record.created'], headers: { 'X-Team': 'ops' } } });
    expect(created.status, created.text).toBe(201);
    await allow(other);
    return created.body.data;
  }

  it('can be disabled, edited and saved back as shown, while its test deliveries fail unsent', async () => {
    const hook = await refusedHook();
    const tested = await t.api('POST', `/api/webhooks/${hook._id}/test`, { token: admin });
    expect(tested.body.data).toMatchObject({ status: 'pending', attempts: 1, error: refusedUrl });

    const disabled = await t.api('PUT', `/api/webhooks/${hook.name}`, { token: admin, body: { enabled: false } });
    expect(disabled.status, disabled.text).toBe(200);
    expect(disabled.body.data.enabled).toBe(false);
    const edited = await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { events: ['record.created', 'record.deleted'], headers: { 'X-Team': 'billing' } } });
    expect(edited.status, edited.text).toBe(200);
    const shown = (await t.api('GET', `/api/webhooks/${hook._id}`, { token: admin })).body.data;
    const savedBack = await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { ...shown, name: `${hook.name}-renamed` } });
    expect(savedBack.status, savedBack.text).toBe(200);
    expect(receiver.connections).toBe(0);
    // Its test delivery is retried even while the hook is disabled: gone with the hook.
    expect((await t.api('DELETE', `/api/webhooks/${hook._id}`, { token: admin })).status).toBe(200);
  });

  it('is refused when enabled again or given another refused URL, and enabled once the URL is allowed again', async () => {
    const hook = await refusedHook();
    expect((await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { enabled: false } })).status).toBe(200);
    const enabled = await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { enabled: true } });
    expect(enabled.status).toBe(400);
    expect(enabled.body.details).toEqual([{ field: 'url', message: refusedUrl }]);
    const moved = await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { url: `${receiver.url}/elsewhere` } });
    expect(moved.status).toBe(400);
    expect(moved.body.details).toEqual([{ field: 'url', message: refusedUrl }]);
    // A new hook to the same URL is new: checked, though disabled.
    const created = await t.api('POST', '/api/webhooks', { token: admin, body: { name: unique('new'), url: `${receiver.url}/hook`, events: ['record.created'], enabled: false } });
    expect(created.status).toBe(400);
    expect((await t.api('GET', `/api/webhooks/${hook._id}`, { token: admin })).body.data).toMatchObject({ enabled: false, url: `${receiver.url}/hook` });

    await allow(receiver);
    expect((await t.api('PUT', `/api/webhooks/${hook._id}`, { token: admin, body: { enabled: true } })).status).toBe(200);
    expect(receiver.connections).toBe(0);
    expect((await t.api('DELETE', `/api/webhooks/${hook._id}`, { token: admin })).status).toBe(200);
  });
});

describe('a cron http job whose URL the policy refuses since it was saved', () => {
  async function refusedJob() {
    const action = { type: 'http', url: `${receiver.url}/job`, method: 'GET' };
    const created = await t.api('POST', '/api/cron', { token: admin, body: { name: unique('job'), schedule: '0 3 * * *', action } });
    expect(created.status, created.text).toBe(201);
    await allow(other);
    return created.body.data;
  }

  it('can be disabled and edited, its action too while the URL stays, while its runs fail unsent', async () => {
    const job = await refusedJob();
    const run = await t.api('POST', `/api/cron/${job._id}/run`, { token: admin });
    expect(run.body.data).toMatchObject({ status: 'failed', error: refusedUrl });

    for (const body of [{ enabled: false }, { description: 'd' }, { schedule: '0 4 * * *' }, { action: { ...job.action, method: 'POST', body: { a: 1 } } }]) {
      const res = await t.api('PUT', `/api/cron/${job.name}`, { token: admin, body });
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(200);
    }
    const shown = (await t.api('GET', `/api/cron/${job._id}`, { token: admin })).body.data;
    expect(shown).toMatchObject({ enabled: false, description: 'd', schedule: '0 4 * * *', action: { method: 'POST' } });
    expect((await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: shown })).status).toBe(200);
    expect(receiver.connections).toBe(0);
  });

  it('is refused when enabled again or given another refused URL, naming action.url', async () => {
    const job = await refusedJob();
    expect((await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { enabled: false } })).status).toBe(200);
    for (const body of [{ enabled: true }, { action: { ...job.action, url: `${receiver.url}/elsewhere` } }]) {
      const res = await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.details).toEqual([{ field: 'action.url', message: refusedUrl }]);
    }
    await allow(receiver);
    const enabled = await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { enabled: true } });
    expect(enabled.status, enabled.text).toBe(200);
    expect(receiver.connections).toBe(0);
  });

  it('still has its other action checks on a change: a framing header is refused', async () => {
    const job = await refusedJob();
    const res = await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { action: { ...job.action, headers: { Host: 'evil.example' } } } });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ field: 'action.headers.Host', message: expect.stringMatching(/^hop-by-hop and framing headers cannot be set/) }]);
  });
});

describe('outboundAllowList ports', () => {
  it.each(['127.0.0.1:0', 'http://127.0.0.1:0', 'hooks.internal:00'])('refuses %s: a port is 1-65535', async (entry) => {
    const res = await t.api('PUT', '/api/settings', { token: admin, body: { outboundAllowList: [`127.0.0.1:${receiver.port}`, entry] } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(`Invalid settings: outboundAllowList has an invalid outbound allow-list entry "${entry}" (a port is 1-65535)`);
    expect(res.body.details).toEqual([{ field: 'outboundAllowList', message: `invalid outbound allow-list entry "${entry}" (a port is 1-65535)` }]);
    expect((await t.api('GET', '/api/settings', { token: admin })).body.data.outboundAllowList).toEqual([`127.0.0.1:${receiver.port}`]);
  });

  it('refuses 65536 and takes 1 and 65535', async () => {
    expect((await t.api('PUT', '/api/settings', { token: admin, body: { outboundAllowList: ['127.0.0.1:65536'] } })).status).toBe(400);
    const ok = await t.api('PUT', '/api/settings', { token: admin, body: { outboundAllowList: ['127.0.0.1:1', 'https://hooks.internal:65535'] } });
    expect(ok.status, ok.text).toBe(200);
  });
});
