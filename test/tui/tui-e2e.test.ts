import { execFile } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCli, signedInCli, type Cli } from '../helpers/dynctl-cli.ts';
import { cleanupServerProcesses, DYNCTL, ROOT, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

/**
 * `dynctl tui` end to end: the real command in a real pseudo-terminal (tmux, 100×30) against a
 * real server process, driven by keys and read from the pane as a person sees it.
 */
const run = promisify(execFile);
// A tmux server of this test's own, so nothing of the developer's tmux is touched.
const SOCKET = `dyn-tui-e2e-${process.pid}`;
const SESSION = 'tui';
const tmux = (...args: string[]) => run('tmux', ['-L', SOCKET, ...args]);

let server: ServerProcess;
let cli: Cli;
beforeAll(async () => {
  server = await startServerProcess();
  const { accessToken } = await server.login();
  const note = { name: 'Create note', path: '/api/notes', method: 'POST', accessType: 'public', schema: { text: { type: 'string', required: true, maxLength: 100 } } };
  expect((await server.api('POST', '/api/endpoints', { token: accessToken, body: note })).status).toBe(201);
  // A name that would retitle the terminal (OSC 0) if it reached it raw.
  const evil = { name: 'E\u001b]0;pwned\u0007', path: '/api/evil', method: 'GET', accessType: 'public', schema: {} };
  expect((await server.api('POST', '/api/endpoints', { token: accessToken, body: evil })).status).toBe(201);
  cli = await signedInCli(server.url);
}, 60_000);
afterAll(async () => {
  await tmux('kill-server').catch(() => undefined);
  await cleanupCli();
  await cleanupServerProcesses();
});

/** What the command left behind (exit code, stderr), for failure messages. */
let diagnostics = (): string => '';

async function pane(): Promise<string> {
  return (await tmux('capture-pane', '-p', '-t', SESSION)).stdout;
}

async function waitForPane(pattern: RegExp, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await pane().catch(() => '');
    if (pattern.test(text)) return text;
    if (Date.now() > deadline) throw new Error(`no ${pattern} in the pane within ${timeoutMs} ms; it shows:\n${text}\n${diagnostics()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function keys(...sequence: string[]): Promise<void> {
  for (const key of sequence) {
    await tmux('send-keys', '-t', SESSION, key);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function type(text: string): Promise<void> {
  await tmux('send-keys', '-t', SESSION, '-l', text);
  await new Promise((resolve) => setTimeout(resolve, 250));
}

describe('dynctl tui in a terminal', () => {
  it('refuses to start without a terminal (exit 2) and says why', async () => {
    const result = await cli.run(['tui']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('dynctl tui needs a terminal (stdin and stdout)');
  });

  it('waits for a server that cannot be reached at start, saying so, instead of exiting', async () => {
    const exitFile = join(cli.home, 'tui-down-exit-code');
    const script = join(cli.home, 'run-tui-down.sh');
    // Port 9 (discard) on loopback: nothing listens there in a test environment.
    writeFileSync(
      script,
      `#!/bin/sh\ncd '${ROOT}'\nexport HOME='${cli.home}' DYNCTL_CONFIG='${cli.configPath}' TERM=xterm-256color CI=true DYNCTL_SERVER=http://127.0.0.1:9 DYNCTL_TOKEN=abc\n'${process.execPath}' '${DYNCTL}' tui\necho $? > '${exitFile}'\n`,
    );
    chmodSync(script, 0o755);
    diagnostics = () => (existsSync(exitFile) ? `exit code ${readFileSync(exitFile, 'utf8').trim()}` : 'still running');
    await tmux('new-session', '-d', '-s', 'down', '-x', '100', '-y', '30', `sh '${script}'`);
    try {
      const deadline = Date.now() + 30_000;
      let text = '';
      while (!/server unreachable, retrying every 3 s/.test(text) && Date.now() < deadline) {
        text = (await tmux('capture-pane', '-p', '-t', 'down').catch(() => ({ stdout: '' }))).stdout;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(text, diagnostics()).toMatch(/server unreachable, retrying every 3 s \(Ctrl\+C to leave\)/);
      await new Promise((resolve) => setTimeout(resolve, 4000));
      expect(existsSync(exitFile), diagnostics()).toBe(false);
    } finally {
      await tmux('kill-session', '-t', 'down').catch(() => undefined);
    }
  }, 60_000);

  it('opens endpoints, tries one, sees the call in the logs and quits with q and exit code 0', async () => {
    const exitFile = join(cli.home, 'tui-exit-code');
    const script = join(cli.home, 'run-tui.sh');
    const errFile = join(cli.home, 'tui-stderr');
    // The pane runs the command with this test's config only, records its exit code and keeps
    // what it wrote to stderr for the failure message. CI=true as on a CI machine: the TUI must
    // still draw (Ink alone would wait for exit to draw anything there).
    writeFileSync(
      script,
      `#!/bin/sh\ncd '${ROOT}'\nexport HOME='${cli.home}' DYNCTL_CONFIG='${cli.configPath}' TERM=xterm-256color CI=true\nunset DYNCTL_SERVER DYNCTL_TOKEN DYNCTL_API_KEY DYNCTL_CONTEXT\n'${process.execPath}' '${DYNCTL}' tui 2> '${errFile}'\necho $? > '${exitFile}'\n`,
    );
    chmodSync(script, 0o755);
    diagnostics = () => [existsSync(exitFile) ? `exit code ${readFileSync(exitFile, 'utf8').trim()}` : 'still running', existsSync(errFile) ? `stderr: ${readFileSync(errFile, 'utf8').slice(-2000)}` : ''].join('\n');
    // Through sh, so a temp directory mounted noexec cannot stop the script.
    await tmux('new-session', '-d', '-s', SESSION, '-x', '100', '-y', '30', `sh '${script}'`);

    await waitForPane(/Automation health/, 60_000);
    await keys('2');
    const list = await waitForPane(/POST +\/api\/notes +Create note/);
    expect(list).toContain(String.raw`E\u001b]0;pwned\u0007`);
    expect((await tmux('display', '-p', '-t', SESSION, '#{pane_title}')).stdout.trim()).not.toBe('pwned');
    await keys('/');
    await type('notes');
    await keys('Enter', 'Enter');
    await waitForPane(/Schema \(1 field\)/);
    await keys('t');
    await waitForPane(/Body: \{"text":"text"\}/);
    await keys('Enter');
    const tried = await waitForPane(/Status 201/);
    expect(tried).toMatch(/Time [\d.]+ ms/);
    expect(tried).toContain('"text": "text"');

    await keys('Escape', 'Escape', '3');
    const logs = await waitForPane(/api_call +POST \/api\/notes 201/, 30_000);
    expect(logs).toContain('live, every 2 s');

    // A narrower terminal is drawn afresh: no row of the wider frame stays behind.
    await tmux('resize-window', '-t', SESSION, '-x', '60', '-y', '30');
    const narrow = await waitForPane(/^dyn http:\/\/\S+ +as admin\n1:dashbo 2:endpoi/);
    expect(narrow.split('\n').every((line) => line.length <= 60)).toBe(true);
    expect(narrow.split('\n').filter((line) => /^dyn http/.test(line))).toHaveLength(1);

    await keys('q');
    const deadline = Date.now() + 20_000;
    while (!existsSync(exitFile) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(readFileSync(exitFile, 'utf8').trim()).toBe('0');
  }, 180_000);
});
