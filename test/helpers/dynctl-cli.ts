import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_PASSWORD, DYNCTL, ROOT } from './server-process.ts';

/**
 * `node bin/dynctl.js <args>` as a client would run it: its own HOME and config file (never
 * the developer's), stdin fed from `input`, and only the environment given here — the test
 * runner's DYNCTL_* variables must not leak in. Processes and directories are tracked and
 * removed by `cleanupCli()`.
 */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Cli {
  /** The config file this client uses (DYNCTL_CONFIG). */
  configPath: string;
  home: string;
  run(args: string[], options?: { env?: Record<string, string | undefined>; input?: string }): Promise<CliResult>;
  /** Starts a long-running command (logs --follow); stop it with `stop()`. */
  start(args: string[], options?: { env?: Record<string, string | undefined> }): RunningCli;
}

export interface RunningCli {
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout matches. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<CliResult>;
}

const EXIT_TIMEOUT_MS = 15_000;
const live = new Set<ChildProcess>();
const dirs = new Set<string>();

process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** A client signed in to `serverUrl` as the test admin (the tests' usual first step). */
export async function signedInCli(serverUrl: string): Promise<Cli> {
  const cli = makeCli();
  const login = await cli.run(['login', '--server', serverUrl, '--login', 'admin', '--password-stdin'], { input: ADMIN_PASSWORD });
  if (login.code !== 0) throw new Error(`dynctl login failed (${String(login.code)}): ${login.stderr}`);
  return cli;
}

export function makeCli(env: Record<string, string | undefined> = {}): Cli {
  const home = mkdtempSync(join(tmpdir(), 'dynctl-home-'));
  dirs.add(home);
  const configPath = join(home, 'dynctl-config', 'config.json');
  const baseEnv = { PATH: process.env.PATH, HOME: home, TMPDIR: process.env.TMPDIR, DYNCTL_CONFIG: configPath, ...env };
  const spawnCli = (args: string[], extra: Record<string, string | undefined>): ChildProcess => {
    const merged = Object.fromEntries(Object.entries({ ...baseEnv, ...extra }).filter((entry): entry is [string, string] => entry[1] !== undefined));
    const child = spawn(process.execPath, [DYNCTL, ...args], { cwd: ROOT, env: merged, stdio: ['pipe', 'pipe', 'pipe'] });
    live.add(child);
    child.once('exit', () => live.delete(child));
    return child;
  };
  const collect = (child: ChildProcess) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    return { stdout: () => stdout, stderr: () => stderr, closed };
  };
  const finish = async (child: ChildProcess, io: ReturnType<typeof collect>, what: string): Promise<CliResult> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`dynctl ${what} did not exit; stdout:\n${io.stdout()}\nstderr:\n${io.stderr()}`));
      }, EXIT_TIMEOUT_MS);
    });
    try {
      const code = await Promise.race([io.closed, timeout]);
      return { code, stdout: io.stdout(), stderr: io.stderr() };
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    configPath,
    home,
    async run(args, options = {}) {
      const child = spawnCli(args, options.env ?? {});
      const io = collect(child);
      child.stdin?.on('error', () => {});
      child.stdin?.end(options.input ?? '');
      return finish(child, io, args.join(' '));
    },
    start(args, options = {}) {
      const child = spawnCli(args, options.env ?? {});
      const io = collect(child);
      child.stdin?.end();
      return {
        stdout: io.stdout,
        stderr: io.stderr,
        async waitFor(pattern, timeoutMs = 10_000) {
          const started = Date.now();
          while (!pattern.test(io.stdout())) {
            if (Date.now() - started > timeoutMs) throw new Error(`dynctl ${args.join(' ')}: no ${pattern} within ${timeoutMs} ms; stdout:\n${io.stdout()}\nstderr:\n${io.stderr()}`);
            if (child.exitCode !== null) throw new Error(`dynctl ${args.join(' ')} exited with ${child.exitCode}; stderr:\n${io.stderr()}`);
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        },
        async stop(signal = 'SIGINT') {
          child.kill(signal);
          return finish(child, io, args.join(' '));
        },
      };
    },
  };
}

export async function cleanupCli(): Promise<void> {
  await Promise.all(
    [...live].map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('close', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.clear();
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
