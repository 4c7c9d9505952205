// A path change is atomic: the real server is killed with SIGKILL at random moments while
// `PUT /api/endpoints/:id` moves an endpoint with 3,000 records, restarted on the same DATA_DIR,
// and every time all records are on exactly one side, the side the definition names.
import { afterAll, expect, it } from 'vitest';
import { cleanupServerProcesses, makeDataDir, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

afterAll(cleanupServerProcesses);

const RECORDS = 3000;
const ITERATIONS = 5;
const SIDES = ['/api/crash/a', '/api/crash/b'] as const;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function start(dataDir: string): Promise<{ server: ServerProcess; token: string }> {
  // No project directory: this is about the store; files winning at start is another story.
  const server = await startServerProcess({ dataDir, env: { PROJECT_WATCH: 'off' } });
  return { server, token: (await server.login()).accessToken };
}

/** Where the definition is, and how many records each side holds (counted, and as list totals). */
async function sides(server: ServerProcess, token: string, id: string) {
  const definition = await server.api('GET', `/api/endpoints/${id}`, { token });
  expect(definition.status, definition.text).toBe(200);
  const exported = await server.api('GET', '/api/project/export?format=json&data=true', { token });
  expect(exported.status, exported.text).toBe(200);
  const data = (exported.body.data.data ?? {}) as Record<string, unknown[]>;
  const totals = await Promise.all(SIDES.map(async (path) => (await server.api('GET', `${path}?limit=1`)).body.meta.total as number));
  return { path: definition.body.data.path as string, records: SIDES.map((path) => data[path]?.length ?? 0), totals };
}

it(
  'kill -9 at random moments during a path change leaves all 3,000 records on the side the definition is on',
  async () => {
    const dataDir = makeDataDir();
    let { server, token } = await start(dataDir);
    for (const path of SIDES) {
      const reader = await server.api('POST', '/api/endpoints', { token, body: { name: `read ${path}`, path, method: 'GET', accessType: 'public', schema: {} } });
      expect(reader.status, reader.text).toBe(201);
    }
    const mover = await server.api('POST', '/api/endpoints', { token, body: { name: 'mover', path: SIDES[0], method: 'POST', accessType: 'public', schema: { n: { type: 'number' }, label: { type: 'string' } } } });
    expect(mover.status, mover.text).toBe(201);
    const id = mover.body.data._id as string;
    // Records created through the mover are its own (they move with it); 32 requests at a time.
    let next = 0;
    const create = async (): Promise<void> => {
      for (let n = next++; n < RECORDS; n = next++) {
        const res = await server.api('POST', SIDES[0], { body: { n, label: `record ${n}` } });
        if (res.status !== 201) throw new Error(`creating record ${n}: ${res.status} ${res.text}`);
      }
    };
    await Promise.all(Array.from({ length: 32 }, create));
    expect(await sides(server, token, id)).toEqual({ path: SIDES[0], records: [RECORDS, 0], totals: [RECORDS, 0] });

    // How long one move takes here, so the kills spread over before, during and after it.
    const timed = performance.now();
    expect((await server.api('PUT', `/api/endpoints/${id}`, { token, body: { path: SIDES[1] } })).status).toBe(200);
    const moveMs = performance.now() - timed;
    expect(await sides(server, token, id)).toEqual({ path: SIDES[1], records: [0, RECORDS], totals: [0, RECORDS] });

    const outcomes: string[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      const from = (await sides(server, token, id)).path;
      const to = from === SIDES[0] ? SIDES[1] : SIDES[0];
      const put = server.api('PUT', `/api/endpoints/${id}`, { token, body: { path: to } }).catch(() => null);
      // Stratified: each iteration kills within its own slice of [0, 1.2 × moveMs].
      const delay = ((i + Math.random()) / ITERATIONS) * moveMs * 1.2;
      await sleep(delay);
      await server.kill9();
      const answered = await put;
      ({ server, token } = await start(dataDir));
      const after = await sides(server, token, id);
      const onSide = SIDES.indexOf(after.path as (typeof SIDES)[number]);
      outcomes.push(`${Math.round(delay)} ms: ${after.path === to ? 'moved' : 'stayed'}${answered ? ` (answered ${answered.status})` : ''}`);
      expect(onSide, `after a kill at ${delay} ms the definition is on ${after.path}`).toBeGreaterThanOrEqual(0);
      expect(after.records[onSide], outcomes.join('; ')).toBe(RECORDS);
      expect(after.records[1 - onSide], outcomes.join('; ')).toBe(0);
      expect(after.totals[onSide]).toBe(RECORDS);
      expect(after.totals[1 - onSide]).toBe(0);
      // An answered 200 is a promise kept: the move landed.
      if (answered?.status === 200) expect(after.path).toBe(to);
    }
  },
  180_000,
);
