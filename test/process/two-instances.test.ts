import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cleanupServerProcesses,
  JWT_REFRESH_SECRET,
  JWT_SECRET,
  makeDataDir,
  startServerProcess,
  type ServerProcess,
} from '../helpers/server-process.ts';

/**
 * Two `dynctl serve` processes on ONE embedded store (same DATA_DIR, same JWT secrets): what
 * one instance writes, the other must honour. Each test uses its own users and keys, so the
 * tests run side by side against the same pair of processes.
 */
let a: ServerProcess;
let b: ServerProcess;
let adminA: string;
let adminB: string;

beforeAll(async () => {
  const dataDir = makeDataDir();
  const env = { JWT_SECRET, JWT_REFRESH_SECRET };
  // Started together: first start on a fresh store must tolerate a racing peer.
  // One instance watches the project directory, as the README prescribes.
  [a, b] = await Promise.all([startServerProcess({ dataDir, env }), startServerProcess({ dataDir, env: { ...env, PROJECT_WATCH: 'off' } })]);
  [adminA, adminB] = await Promise.all([a.login().then((s) => s.accessToken), b.login().then((s) => s.accessToken)]);
});

afterAll(async () => {
  const started = [a, b].filter((server): server is ServerProcess => server !== undefined);
  const codes = await Promise.all(started.map((server) => server.stop()));
  await cleanupServerProcesses();
  expect(codes.every((code) => code === 0)).toBe(true);
});

let counter = 0;
const unique = (prefix: string): string => `${prefix}${Date.now().toString(36)}${(counter++).toString(36)}`;

async function createUser(on: ServerProcess, token: string, groupIds: string[] = []): Promise<{ id: string; login: string; password: string }> {
  const login = unique('u');
  const password = 'two-instances-pw-1';
  const res = await on.api('POST', '/api/users', { token, body: { login, password, groupIds } });
  expect(res.status).toBe(201);
  return { id: res.body.data._id, login, password };
}

async function viewerGroup(on: ServerProcess, token: string): Promise<string> {
  const res = await on.api('POST', '/api/groups', { token, body: { name: unique('viewers-'), permissions: ['view'] } });
  expect(res.status).toBe(201);
  return res.body.data._id;
}

async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Date.now() - started;
}

describe.concurrent('two instances on one embedded store', () => {
  it('both instances serve, on different ports', () => {
    expect(a.port).not.toBe(b.port);
    expect(a.output()).toContain('(store: embedded)');
    expect(b.output()).toContain('(store: embedded)');
  });

  it('a user created through A can log in through B', async () => {
    const user = await createUser(a, adminA);
    const session = await b.login(user.login, user.password);
    expect(session.user._id).toBe(user.id);
  });

  it('an access token issued by A works on B', async () => {
    const user = await createUser(a, adminA, [await viewerGroup(a, adminA)]);
    const { accessToken } = await a.login(user.login, user.password);
    const res = await b.api('GET', `/api/users/${user.id}`, { token: accessToken });
    expect(res.status).toBe(200);
    expect(res.body.data.login).toBe(user.login);
  });

  it('a group created on A is listed on B', async () => {
    const name = unique('listed-');
    expect((await a.api('POST', '/api/groups', { token: adminA, body: { name } })).status).toBe(201);
    const res = await b.api('GET', `/api/groups?search=${name}`, { token: adminB });
    expect(res.status).toBe(200);
    expect(res.body.data.map((g: { name: string }) => g.name)).toEqual([name]);
  });

  it('logout through A makes the token fail on B within a few seconds', async () => {
    const user = await createUser(a, adminA, [await viewerGroup(a, adminA)]);
    const { accessToken } = await a.login(user.login, user.password);
    // B has seen (and cached) the user before the logout.
    expect((await b.api('GET', '/api/groups', { token: accessToken })).status).toBe(200);
    expect((await a.api('POST', '/api/auth/logout', { token: accessToken })).status).toBe(200);
    await eventually(async () => (await b.api('GET', '/api/groups', { token: accessToken })).status === 401, 5000);
    const after = await b.api('GET', '/api/groups', { token: accessToken });
    expect(after.body.error).toBe('Session has ended; sign in again');
  });

  it('an API key revoked through A fails on B on the very next request', async () => {
    const created = await a.api('POST', '/api/api-keys', { token: adminA, body: { name: unique('key-'), permissions: ['view'] } });
    expect(created.status).toBe(201);
    const apiKey: string = created.body.data.key;
    expect((await b.api('GET', '/api/groups', { apiKey })).status).toBe(200); // B has verified (and cached) it
    expect((await a.api('DELETE', `/api/api-keys/${created.body.data._id}`, { token: adminA })).status).toBe(200);
    const after = await b.api('GET', '/api/groups', { apiKey });
    expect(after.status).toBe(401);
    expect(after.body.error).toBe('Invalid or expired API key');
  });
});

// Settings are global: this runs after the concurrent tests, alone, so no list there is
// affected by the changed page size.
describe('settings across instances', () => {
  it('a settings change through A (defaultPageSize) applies on B on its next request', async () => {
    const before = await b.api('GET', '/api/groups', { token: adminB });
    expect(before.body.meta.limit).toBe(20);
    const put = await a.api('PUT', '/api/settings', { token: adminA, body: { defaultPageSize: 7 } });
    expect(put.status).toBe(200);
    const after = await b.api('GET', '/api/groups', { token: adminB });
    expect(after.body.meta.limit).toBe(7);
    expect((await b.api('GET', '/api/settings', { token: adminB })).body.data.defaultPageSize).toBe(7);
    await a.api('PUT', '/api/settings', { token: adminA, body: { defaultPageSize: 20 } });
  });
});
