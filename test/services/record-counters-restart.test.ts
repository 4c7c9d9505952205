import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * List totals after a restart: the embedded store does not recount its per-path counters at
 * start (they change in the transaction of each insert and delete), so totals must stay exact
 * across a restart for plain paths, for paths whose records expire, and for a path that got
 * expiring records by a path change.
 */
const dir = mkdtempSync(join(tmpdir(), 'dyn-counters-'));
const servers: TestServer[] = [];

afterAll(async () => {
  for (const server of servers) await server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function start(): Promise<{ t: TestServer; token: string }> {
  const t = await startTestServer({}, dir);
  servers.push(t);
  return { t, token: await t.adminToken() };
}

async function define(t: TestServer, token: string, path: string, method: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await t.api('POST', '/api/endpoints', { token, body: { name: `${method} ${path}`, path, method, accessType: 'public', schema: { title: { type: 'string' } }, ...extra } });
  expect(res.status).toBe(201);
  return res.body.data._id;
}

async function create(t: TestServer, path: string, title: string): Promise<string> {
  const res = await t.api('POST', path, { body: { title } });
  expect(res.status).toBe(201);
  return res.body.data._id;
}

const total = async (t: TestServer, path: string): Promise<number> => (await t.api('GET', `${path}?limit=1`)).body.meta.total;

describe('record totals across a restart', () => {
  it('stay exact for plain paths, expiring paths and a path that received expiring records by a move', async () => {
    const first = await start();
    const { t, token } = first;
    await define(t, token, '/api/keep', 'GET');
    await define(t, token, '/api/keep', 'POST');
    await define(t, token, '/api/keep', 'DELETE');
    await define(t, token, '/api/exp', 'GET', { retentionDays: 1 });
    await define(t, token, '/api/exp', 'POST', { retentionDays: 1 });
    await define(t, token, '/api/moved-new', 'GET');
    const mover = await define(t, token, '/api/moved-old', 'POST', { retentionDays: 1 });

    const kept = [await create(t, '/api/keep', 'a'), await create(t, '/api/keep', 'b'), await create(t, '/api/keep', 'c')];
    expect((await t.api('DELETE', `/api/keep/${kept[0]}`)).status).toBe(200);
    const expiring = [await create(t, '/api/exp', 'a'), await create(t, '/api/exp', 'b'), await create(t, '/api/exp', 'c')];
    const movedIds = [await create(t, '/api/moved-old', 'a'), await create(t, '/api/moved-old', 'b')];
    // The POST definition moves to the new path, and its records with it.
    const updated = await t.api('PUT', `/api/endpoints/${mover}`, { token, body: { path: '/api/moved-new' } });
    expect(updated.status).toBe(200);
    expect(await total(t, '/api/moved-new')).toBe(2);

    // Expiry removes records without going through delete.
    const records = t.server.services.store.collection('endpointdatas');
    const past = new Date(Date.now() - 1000);
    await records.updateOne({ _id: expiring[0] as string }, { $set: { expiresAt: past } });
    await records.updateOne({ _id: movedIds[0] as string }, { $set: { expiresAt: past } });
    expect(await t.server.services.store.sweepExpired()).toBe(2);
    await t.close();
    servers.splice(servers.indexOf(t), 1);

    const second = await start();
    expect(await total(second.t, '/api/keep')).toBe(2);
    expect(await total(second.t, '/api/exp')).toBe(2);
    expect(await total(second.t, '/api/moved-new')).toBe(1);
    // Writes after the restart keep the totals in step.
    await create(second.t, '/api/keep', 'd');
    await create(second.t, '/api/exp', 'd');
    expect(await total(second.t, '/api/keep')).toBe(3);
    expect(await total(second.t, '/api/exp')).toBe(3);
    expect((await second.t.api('GET', '/api/keep?limit=100')).body.data).toHaveLength(3);
  });
});
