import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupServerProcesses, JWT_REFRESH_SECRET, JWT_SECRET, makeDataDir, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

// Webhook delivery across processes: a delivery survives kill -9 of the instance that queued it,
// and two instances on one store send each delivery once. Retries run on a 100 ms base.
const env = { JWT_SECRET, JWT_REFRESH_SECRET, WEBHOOK_RETRY_BASE_MS: '100' };
const receivers: WebhookReceiver[] = [];

afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

afterAll(async () => {
  await cleanupServerProcesses();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function setUp(server: ServerProcess, port: number): Promise<string> {
  const admin = (await server.login()).accessToken;
  const settings = await server.api('PUT', '/api/settings', { token: admin, body: { outboundAllowList: [`127.0.0.1:${port}`] } });
  expect(settings.status, settings.text).toBe(200);
  const endpoint = await server.api('POST', '/api/endpoints', { token: admin, body: { name: 'things', path: '/api/things', method: 'POST', accessType: 'public', schema: { n: { type: 'number' } } } });
  expect(endpoint.status, endpoint.text).toBe(201);
  const hook = await server.api('POST', '/api/webhooks', { token: admin, body: { name: 'audit-sink', url: `http://127.0.0.1:${port}/in`, events: ['record.created'] } });
  expect(hook.status, hook.text).toBe(201);
  return admin;
}

describe('webhook delivery across processes', () => {
  it('delivers an event acknowledged before a kill -9, once the receiver is back and the server restarted', async () => {
    // A port with nobody listening: the first attempts are refused.
    const probe = await new WebhookReceiver().listen();
    const port = probe.port;
    await probe.close();
    const dataDir = makeDataDir();
    const first = await startServerProcess({ dataDir, env });
    await setUp(first, port);
    const created = await first.api('POST', '/api/things', { body: { n: 42 } });
    expect(created.status, created.text).toBe(201);
    await sleep(500);
    await first.kill9();

    const receiver = await new WebhookReceiver().listen(port);
    receivers.push(receiver);
    const second = await startServerProcess({ dataDir, env });
    const [request] = await receiver.waitFor(1, { ms: 20_000 });
    expect(JSON.parse(request!.body)).toMatchObject({ event: 'record.created', data: { _id: created.body.data._id, n: 42 } });
    const admin = (await second.login()).accessToken;
    const hook = (await second.api('GET', '/api/webhooks/audit-sink', { token: admin })).body.data;
    const deliveries = (await second.api('GET', `/api/webhooks/${hook._id}/deliveries`, { token: admin })).body.data;
    expect(deliveries[0]).toMatchObject({ _id: request!.headers['x-webhook-id'], status: 'delivered' });
    expect(deliveries[0].attempts).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('sends each delivery once when two instances share the store', async () => {
    const receiver = await new WebhookReceiver().listen();
    receivers.push(receiver);
    // Down at first, so both instances face the same backlog of retries when it comes back.
    let opensAt = Infinity;
    const taken: string[] = [];
    receiver.answer = (request) => {
      if (Date.now() < opensAt) return { status: 503 };
      taken.push(String(request.headers['x-webhook-id']));
      return { status: 200 };
    };
    const dataDir = makeDataDir();
    const a = await startServerProcess({ dataDir, env });
    await setUp(a, receiver.port);
    // One instance watches the project directory, as the README prescribes.
    const b = await startServerProcess({ dataDir, env: { ...env, PROJECT_WATCH: 'off' } });
    const count = 30;
    for (let i = 0; i < count; i++) {
      const res = await (i % 2 === 0 ? a : b).api('POST', '/api/things', { body: { n: i } });
      expect(res.status, res.text).toBe(201);
    }
    opensAt = Date.now() + 500;
    const end = Date.now() + 30_000;
    while (taken.length < count && Date.now() < end) await sleep(50);
    await sleep(2000);
    expect(taken).toHaveLength(count);
    expect(new Set(taken).size).toBe(count);
  }, 60_000);
});
