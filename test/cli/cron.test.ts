import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCli, signedInCli, type Cli } from '../helpers/dynctl-cli.ts';
import { cleanupServerProcesses, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

let server: ServerProcess;
let cli: Cli;

beforeAll(async () => {
  server = await startServerProcess();
  cli = await signedInCli(server.url);
  const token = (await server.login()).accessToken;
  const create = (name: string, code: string) =>
    server.api('POST', '/api/cron', { token, body: { name, schedule: '0 4 * * *', timezone: 'Europe/Berlin', action: { type: 'javascript', code } } });
  expect((await create('nightly-report', 'async function run() { console.log("report sent"); }')).status).toBe(201);
  expect((await create('always-fails', 'async function run() { throw new Error("broken on purpose"); }')).status).toBe(201);
  expect((await create('colour-fails', 'async function run() { throw new Error("boom \\u001b[31mRED\\u001b[0m\\nsecond line"); }')).status).toBe(201);
});

afterAll(async () => {
  await cleanupCli();
  await cleanupServerProcesses();
});

describe('dynctl cron', () => {
  it('list shows each job with its schedule, action and next run', async () => {
    const list = await cli.run(['cron', 'list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^NAME\s+SCHEDULE\s+TZ\s+ACTION\s+ENABLED\s+LAST RUN\s+STATUS\s+NEXT RUN$/m);
    expect(list.stdout).toMatch(/^nightly-report\s+0 4 \* \* \*\s+Europe\/Berlin\s+javascript\s+yes\s+-\s+-\s+\d{4}-\d\d-\d\d \d\d:00:00 UTC$/m);
  });

  it('run NAME runs the job now and prints its output; runs NAME lists it', async () => {
    const run = await cli.run(['cron', 'run', 'nightly-report']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/✓ Cron job "nightly-report" ran in \d+ ms/);
    expect(run.stdout).toContain('report sent');

    const runs = await cli.run(['cron', 'runs', 'nightly-report']);
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toMatch(/^STARTED\s+TRIGGER\s+STATUS\s+DURATION\s+ERROR$/m);
    expect(runs.stdout).toMatch(/manual\s+ok\s+\d+ ms/);

    const json = await cli.run(['--json', 'cron', 'list']);
    const jobs = JSON.parse(json.stdout) as Array<{ name: string; lastStatus: string }>;
    expect(jobs.find((job) => job.name === 'nightly-report')?.lastStatus).toBe('ok');
  });

  it('a failed run exits 1 with the error', async () => {
    const run = await cli.run(['cron', 'run', 'always-fails']);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('Cron job "always-fails" failed');
    expect(run.stderr).toContain('the run failed: broken on purpose');
  });

  it("shows a failed run's error on one line with its control characters escaped, colour codes included", async () => {
    const run = await cli.run(['cron', 'run', 'colour-fails']);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(String.raw`failed`);
    expect(run.stdout).toContain(String.raw`boom \u001b[31mRED\u001b[0m\u000asecond line`);
    expect(run.stderr).toContain(String.raw`the run failed: boom \u001b[31mRED\u001b[0m\u000asecond line`);
    expect(run.stdout + run.stderr).not.toContain('\u001b');
  });

  it('an unknown job is a 404 (exit 1)', async () => {
    const run = await cli.run(['cron', 'runs', 'no-such-job']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Cron job not found');
  });
});
