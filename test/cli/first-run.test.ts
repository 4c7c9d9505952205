import { spawn } from 'node:child_process';
import { appendFileSync, cpSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCli, makeCli } from '../helpers/dynctl-cli.ts';
import { ADMIN_PASSWORD, cleanupServerProcesses, DYNCTL, makeDataDir, ROOT, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

/**
 * What a new user meets first: the Node version check, output piped into `head`, dates.
 * `node bin/dynctl.js` against a real server process.
 */
let server: ServerProcess;
let token: string;

beforeAll(async () => {
  server = await startServerProcess();
  token = (await server.login()).accessToken;
});

afterAll(async () => {
  await cleanupCli();
  await cleanupServerProcesses();
});

/** Runs the shim as an older Node would: process.version(s) say 20 (set before the shim runs). */
function runAsNode20(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const spoof = `Object.defineProperty(process.versions,"node",{value:"20.11.1"});Object.defineProperty(process,"version",{value:"v20.11.1"});`;
  const child = spawn(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(spoof)}`, DYNCTL, ...args], { cwd: ROOT, env: { PATH: process.env.PATH } });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe('the Node version check', () => {
  it('on Node older than 24, says in one line what to install and exits 1', async () => {
    const result = await runAsNode20(['endpoints', 'list']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('dynctl: error: Node.js 24 or newer is required (this is v20.11.1); install it with nvm (nvm install, which reads .nvmrc) or from https://nodejs.org\n');
  });
});

describe('closed output', () => {
  it('a reader that closes the pipe early (dynctl endpoints list | head -1) ends dynctl quietly', async () => {
    for (let run = 0; run < 3; run++) {
      const child = spawn(process.execPath, [DYNCTL, 'endpoints', 'list'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DYNCTL_SERVER: server.url, DYNCTL_TOKEN: token },
      });
      // The read end is closed before dynctl writes anything: every write meets EPIPE.
      child.stdout.destroy();
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const code = await new Promise((resolve) => child.once('close', resolve));
      expect(stderr).toBe('');
      expect(code).toBe(0);
    }
  });
});

describe('dates', () => {
  it('carry their time zone', async () => {
    const cli = makeCli({ DYNCTL_SERVER: server.url, DYNCTL_TOKEN: token });
    const created = await cli.run(['keys', 'create', '--name', 'dated', '--permissions', 'view', '--expires', '2099-01-31T08:30:00Z']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain('expires 2099-01-31 08:30:00 UTC');
    const list = await cli.run(['keys', 'list']);
    expect(list.stdout).toMatch(/dated .* 2099-01-31 08:30:00 UTC/);
  });
});

describe('the README tour', () => {
  it('step 3: a field added to the shared schema of categories.yaml is accepted by POST and shown by the list', async () => {
    const dataDir = makeDataDir();
    const project = join(dataDir, 'project');
    cpSync(join(ROOT, 'project'), project, { recursive: true });
    const shop = await startServerProcess({ dataDir, env: { PROJECT_DIR: project } });
    const cli = makeCli();
    expect((await cli.run(['login', '--server', shop.url, '--login', 'admin', '--password-stdin'], { input: ADMIN_PASSWORD })).code).toBe(0);
    const post = () => cli.run(['call', 'POST', '/api/shop/categories', '--data', '{"name": "Games", "slug": "games"}']);
    const before = await post();
    expect(before.code).toBe(1);
    expect(before.stdout).toMatch(/^400 /);

    appendFileSync(join(project, 'endpoints', 'categories.yaml'), '  slug:\n    type: string\n    maxLength: 60\n');
    let after = await post();
    for (let tries = 0; after.code !== 0 && tries < 40; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      after = await post();
    }
    expect(after.code, after.stdout).toBe(0);
    const list = (await fetch(`${shop.url}/api/shop/categories`).then((response) => response.json())) as { data: unknown[] };
    expect(list.data).toEqual([expect.objectContaining({ name: 'Games', slug: 'games' })]);
  });
});

describe('project/README.md', () => {
  it('lists exactly the files the sample project holds', () => {
    const text = readFileSync(join(ROOT, 'project', 'README.md'), 'utf8');
    const listed = [...text.matchAll(/^((?:groups|endpoints|cron)\/[\w.-]+)/gm)].map((match) => match[1]).sort();
    const actual = ['groups', 'endpoints', 'cron'].flatMap((dir) => readdirSync(join(ROOT, 'project', dir)).map((file) => `${dir}/${file}`)).sort();
    expect(listed).toEqual(actual);
  });
});
