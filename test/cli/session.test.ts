import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCli, closedPort, makeCli } from '../helpers/dynctl-cli.ts';
import { ADMIN_PASSWORD, cleanupServerProcesses, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

let server: ServerProcess;

beforeAll(async () => {
  server = await startServerProcess();
});

afterAll(async () => {
  await cleanupCli();
  await cleanupServerProcesses();
});

/** The session of the current context (the file holds named contexts). */
const readConfig = (path: string): { server?: string; accessToken?: string; refreshToken?: string } => {
  const config = JSON.parse(readFileSync(path, 'utf8'));
  return config.contexts[config.currentContext];
};

async function loggedInCli() {
  const cli = makeCli();
  const login = await cli.run(['login', '--server', server.url, '--login', 'admin', '--password-stdin'], { input: `${ADMIN_PASSWORD}\n` });
  expect(login.code, login.stderr).toBe(0);
  return cli;
}

describe('dynctl login', () => {
  it('reads the password from stdin, stores the session, and later commands use the stored token', async () => {
    const cli = makeCli();
    const login = await cli.run(['login', '--server', server.url, '--login', 'admin', '--password-stdin'], { input: `${ADMIN_PASSWORD}\n` });
    expect(login).toMatchObject({ code: 0 });
    expect(login.stdout).toContain(`Logged in to ${server.url} as admin`);

    const config = readConfig(cli.configPath);
    expect(config.server).toBe(server.url);
    expect(config.accessToken).toMatch(/^ey/);
    expect(config.refreshToken).toMatch(/^ey/);

    const list = await cli.run(['endpoints', 'list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/GET\s+\/api\/health\s+Health/);
  });

  it('writes the config file with mode 0600 in a directory with mode 0700', async () => {
    const cli = await loggedInCli();
    expect(statSync(cli.configPath).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(cli.configPath)).mode & 0o777).toBe(0o700);
  });

  it('uses $XDG_CONFIG_HOME/dynctl/config.json when DYNCTL_CONFIG is not set', async () => {
    const cli = makeCli();
    const xdg = join(cli.home, 'xdg');
    const env = { DYNCTL_CONFIG: undefined, XDG_CONFIG_HOME: xdg };
    const login = await cli.run(['login', '--server', server.url, '--login', 'admin', '--password-stdin'], { input: ADMIN_PASSWORD, env });
    expect(login.code, login.stderr).toBe(0);
    const path = join(xdg, 'dynctl', 'config.json');
    expect(readConfig(path).server).toBe(server.url);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect((await cli.run(['keys', 'list'], { env })).code).toBe(0);
  });

  it('exits 3 with a one-line error on a wrong password and stores nothing', async () => {
    const cli = makeCli();
    const login = await cli.run(['login', '--server', server.url, '--login', 'admin', '--password-stdin'], { input: 'wrong-password' });
    expect(login.code).toBe(3);
    expect(login.stderr.trim().split('\n')).toEqual(['dynctl: error: login failed: Invalid login or password']);
    expect(() => statSync(cli.configPath)).toThrow();
  });

  it('with --json, reports the failure as {"error"} on stdout', async () => {
    const cli = makeCli();
    const login = await cli.run(['--json', 'login', '--server', server.url, '--login', 'admin', '--password-stdin'], { input: 'wrong-password' });
    expect(login.code).toBe(3);
    expect(JSON.parse(login.stdout)).toEqual({ error: 'login failed: Invalid login or password' });
  });

  it('refuses to prompt without a terminal (exit 2)', async () => {
    const login = await makeCli().run(['login', '--server', server.url, '--login', 'admin']);
    expect(login.code).toBe(2);
    expect(login.stderr).toContain('use --password-stdin');
  });

  it('exits 4 when the server cannot be reached', async () => {
    const down = `http://127.0.0.1:${await closedPort()}`;
    const login = await makeCli().run(['login', '--server', down, '--login', 'admin', '--password-stdin'], { input: ADMIN_PASSWORD });
    expect(login.code).toBe(4);
    expect(login.stderr).toMatch(/cannot reach .*connection refused/);

    const cli = await loggedInCli();
    const list = await cli.run(['endpoints', 'list'], { env: { DYNCTL_SERVER: down } });
    expect(list.code).toBe(4);
    expect(list.stderr.trim().split('\n')).toHaveLength(1);
    expect(list.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('usage errors', () => {
  it.each([
    { name: 'an unknown command', args: ['frobnicate'] },
    { name: 'an unknown flag', args: ['keys', 'list', '--frobnicate'] },
    { name: 'a missing argument', args: ['keys', 'revoke'] },
    { name: 'a bad flag value', args: ['logs', '--limit', 'many'] },
    { name: 'no command at all', args: [] },
  ])('$name exits 2', async ({ args }) => {
    const result = await makeCli().run(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/dynctl: error:|Usage: dynctl/);
  });

  it('with --json, a usage error is also {"error"} on stdout', async () => {
    const result = await makeCli().run(['--json', 'keys', 'list', '--frobnicate']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toEqual({ error: "unknown option '--frobnicate'" });
  });

  it('--help exits 0 and describes the commands, the environment and the exit codes', async () => {
    const help = await makeCli().run(['--help']);
    expect(help.code).toBe(0);
    for (const text of ['login', 'logout', 'keys', 'call', 'endpoints', 'logs', 'status', 'serve', 'DYNCTL_TOKEN', 'Exit codes']) expect(help.stdout).toContain(text);
    const keysHelp = await makeCli().run(['keys', 'create', '--help']);
    expect(keysHelp.stdout).toContain('--permissions <list>');
    expect(keysHelp.stdout).toContain('--json');
  });
});

describe('sessions', () => {
  it('logout ends the session on the server and forgets the tokens', async () => {
    const cli = await loggedInCli();
    const { accessToken } = readConfig(cli.configPath);
    const logout = await cli.run(['logout']);
    expect(logout.code, logout.stderr).toBe(0);
    expect(readConfig(cli.configPath)).toEqual({ server: server.url });

    const afterwards = await cli.run(['endpoints', 'list']);
    expect(afterwards.code).toBe(3);
    expect(afterwards.stderr).toContain('not logged in');

    const oldToken = await cli.run(['endpoints', 'list'], { env: { DYNCTL_TOKEN: accessToken } });
    expect(oldToken.code).toBe(3);
  });

  it('DYNCTL_TOKEN and DYNCTL_SERVER override the config file', async () => {
    const { accessToken } = await server.login();
    const cli = makeCli();
    const list = await cli.run(['--json', 'endpoints', 'list'], { env: { DYNCTL_TOKEN: accessToken, DYNCTL_SERVER: server.url } });
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).map((e: { path: string }) => e.path)).toContain('/api/health');

    const bogus = await cli.run(['endpoints', 'list'], { env: { DYNCTL_TOKEN: 'not-a-token', DYNCTL_SERVER: server.url } });
    expect(bogus.code).toBe(3);
  });

  it('refreshes an expired or rejected access token once with the stored refresh token and saves the new pair', async () => {
    const cli = await loggedInCli();
    const before = readConfig(cli.configPath);
    // An access token whose exp has passed: refreshed before the request is sent.
    const expired = `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from(JSON.stringify({ exp: 1 })).toString('base64url')}.x`;
    writeFileSync(cli.configPath, JSON.stringify({ ...before, accessToken: expired }));
    const list = await cli.run(['endpoints', 'list']);
    expect(list.code, list.stderr).toBe(0);
    const after = readConfig(cli.configPath);
    expect(after.accessToken).not.toBe(expired);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(statSync(cli.configPath).mode & 0o777).toBe(0o600);

    // A token the server rejects (401): refreshed, and the request sent again.
    writeFileSync(cli.configPath, JSON.stringify({ ...after, accessToken: 'garbage' }));
    expect((await cli.run(['keys', 'list'])).code).toBe(0);
    expect(readConfig(cli.configPath).accessToken).toMatch(/^ey/);

    // The rotated-out refresh token no longer works: the session has ended, exit 3.
    writeFileSync(cli.configPath, JSON.stringify({ ...before, accessToken: 'garbage' }));
    const stale = await cli.run(['keys', 'list']);
    expect(stale.code).toBe(3);
    expect(stale.stderr).toContain('run dynctl login');
  });
});
