import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCli, makeCli, signedInCli, type Cli } from '../helpers/dynctl-cli.ts';
import { cleanupServerProcesses, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

let server: ServerProcess;
let cli: Cli;

beforeAll(async () => {
  server = await startServerProcess();
  cli = await signedInCli(server.url);
});

afterAll(async () => {
  await cleanupCli();
  await cleanupServerProcesses();
});

describe('dynctl keys', () => {
  it('creates a key (printed once, alone on stdout), lists it, and the key works as DYNCTL_API_KEY until revoked', async () => {
    const created = await cli.run(['keys', 'create', '--name', 'ci', '--permissions', 'view,manage_api', '--expires', '30d']);
    expect(created.code, created.stderr).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^dyn_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(created.stderr).toContain('not shown again');

    const list = await cli.run(['keys', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^ID\s+NAME\s+PREFIX\s+PERMISSIONS\s+EXPIRES\s+LAST USED$/m);
    expect(list.stdout).toContain(key.slice(0, 16));
    expect(list.stdout).not.toContain(key);

    const json = await cli.run(['--json', 'keys', 'list']);
    const keys = JSON.parse(json.stdout) as Array<{ _id: string; name: string; permissions: string[]; expiresAt: string }>;
    const entry = keys.find((k) => k.name === 'ci');
    expect(entry?.permissions).toEqual(['view', 'manage_api']);
    const days = (Date.parse(entry?.expiresAt ?? '') - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThan(30.1);

    const keyOnly = makeCli({ DYNCTL_API_KEY: key, DYNCTL_SERVER: server.url });
    const endpoints = await keyOnly.run(['endpoints', 'list']);
    expect(endpoints.code, endpoints.stderr).toBe(0);
    expect(endpoints.stdout).toContain('/api/health');

    const revoked = await cli.run(['keys', 'revoke', entry?._id ?? '']);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain('Revoked API key "ci"');

    const refused = await keyOnly.run(['endpoints', 'list']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('Invalid or expired API key');
  });

  it('--json create returns the key with its fields', async () => {
    const created = await cli.run(['--json', 'keys', 'create', '--name', 'scripted', '--permissions', 'view', '--expires', '2099-01-31']);
    expect(created.code, created.stderr).toBe(0);
    const body = JSON.parse(created.stdout);
    expect(body).toMatchObject({ name: 'scripted', permissions: ['view'], expiresAt: '2099-01-31T00:00:00.000Z' });
    expect(body.key).toMatch(/^dyn_/);
  });

  it.each([
    { name: 'an unknown permission', args: ['--name', 'x', '--permissions', 'view,root'], message: 'unknown permission "root"' },
    { name: 'a bad expiry', args: ['--name', 'x', '--permissions', 'view', '--expires', 'soon'], message: 'use an ISO date' },
    { name: 'an expiry in the past', args: ['--name', 'x', '--permissions', 'view', '--expires', '2001-01-01'], message: 'not in the future' },
    { name: 'no --name', args: ['--permissions', 'view'], message: "required option '--name <name>'" },
  ])('create with $name is a usage error (exit 2)', async ({ args, message }) => {
    const result = await cli.run(['keys', 'create', ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it('a key without manage_api cannot create keys (exit 3); revoking an unknown id exits 1', async () => {
    const viewer = (await cli.run(['keys', 'create', '--name', 'viewer', '--permissions', 'view'])).stdout.trim();
    const asViewer = await makeCli({ DYNCTL_API_KEY: viewer, DYNCTL_SERVER: server.url }).run(['keys', 'list']);
    expect(asViewer.code).toBe(3);
    expect(asViewer.stderr).toContain('[HTTP 403]');

    const missing = await cli.run(['keys', 'revoke', '0123456789abcdef01234567']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('[HTTP 404]');
  });
});
