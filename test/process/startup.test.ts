import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  cleanupServerProcesses,
  JWT_REFRESH_SECRET,
  JWT_SECRET,
  makeDataDir,
  ROOT,
  runDynctl,
  startServerProcess,
} from '../helpers/server-process.ts';

// Every test starts its own processes on its own DATA_DIR, so they can run side by side.
afterAll(cleanupServerProcesses);

const GENERATED_PASSWORD = /generated password (\S+)/;

describe.concurrent('startup', () => {
  it('prints a ready line with the real port when PORT=0, and serves on it', async () => {
    const server = await startServerProcess({ env: { PORT: '0' } });
    expect(server.port).toBeGreaterThan(0);
    expect(server.output()).toContain(`listening on http://127.0.0.1:${server.port}`);
    expect((await server.api('GET', '/api/health')).status).toBe(200);
    expect(await server.stop()).toBe(0);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['LOG_LEVEL', 'loud'],
    ['DATABASE_URL', 'postgres://x'],
    ['BODY_LIMIT', 'lots'],
    ['JWT_SECRET', 'short'],
  ])('refuses %s=%s: exit code 1 and exactly one stderr line naming the variable', async (variable, value) => {
    const run = await runDynctl(['serve'], { env: { [variable]: value } });
    expect(run.code).toBe(1);
    const lines = run.stderr.split('\n').filter((line) => line !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(variable);
    expect(run.stdout).toBe('');
  });
});

describe.concurrent('first start and restarts', () => {
  it('without DEFAULT_ADMIN_PASSWORD prints a generated password once, stores it with mode 0600, and it logs in', async () => {
    const server = await startServerProcess({ env: { DEFAULT_ADMIN_PASSWORD: undefined } });
    const password = GENERATED_PASSWORD.exec(server.output())?.[1];
    expect(password).toBeDefined();
    expect(server.output().split(password as string)).toHaveLength(2); // printed exactly once
    const file = join(server.dataDir, 'initial-admin-password');
    expect(readFileSync(file, 'utf8')).toBe(`${password}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const session = await server.login('admin', password);
    expect(session.user.login).toBe('admin');
    expect(await server.stop()).toBe(0);
  });

  it('a second start on the same DATA_DIR does not print the password again, and tokens from the first run still work', async () => {
    const dataDir = makeDataDir();
    const env = { DEFAULT_ADMIN_PASSWORD: undefined };
    const first = await startServerProcess({ env, dataDir });
    const password = GENERATED_PASSWORD.exec(first.output())?.[1] as string;
    const session = await first.login('admin', password);
    expect(await first.stop()).toBe(0);
    const secrets = join(dataDir, 'secrets.json');
    expect(statSync(secrets).mode & 0o777).toBe(0o600);
    const storedSecrets = readFileSync(secrets, 'utf8');

    const second = await startServerProcess({ env, dataDir });
    expect(second.output()).not.toContain(password);
    expect(second.output()).not.toMatch(GENERATED_PASSWORD);
    expect(readFileSync(secrets, 'utf8')).toBe(storedSecrets);
    expect((await second.api('GET', '/api/users', { token: session.accessToken })).status).toBe(200);
    const refreshed = await second.api('POST', '/api/auth/refresh', { body: { refreshToken: session.refreshToken } });
    expect(refreshed.status).toBe(200);
    expect(await second.stop()).toBe(0);
  });
});

describe.concurrent('production', () => {
  it.each([
    ['neither secret', {}],
    ['only JWT_SECRET', { JWT_SECRET }],
    ['only JWT_REFRESH_SECRET', { JWT_REFRESH_SECRET }],
  ])('NODE_ENV=production with %s refuses to start with exit code 1 and says why', async (_name, secrets) => {
    const run = await runDynctl(['serve'], { env: { NODE_ENV: 'production', ...secrets } });
    expect(run.code).toBe(1);
    expect(run.output).toContain('NODE_ENV=production requires JWT_SECRET and JWT_REFRESH_SECRET');
    expect(run.output).not.toContain('listening on');
  });

  it('NODE_ENV=production with both secrets starts, and warns while admin keeps its initial password', async () => {
    const server = await startServerProcess({ env: { NODE_ENV: 'production', JWT_SECRET, JWT_REFRESH_SECRET } });
    expect(server.output()).toMatch(/WARN user "admin" still has its initial password/);
    expect(existsSync(join(server.dataDir, 'secrets.json'))).toBe(false);
    expect(await server.stop()).toBe(0);
  });

  it('NODE_ENV=production keeps a generated admin password out of the log: it is in the file only', async () => {
    const server = await startServerProcess({ env: { NODE_ENV: 'production', JWT_SECRET, JWT_REFRESH_SECRET, DEFAULT_ADMIN_PASSWORD: undefined } });
    const file = join(server.dataDir, 'initial-admin-password');
    const password = readFileSync(file, 'utf8').trim();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(server.output()).toContain(`created user "admin" with a generated password, in ${file}`);
    expect(server.output()).not.toContain(password);
    expect((await server.login('admin', password)).user.login).toBe('admin');
    expect(await server.stop()).toBe(0);
  });
});

describe.concurrent('command line', () => {
  it('npm start runs `node bin/dynctl.js serve`', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; bin: Record<string, string> };
    expect(pkg.scripts.start).toBe('node bin/dynctl.js serve');
    expect(pkg.bin.dynctl).toBe('bin/dynctl.js');
  });

  it('every dependency with an install script is reviewed in allowScripts; the install-time usage ping is denied', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts.length).toBeGreaterThan(0);
    const allowScripts = pkg.allowScripts ?? {};
    expect(withScripts.filter((name) => !(name in allowScripts))).toEqual([]);
    expect(allowScripts['isolated-vm']).toBe(true);
    expect(allowScripts['@scarf/scarf']).toBe(false);
  });

  it('dynctl --help lists the serve command and exits 0', async () => {
    const run = await runDynctl(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^\s+serve\b/m);
  });

  it('an unknown command exits 2 and names it', async () => {
    const run = await runDynctl(['frobnicate']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown command 'frobnicate'");
  });
});
