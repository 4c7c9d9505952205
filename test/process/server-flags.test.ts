import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupServerProcesses, startServerProcess } from '../helpers/server-process.ts';

afterAll(cleanupServerProcesses);

/** The command line a process runs with now (Linux: /proc/<pid>/cmdline). */
const commandLine = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

// `dynctl serve` execs itself in place with a capped young generation (src/cli/server-flags.ts).
describe.runIf(process.platform === 'linux')('the V8 flags of dynctl serve', () => {
  it('runs with --max-semi-space-size=16 in the same process, which stops cleanly on SIGTERM', async () => {
    const server = await startServerProcess();
    const args = commandLine(server.pid);
    expect(args).toContain('--max-semi-space-size=16');
    expect(args.slice(-2)).toEqual([expect.stringMatching(/bin[\\/]dynctl\.js$/), 'serve']);
    expect((await server.api('GET', '/api/health')).status).toBe(200);
    expect(await server.stop('SIGTERM')).toBe(0);
  });

  it('keeps a young generation size the operator chose in NODE_OPTIONS', async () => {
    const server = await startServerProcess({ env: { NODE_OPTIONS: '--max-semi-space-size=32' } });
    expect(commandLine(server.pid).some((arg) => arg.startsWith('--max-semi-space-size'))).toBe(false);
    expect((await server.api('GET', '/api/health')).status).toBe(200);
  });
});
