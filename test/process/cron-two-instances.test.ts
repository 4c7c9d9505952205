import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupServerProcesses, JWT_REFRESH_SECRET, JWT_SECRET, makeDataDir, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

// Two `dynctl serve` processes on one embedded store, a job firing every second: each fire runs
// once, on whichever instance claims it; when one instance dies, the other goes on alone.
let a: ServerProcess;
let b: ServerProcess;
let admin: string;

beforeAll(async () => {
  const dataDir = makeDataDir();
  const env = { JWT_SECRET, JWT_REFRESH_SECRET };
  // One instance watches the project directory, as the README prescribes.
  [a, b] = await Promise.all([startServerProcess({ dataDir, env }), startServerProcess({ dataDir, env: { ...env, PROJECT_WATCH: 'off' } })]);
  admin = (await a.login()).accessToken;
});

afterAll(async () => {
  await cleanupServerProcesses();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function runsOf(on: ServerProcess, id: string): Promise<any[]> {
  const res = await on.api('GET', `/api/cron/${id}/runs?limit=100`, { token: admin });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

describe('a cron job on two instances sharing a store', () => {
  it('runs each fire exactly once, and keeps running when one instance is killed mid-run', async () => {
    // Created through A; B learns of it through the revision.
    const created = await a.api('POST', '/api/cron', {
      token: admin,
      // Each run keeps its instance busy for most of the second, so the kill below likely lands mid-run.
      body: { name: 'every-second', schedule: '* * * * * *', action: { type: 'javascript', code: 'async function run() { const end = Date.now() + 600; while (Date.now() < end) {} return 1; }' } },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.data._id;
    await sleep(6000);

    const runs = await runsOf(b, id);
    const fires = runs.map((run) => run.scheduledAt);
    expect(new Set(fires).size).toBe(fires.length);
    // Generous: a loaded machine may skip a fire or two (a fire more than a second late is skipped).
    expect(fires.length).toBeGreaterThanOrEqual(3);
    expect(fires.length).toBeLessThanOrEqual(8);

    await a.kill9();
    const before = runs.length;
    await sleep(4000);
    const after = await runsOf(b, id);
    expect(after.length).toBeGreaterThan(before + 1);
    const all = after.map((run) => run.scheduledAt);
    expect(new Set(all).size).toBe(all.length);
    await b.api('PUT', `/api/cron/${id}`, { token: admin, body: { enabled: false } });
  }, 40_000);
});
