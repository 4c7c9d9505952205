import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynClient } from '../../src/cli/client.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { KEY, renderTui } from '../helpers/tui.ts';

const CTRL_U = '\u0015';

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer();
  token = await server.adminToken();
  const group = await server.api('POST', '/api/groups', { token, body: { name: 'Viewers', permissions: ['view', 'view_logs'] } });
  expect(group.status).toBe(201);
  expect((await server.api('POST', '/api/users', { token, body: { login: 'viewer', password: 'viewer-password-1', name: 'Vera Viewer', groupIds: [group.body.data._id] } })).status).toBe(201);
  expect((await server.api('POST', '/api/users', { token, body: { login: 'bob', password: 'bob-password-1', name: 'Bob' } })).status).toBe(201);
  const job = { name: 'nightly', schedule: '0 3 * * *', action: { type: 'javascript', code: 'async function run() { return 42 }' } };
  expect((await server.api('POST', '/api/cron', { token, body: job })).status).toBe(201);
  const broken = { name: 'broken', schedule: '0 4 * * *', action: { type: 'javascript', code: 'async function run() { throw new Error("boom") }' } };
  expect((await server.api('POST', '/api/cron', { token, body: broken })).status).toBe(201);
});
afterAll(async () => {
  await server.close();
});

describe('dynctl tui: logs', () => {
  it('tails the audit log and shows a new call as it happens, filtered by action', async () => {
    const endpoint = await server.api('POST', '/api/endpoints', { token, body: { name: 'Ping', path: '/api/ping', method: 'GET', accessType: 'public', schema: {} } });
    expect(endpoint.status).toBe(201);
    const tui = await renderTui(server, { screen: 'logs' });
    try {
      await tui.waitFor('endpoint_created');
      expect(tui.frame()).toContain('live, every 2 s');
      await tui.press('/');
      await tui.type('api_call');
      await tui.press(KEY.enter);
      await tui.waitFor('no "api_call" entries yet');
      expect((await server.api('GET', '/api/ping')).status).toBe(200);
      const frame = await tui.waitFor(/api_call +GET \/api\/ping 200/, 20_000);
      expect(frame).not.toContain('endpoint_created');
    } finally {
      tui.unmount();
    }
  });

  it('paused, picks an entry with the arrows and shows it whole on Enter; Esc goes back to the tail', async () => {
    expect((await server.api('POST', '/api/auth/login', { body: { login: `guess-${'x'.repeat(90)}`, password: 'wrong-password' } })).status).toBe(401);
    const tui = await renderTui(server, { screen: 'logs' });
    try {
      await tui.waitFor('login_failed');
      await tui.press(' ');
      await tui.waitFor('PAUSED (space resumes)  ↑↓ move  Enter open');
      // The cursor starts on the newest entry (this TUI's own sign-in); one up is the failed one.
      await tui.waitFor(/›\S* +login +POST/);
      await tui.press('k');
      await tui.waitFor(/›\S* +login_failed/);
      await tui.press(KEY.enter);
      const detail = await tui.waitFor('Log entry');
      expect(detail).toContain('"action": "login_failed"');
      // A line longer than the terminal goes on in the next rows: the whole login (as the audit
      // keeps it, its first 64 characters) is there.
      expect(detail.replace(/\n/g, '')).toContain(`\\"guess-${'x'.repeat(58)}\\"`);
      await tui.press(KEY.escape);
      await tui.waitFor(/›\S* +login_failed/);
      await tui.press(KEY.up);
      await tui.waitFor(/›\S* +(?!login_failed)[a-z_]+ /);
      await tui.press(' ');
      await tui.waitFor('live, every 2 s');
      expect(tui.frame()).not.toContain('›');
    } finally {
      tui.unmount();
    }
  });
});

describe('dynctl tui: cron', () => {
  it('lists jobs with next run and last status, runs one now and shows its history', async () => {
    const tui = await renderTui(server, { screen: 'cron' });
    try {
      const list = await tui.waitFor('nightly');
      expect(list).toMatch(/broken +0 4 \* \* \* +\d{4}-\d\d-\d\d 04:00:00 +— +—/);
      await tui.press('x');
      const ran = await tui.waitFor('✗ broken: failed in');
      expect(ran).toContain('boom');
      await tui.waitFor(/broken +0 4 \* \* \* .* failed/);
      await tui.press(KEY.enter);
      const runs = await tui.waitFor('1 runs');
      expect(runs).toContain('Runs of broken');
      expect(runs).toMatch(/manual +failed +\d+ +boom/);
      await tui.press(KEY.escape);
      await tui.waitFor('x run now');
    } finally {
      tui.unmount();
    }
  });
});

describe('dynctl tui: webhooks', () => {
  // Webhook routes come with the automation work; a server without them answers 404.
  it('lists the webhooks, or says they are not available on a server without the webhook routes', async () => {
    const tui = await renderTui(server, { screen: 'webhooks' });
    try {
      const frame = await tui.waitFor(/webhooks not available on this server|NAME +URL +EVENTS +SECRET +HEALTH/);
      expect(frame).not.toContain('✗');
    } finally {
      tui.unmount();
    }
  });
});

describe('dynctl tui: API keys', () => {
  it('creates a key and shows it once, then revokes it after y', async () => {
    const tui = await renderTui(server, { screen: 'keys' });
    try {
      await tui.waitFor('c create');
      await tui.press('c');
      await tui.waitFor('Name:');
      await tui.type('deploy-bot');
      await tui.press(KEY.enter);
      await tui.waitFor('Permissions: view');
      await tui.press(KEY.enter);
      const created = await tui.waitFor('it is not shown again');
      // The whole key, not the `dyn_<id>` prefix the reloaded list may already show above it.
      const key = /(dyn_[0-9a-f]{12}_[A-Za-z0-9_-]{43})/.exec(created)?.[1];
      expect(key).toBeDefined();
      expect((await server.api('GET', '/api/endpoints', { apiKey: key })).status).toBe(200);
      await tui.press(KEY.escape);
      await tui.waitFor(/^(?![\s\S]*not shown again)[\s\S]*deploy-bot/);
      await tui.press('x');
      await tui.waitFor('revoke the key "deploy-bot"');
      await tui.press('y');
      await tui.waitFor('✓ revoked deploy-bot');
      expect((await server.api('GET', '/api/endpoints', { apiKey: key })).status).toBe(401);
    } finally {
      tui.unmount();
    }
  });

  it('replaces the pre-filled permissions, refuses an unknown one before sending, and starts afresh on c', async () => {
    const tui = await renderTui(server, { screen: 'keys' });
    try {
      await tui.waitFor('c create');
      await tui.press('c');
      await tui.waitFor('Name:');
      await tui.type('tui-key');
      await tui.press(KEY.enter);
      await tui.waitFor('Permissions: view');
      // The default is selected: what is typed replaces it.
      await tui.type('view,bogus');
      await tui.waitFor(/Permissions: view,bogus *$/m);
      await tui.press(KEY.enter);
      const refused = await tui.waitFor('✗ unknown permission "bogus" (known: manage_users, manage_api, view, view_logs)');
      expect(refused).toMatch(/Permissions: view,bogus *$/m);
      expect(refused).not.toContain('HTTP 400');
      // Ctrl+U clears the field; nothing was created.
      await tui.press(CTRL_U);
      await tui.waitFor(/Permissions: *$/m);
      expect((await server.api('GET', '/api/api-keys', { token })).body.data.map((key: { name: string }) => key.name)).not.toContain('tui-key');
      await tui.type('manage_users');
      await tui.press(KEY.escape);
      await tui.waitFor(/^(?![\s\S]*Permissions:)/);
      // A new form: empty name, the default permissions, no problem from the last one.
      await tui.press('c');
      const form = await tui.waitFor('Name:');
      expect(form).toMatch(/Name: *$/m);
      expect(form).not.toContain('unknown permission');
      await tui.type('tui-key');
      await tui.press(KEY.enter);
      await tui.waitFor(/Permissions: view *$/m);
      await tui.press(KEY.enter);
      await tui.waitFor('✓ created "tui-key"');
    } finally {
      tui.unmount();
    }
  });
});

describe('dynctl tui: users and groups', () => {
  it('disables a user after y, enables them again, unlocks, and lists the groups on Tab', async () => {
    const tui = await renderTui(server, { screen: 'users' });
    try {
      await tui.waitFor('bob');
      await tui.press('/');
      await tui.type('bob');
      await tui.press(KEY.enter);
      await tui.waitFor('1 users');
      await tui.press('d');
      await tui.waitFor('disable bob? (ends their sessions) [y/N]');
      await tui.press('y');
      await tui.waitFor('✓ bob is disabled');
      // The list is read again after the change: `d` acts on the user as the list shows them.
      await tui.waitFor(/bob +Bob +disabled/);
      expect((await server.api('POST', '/api/auth/login', { body: { login: 'bob', password: 'bob-password-1' } })).status).toBe(401);
      await tui.press('d');
      await tui.waitFor('enable bob?');
      await tui.press('y');
      await tui.waitFor('✓ bob is active');
      await tui.waitFor(/bob +Bob +active/);
      await tui.press('u');
      await tui.waitFor('✓ bob was not locked');
      // Enter shows the user; the "✓" line went with the key after it, and Esc comes back.
      await tui.press(KEY.enter);
      const detail = await tui.waitFor('User bob');
      expect(detail).toMatch(/Login +bob/);
      expect(detail).toMatch(/Groups +none/);
      expect(detail).not.toContain('✓ bob');
      await tui.press(KEY.escape);
      await tui.waitFor(/bob +Bob +active/);
      await tui.press('/');
      await tui.press('\u0015');
      await tui.type('viewer');
      await tui.press(KEY.enter);
      await tui.waitFor(/viewer +Vera Viewer/);
      await tui.press(KEY.enter);
      // Group names come with the groups' list, read when the user is opened.
      const viewer = await tui.waitFor('Viewers (view, view_logs)');
      expect(viewer).toContain('User viewer');
      expect(viewer).toMatch(/Email +—/);
      await tui.press(KEY.escape);
      await tui.waitFor(/viewer +Vera Viewer/);
      await tui.press(KEY.tab);
      const groups = await tui.waitFor('Viewers');
      expect(groups).toMatch(/Administrators +.*manage_users.* +yes/);
    } finally {
      tui.unmount();
    }
  });

  it('shows a read-only login no write actions', async () => {
    const tui = await renderTui(server, { login: 'viewer', password: 'viewer-password-1', screen: 'users' });
    try {
      const users = await tui.waitFor('bob');
      expect(users).not.toContain('d disable');
      await tui.press('d');
      await tui.press('2');
      await tui.waitFor('METHOD PATH');
      await tui.press(KEY.enter);
      const detail = await tui.waitFor('Esc back');
      expect(detail).not.toContain('t try it');
      expect(detail).not.toContain('d records');
      await tui.press('4');
      await tui.waitFor('Cron jobs');
      expect(tui.frame()).not.toContain('x run now');
    } finally {
      tui.unmount();
    }
  });
});

describe('dynctl tui: cancellation', () => {
  let silent: Server;
  let url: string;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    // A server that takes the connection and never answers.
    silent = createServer((socket) => {
      sockets.add(socket);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it('shows a spinner while a call is under way and Esc cancels it', async () => {
    const client = new DynClient({ server: url, credentials: { kind: 'token', token: 'x' }, longLived: true });
    const tui = await renderTui(server, { client, screen: 'endpoints' });
    try {
      await tui.waitFor('loading endpoints… (Esc to cancel)');
      await tui.press(KEY.escape);
      const frame = await tui.waitFor('cancelled: r loads again');
      expect(frame).not.toContain('loading endpoints');
    } finally {
      tui.unmount();
    }
  });
});
