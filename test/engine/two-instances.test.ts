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
 * Two `dynctl serve` processes on ONE embedded store directory (same DATA_DIR and JWT secrets,
 * BCRYPT_ROUNDS=4): a definition saved through one is served by the other on its next request,
 * without a restart, and both serve the same records.
 */
let a: ServerProcess;
let b: ServerProcess;
let adminA: string;

beforeAll(async () => {
  const dataDir = makeDataDir();
  const env = { JWT_SECRET, JWT_REFRESH_SECRET, BCRYPT_ROUNDS: '4' };
  // One after the other, so the second start never races the first one's seeding.
  a = await startServerProcess({ dataDir, env });
  // One instance watches the project directory, as the README prescribes; two watchers race
  // each other's write-back (one may restore a file the other is about to remove).
  b = await startServerProcess({ dataDir, env: { ...env, PROJECT_WATCH: 'off' } });
  adminA = (await a.login()).accessToken;
});

afterAll(async () => {
  const started = [a, b].filter((server): server is ServerProcess => server !== undefined);
  const codes = await Promise.all(started.map((server) => server.stop()));
  await cleanupServerProcesses();
  expect(codes).toEqual(started.map(() => 0));
});

let seq = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${(seq++).toString(36)}`;

async function define(on: ServerProcess, body: Record<string, unknown>): Promise<string> {
  const res = await on.api('POST', '/api/endpoints', { token: adminA, body: { name: unique('two-'), accessType: 'public', ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body.data._id;
}

describe('dynamic endpoints across two instances on one embedded store', () => {
  it('definitions, updates, records and deletes made on one instance apply on the other at once', async () => {
    const path = `/api/two/${unique('items')}`;

    // B has built its route table already and does not know the path yet.
    expect((await b.api('GET', path)).status).toBe(404);
    expect((await a.api('GET', path)).status).toBe(404);

    // Created through A → served by B on its next request.
    const getId = await define(a, { path, method: 'GET', schema: { title: { type: 'string' } } });
    const postId = await define(a, { path, method: 'POST', schema: { title: { type: 'string', required: true } } });
    const emptyOnB = await b.api('GET', path);
    expect(emptyOnB.status).toBe(200);
    expect(emptyOnB.body).toEqual({ success: true, data: [], meta: { page: 1, limit: 20, total: 0 } });

    // The schema gains a field through A → B validates with it on its next request.
    expect((await b.api('POST', path, { body: { title: 'first', color: 'red' } })).status).toBe(400);
    const updated = await a.api('PUT', `/api/endpoints/${postId}`, {
      token: adminA,
      body: { schema: { title: { type: 'string', required: true }, color: { type: 'string', enum: ['red', 'blue'] } } },
    });
    expect(updated.status, updated.text).toBe(200);
    const created = await b.api('POST', path, { body: { title: 'first', color: 'red' } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data).toMatchObject({ title: 'first', color: 'red' });
    // The new schema is the one B uses, enum included.
    expect((await b.api('POST', path, { body: { title: 'second', color: 'green' } })).status).toBe(400);

    // A record posted through B is listed (and readable) through A.
    const listed = await a.api('GET', path);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([created.body.data]);
    expect(listed.body.meta.total).toBe(1);
    expect((await a.api('GET', `${path}/${created.body.data._id}`)).body.data).toEqual(created.body.data);

    // Deleting the definition through A → B no longer serves GET next (405: POST still is).
    expect((await a.api('DELETE', `/api/endpoints/${getId}`, { token: adminA })).status).toBe(200);
    const gone = await b.api('GET', path);
    expect(gone.status).toBe(405);
    expect(gone.body.success).toBe(false);
    expect((await b.api('GET', `${path}/${created.body.data._id}`)).status).toBe(404);
    // The POST definition is still served by both.
    expect((await b.api('POST', path, { body: { title: 'third', color: 'blue' } })).status).toBe(201);

    // Calls served by either instance are counted on the shared definition.
    const started = Date.now();
    let callCount = 0;
    while (Date.now() - started < 3000) {
      callCount = (await a.api('GET', `/api/endpoints/${postId}`, { token: adminA })).body.data.callCount;
      if (callCount >= 4) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(callCount).toBe(4);
  });

  it('disabling a definition through A stops B from serving it; enabling brings it back', async () => {
    const path = `/api/two/${unique('toggle')}`;
    const id = await define(a, { path, method: 'GET', schema: {} });
    expect((await b.api('GET', path)).status).toBe(200);
    expect((await a.api('PUT', `/api/endpoints/${id}`, { token: adminA, body: { enabled: false } })).status).toBe(200);
    expect((await b.api('GET', path)).status).toBe(404);
    expect((await a.api('PUT', `/api/endpoints/${id}`, { token: adminA, body: { enabled: true, accessType: 'authenticated' } })).status).toBe(200);
    expect((await b.api('GET', path)).status).toBe(401);
    // A's access token works on B: same secrets.
    expect((await b.api('GET', path, { token: adminA })).status).toBe(200);
  });

  it('endpoint-group network rules changed through A apply on B', async () => {
    const group = await a.api('POST', '/api/endpoints/groups', {
      token: adminA,
      body: { name: unique('two-group-'), networkAccess: { enabled: true, allowedIpRanges: ['127.0.0.1'] } },
    });
    expect(group.status).toBe(201);
    const path = `/api/two/${unique('net')}`;
    await define(a, { path, method: 'GET', schema: {}, groupId: group.body.data._id });
    expect((await b.api('GET', path)).status).toBe(200);
    const put = await a.api('PUT', `/api/endpoints/groups/${group.body.data._id}`, { token: adminA, body: { networkAccess: { allowedIpRanges: ['203.0.113.9'] } } });
    expect(put.status).toBe(200);
    const denied = await b.api('GET', path);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ success: false, error: 'Forbidden: network access denied' });
  });
});
