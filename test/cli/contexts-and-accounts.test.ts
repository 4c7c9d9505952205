import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCli, makeCli, type Cli } from '../helpers/dynctl-cli.ts';
import { ADMIN_PASSWORD, cleanupServerProcesses, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

/**
 * Contexts (stored credentials tied to their server), passwd, users unlock and endpoints test:
 * `node bin/dynctl.js` against real server processes.
 */
let server: ServerProcess;
let other: ServerProcess;

beforeAll(async () => {
  [server, other] = await Promise.all([startServerProcess(), startServerProcess()]);
});

afterAll(async () => {
  await cleanupCli();
  await cleanupServerProcesses();
});

async function loginCli(target: ServerProcess, extra: string[] = [], cli: Cli = makeCli()): Promise<Cli> {
  const result = await cli.run(['login', '--server', target.url, '--login', 'admin', '--password-stdin', ...extra], { input: ADMIN_PASSWORD });
  expect(result.code, result.stderr).toBe(0);
  return cli;
}

const configOf = (cli: Cli) => JSON.parse(readFileSync(cli.configPath, 'utf8'));

/** A plain HTTP listener that records the headers it is sent and answers 401, as a server would without a session. */
async function headerProbe(): Promise<{ url: string; seen: IncomingHttpHeaders[]; close(): Promise<void> }> {
  const seen: IncomingHttpHeaders[] = [];
  const probe: Server = createServer((request, response) => {
    seen.push(request.headers);
    response.writeHead(401, { 'content-type': 'application/json' }).end('{"success":false,"error":"Authentication required"}');
  });
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((resolve) => probe.close(() => resolve())) };
}

describe('stored credentials are tied to their server', () => {
  it('never sends the stored tokens to a server named by DYNCTL_SERVER or --server, and says "not logged in to" it (exit 3)', async () => {
    const cli = await loginCli(server);
    const probe = await headerProbe();
    try {
      const viaEnv = await cli.run(['endpoints', 'list'], { env: { DYNCTL_SERVER: probe.url } });
      expect(viaEnv.code).toBe(3);
      expect(viaEnv.stderr).toContain(`not logged in to ${probe.url} (the stored session is for ${server.url}): run dynctl login --server ${probe.url}`);
      const viaFlag = await cli.run(['--server', probe.url, 'keys', 'list']);
      expect(viaFlag.code).toBe(3);
      expect(viaFlag.stderr).toContain(`not logged in to ${probe.url}`);
      expect(probe.seen.length).toBeGreaterThanOrEqual(2);
      for (const headers of probe.seen) expect(headers.authorization).toBeUndefined();
    } finally {
      await probe.close();
    }
    // The same server, named explicitly, still gets the session.
    expect((await cli.run(['endpoints', 'list'], { env: { DYNCTL_SERVER: `${server.url}/` } })).code).toBe(0);
  });

  it('with no server configured at all, says to log in (exit 3) instead of trying port 3000', async () => {
    const fresh = makeCli();
    const result = await fresh.run(['endpoints', 'list']);
    expect(result.code).toBe(3);
    expect(result.stderr).toBe('dynctl: error: not logged in: run dynctl login --server URL\n');
  });
});

describe('named contexts', () => {
  it('keeps a session per server side by side: login --context, --context per command, context list and use', async () => {
    const cli = await loginCli(server);
    await loginCli(other, ['--context', 'staging'], cli);

    const list = await cli.run(['context', 'list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^\\*\\s+default\\s+${server.url}\\s+logged in$`, 'm'));
    expect(list.stdout).toMatch(new RegExp(`^\\s+staging\\s+${other.url}\\s+logged in$`, 'm'));

    // A definition only on the staging server tells the two apart.
    const { accessToken } = await other.login();
    const created = await other.api('POST', '/api/endpoints', { token: accessToken, body: { name: 'Only on staging', path: '/api/staging-only', method: 'GET', accessType: 'public', schema: {} } });
    expect(created.status, created.text).toBe(201);
    expect((await cli.run(['endpoints', 'list'])).stdout).not.toContain('Only on staging');
    expect((await cli.run(['--context', 'staging', 'endpoints', 'list'])).stdout).toContain('Only on staging');
    expect((await cli.run(['endpoints', 'list'], { env: { DYNCTL_CONTEXT: 'staging' } })).stdout).toContain('Only on staging');

    const use = await cli.run(['context', 'use', 'staging']);
    expect(use.code, use.stderr).toBe(0);
    expect(configOf(cli).currentContext).toBe('staging');
    expect((await cli.run(['endpoints', 'list'])).stdout).toContain('Only on staging');

    expect((await cli.run(['context', 'use', 'nowhere'])).code).toBe(1);
    const unknown = await cli.run(['--context', 'nowhere', 'endpoints', 'list']);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain('not logged in (context "nowhere"): run dynctl login --server URL');

    // Logging out of one context leaves the other signed in.
    expect((await cli.run(['--context', 'default', 'logout'])).code).toBe(0);
    expect((await cli.run(['endpoints', 'list'])).code).toBe(0);
    expect(configOf(cli).contexts.default).toEqual({ server: server.url });
  });

  it('reads a config file of the first format (one session) as the context "default" and migrates it on the next write', async () => {
    const cli = makeCli();
    const session = await server.login();
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(cli.configPath, '..'), { recursive: true });
    writeFileSync(cli.configPath, JSON.stringify({ server: server.url, accessToken: session.accessToken, refreshToken: session.refreshToken }));
    expect((await cli.run(['endpoints', 'list'])).code).toBe(0);
    const list = await cli.run(['--json', 'context', 'list']);
    expect(JSON.parse(list.stdout)).toEqual([{ name: 'default', current: true, server: server.url, loggedIn: true }]);

    await loginCli(other, ['--context', 'staging'], cli);
    expect(configOf(cli)).toEqual({
      currentContext: 'default',
      contexts: {
        default: { server: server.url, accessToken: session.accessToken, refreshToken: session.refreshToken },
        staging: { server: other.url, accessToken: expect.any(String), refreshToken: expect.any(String) },
      },
    });
  });
});

describe('dynctl passwd', () => {
  it('changes the password, keeps you signed in, and the server deletes initial-admin-password', async () => {
    const generated = await startServerProcess({ env: { DEFAULT_ADMIN_PASSWORD: undefined } });
    const file = join(generated.dataDir, 'initial-admin-password');
    const initial = readFileSync(file, 'utf8').trim();
    const cli = makeCli();
    expect((await cli.run(['login', '--server', generated.url, '--login', 'admin', '--password-stdin'], { input: `${initial}\n` })).code).toBe(0);

    const wrong = await cli.run(['passwd', '--password-stdin'], { input: 'not-the-password\nnew-password-123\n' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('currentPassword is wrong');
    expect(existsSync(file)).toBe(true);

    const changed = await cli.run(['passwd', '--password-stdin'], { input: `${initial}\nnew-password-123\n` });
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stdout).toContain('Password of admin changed; you are still signed in');
    expect((await cli.run(['keys', 'list'])).code).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(generated.output()).toContain('the admin password has been changed: deleted');

    expect((await generated.api('POST', '/api/auth/login', { body: { login: 'admin', password: initial } })).status).toBe(401);
    expect((await generated.api('POST', '/api/auth/login', { body: { login: 'admin', password: 'new-password-123' } })).status).toBe(200);

    const oneLine = await cli.run(['passwd', '--password-stdin'], { input: 'only-one-line\n' });
    expect(oneLine.code).toBe(2);
  });
});

describe('dynctl users unlock', () => {
  it('ends a lockout at once; the 429 says when the lockout ends', async () => {
    // A fresh token: logout (ends every session of the user) ran in an earlier test.
    const adminToken = (await server.login()).accessToken;
    expect((await server.api('PUT', '/api/settings', { token: adminToken, body: { lockoutThreshold: 2 } })).status).toBe(200);
    const user = await server.api('POST', '/api/users', { token: adminToken, body: { login: 'Locky', password: 'locky-password-1' } });
    expect(user.status, user.text).toBe(201);
    const admin = await loginCli(server);
    const locky = makeCli();
    const attempt = (password: string) => locky.run(['login', '--server', server.url, '--login', 'locky', '--password-stdin'], { input: password });
    for (let i = 0; i < 2; i++) expect((await attempt('wrong-password')).code).toBe(3);
    const locked = await attempt('locky-password-1');
    expect(locked.code).toBe(3);
    expect(locked.stderr).toMatch(/login failed: Too many failed login attempts; try again in 15 minutes \(locked until \d{4}-\d\d-\d\d \d\d:\d\d UTC\)/);

    const list = await admin.run(['users', 'list']);
    expect(list.stdout).toMatch(/^Locky\s/m);
    const unlock = await admin.run(['users', 'unlock', 'locky']);
    expect(unlock.code, unlock.stderr).toBe(0);
    expect(unlock.stdout).toContain('Locky unlocked');
    expect((await attempt('locky-password-1')).code).toBe(0);
    expect((await admin.run(['users', 'unlock', 'Locky'])).stdout).toContain('Locky was not locked');
    expect((await admin.run(['users', 'unlock', 'nobody'])).code).toBe(1);

    const audit = await server.api('GET', '/api/dashboard/logs?action=user_unlocked', { token: adminToken });
    expect(audit.body.data.map((entry: { message: string }) => entry.message)).toEqual(['User Locky unlocked (was not locked)', 'User Locky unlocked']);
    expect((await server.api('PUT', '/api/settings', { token: adminToken, body: { lockoutThreshold: 5 } })).status).toBe(200);
  });
});

describe('dynctl endpoints test', () => {
  it('runs an endpoint by name or id and prints status, body and timing; network rules on request', async () => {
    const adminToken = (await server.login()).accessToken;
    const created = await server.api('POST', '/api/endpoints', {
      token: adminToken,
      body: {
        name: 'Test notes',
        path: '/api/test-notes',
        method: 'POST',
        accessType: 'public',
        schema: { text: { type: 'string', required: true } },
        networkAccess: { enabled: true, allowedIpRanges: ['10.0.0.0/8'] },
      },
    });
    expect(created.status, created.text).toBe(201);
    const cli = await loginCli(server);

    const byName = await cli.run(['endpoints', 'test', 'Test notes', '--data', '{"text": "hello"}']);
    expect(byName.code, byName.stderr).toBe(0);
    expect(byName.stdout).toMatch(/^201 Created {2}POST \/api\/test-notes {2}[\d.]+ ms {2}\(from 127\.0\.0\.1, network rules skipped\)$/m);
    expect(byName.stdout).toContain('"text": "hello"');

    const invalid = await cli.run(['endpoints', 'test', created.body.data._id, '--data', '{}']);
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toMatch(/^400 Bad Request/);

    const outside = await cli.run(['--json', 'endpoints', 'test', 'POST /api/test-notes', '--data', '{"text": "x"}', '--client-ip', '203.0.113.9', '--apply-network-access']);
    expect(outside.code).toBe(3);
    expect(JSON.parse(outside.stdout)).toMatchObject({ status: 403, request: { clientIp: '203.0.113.9', networkRulesApplied: true } });
    const inside = await cli.run(['endpoints', 'test', 'POST /api/test-notes', '--data', '{"text": "x"}', '--client-ip', '10.1.2.3', '--apply-network-access']);
    expect(inside.code, inside.stdout).toBe(0);
    expect(inside.stdout).toContain('(from 10.1.2.3, network rules applied)');

    expect((await cli.run(['endpoints', 'test', 'No such endpoint'])).code).toBe(1);
    // The path as the server keeps it: a trailing slash or doubled slash names the same endpoint.
    const slashed = await cli.run(['endpoints', 'test', 'post  /api//test-notes/', '--data', '{"text": "y"}']);
    expect(slashed.code, slashed.stderr).toBe(0);
    expect((await cli.run(['endpoints', 'test', 'POST /api/test-notes extra'])).code).toBe(1);
  });
});
