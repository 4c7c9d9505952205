import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCli, signedInCli, type Cli } from '../helpers/dynctl-cli.ts';
import { cleanupServerProcesses, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

let server: ServerProcess;
let cli: Cli;
const receiver = new WebhookReceiver();

beforeAll(async () => {
  await receiver.listen();
  receiver.answer = (request) => (request.url === '/down' ? { status: 503, body: 'down' } : { status: 200 });
  server = await startServerProcess();
  cli = await signedInCli(server.url);
  const token = (await server.login()).accessToken;
  expect((await server.api('PUT', '/api/settings', { token, body: { outboundAllowList: [`127.0.0.1:${receiver.port}`] } })).status).toBe(200);
  const create = (name: string, path: string) => server.api('POST', '/api/webhooks', { token, body: { name, url: `${receiver.url}${path}`, events: ['user.created', 'record.created'], secret: 'cli-secret' } });
  expect((await create('orders-sink', '/in')).status).toBe(201);
  expect((await create('broken-sink', '/down')).status).toBe(201);
});

afterAll(async () => {
  await cleanupCli();
  await cleanupServerProcesses();
  await receiver.close();
});

describe('dynctl webhooks', () => {
  it('list shows each hook with its events, state and health, never the secret', async () => {
    const list = await cli.run(['webhooks', 'list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^NAME\s+URL\s+EVENTS\s+ENABLED\s+HEALTH\s+LAST DELIVERY$/m);
    expect(list.stdout).toMatch(/^orders-sink\s+http:\/\/127\.0\.0\.1:\d+\/in\s+user\.created,record\.created\s+yes\s+unknown\s+-$/m);
    const json = await cli.run(['--json', 'webhooks', 'list']);
    expect(json.stdout).not.toContain('cli-secret');
  });

  it('test NAME sends webhook.test now; deliveries NAME lists it', async () => {
    const test = await cli.run(['webhooks', 'test', 'orders-sink']);
    expect(test.code, test.stderr).toBe(0);
    expect(test.stdout).toMatch(/✓ Delivered webhook.test \(200\) in \d+ ms/);
    const deliveries = await cli.run(['webhooks', 'deliveries', 'orders-sink']);
    expect(deliveries.code, deliveries.stderr).toBe(0);
    expect(deliveries.stdout).toMatch(/^CREATED\s+EVENT\s+STATUS\s+ATTEMPTS\s+CODE\s+DURATION\s+NEXT ATTEMPT\s+ERROR$/m);
    expect(deliveries.stdout).toMatch(/webhook\.test\s+delivered\s+1\s+200\s+\d+ ms\s+-/);
  });

  it('a failed test exits 1 with the error', async () => {
    const test = await cli.run(['webhooks', 'test', 'broken-sink']);
    expect(test.code).toBe(1);
    expect(test.stdout).toContain('webhook.test failed');
    expect(test.stderr).toContain('answered 503');
  });

  it('an unknown hook is a 404 (exit 1)', async () => {
    const run = await cli.run(['webhooks', 'deliveries', 'no-such-hook']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Webhook not found');
  });
});
