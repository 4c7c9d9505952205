// Handler isolates are released: editing, disabling or deleting a handler endpoint disposes its
// compiled isolate when the route table is rebuilt, and a request in flight on the old isolate
// still finishes. Counts come from the running server (same process) and the sandbox's counter.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveIsolateCount } from '../../src/sandbox/handler-runner.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

let t: TestServer;
let admin: string;
beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  // A plain endpoint whose calls make the engine notice a new revision and rebuild its table.
  const plain = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'plain', path: '/api/iso/plain', method: 'GET', accessType: 'public', schema: {} } });
  expect(plain.status, plain.text).toBe(201);
});
afterAll(async () => {
  await t.close();
});

const handlerCode = (answer: string, busyMs = 0) =>
  `async function handler() { const end = Date.now() + ${busyMs}; while (Date.now() < end) {} return { status: 200, data: ${JSON.stringify(answer)} }; }`;

async function defineHandler(path: string, code: string): Promise<string> {
  const res = await t.api('POST', '/api/endpoints', {
    token: admin,
    body: { name: `iso ${path}`, path, method: 'GET', accessType: 'public', schema: {}, handler: { enabled: true, code } },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data._id as string;
}

async function editHandler(id: string, code: string): Promise<void> {
  const res = await t.api('PUT', `/api/endpoints/${id}`, { token: admin, body: { handler: { code } } });
  expect(res.status, res.text).toBe(200);
}

/** Any dynamic request: the route table is rebuilt on the first one after a change. */
async function touchRoutes(): Promise<void> {
  expect((await t.api('GET', '/api/iso/plain')).status).toBe(200);
}

describe('handler isolates are released', () => {
  it('editing a handler ten times leaves one live isolate, and deleting the endpoint releases it', async () => {
    await touchRoutes();
    const baseline = liveIsolateCount();
    const id = await defineHandler('/api/iso/edited', handlerCode('v0'));
    expect((await t.api('GET', '/api/iso/edited')).body.data).toBe('v0');
    expect(liveIsolateCount()).toBe(baseline + 1);
    for (let version = 1; version <= 10; version++) {
      await editHandler(id, handlerCode(`v${version}`));
      // Every other edit is never called: the rebuild alone must release the old isolate.
      if (version % 2 === 0) expect((await t.api('GET', '/api/iso/edited')).body.data).toBe(`v${version}`);
      else await touchRoutes();
      expect(liveIsolateCount()).toBeLessThanOrEqual(baseline + 1);
    }
    expect((await t.api('DELETE', `/api/endpoints/${id}`, { token: admin })).status).toBe(200);
    await touchRoutes();
    expect(liveIsolateCount()).toBe(baseline);
  });

  it('disabling the handler or the endpoint releases its isolate', async () => {
    await touchRoutes();
    const baseline = liveIsolateCount();
    const handlerOff = await defineHandler('/api/iso/handler-off', handlerCode('a'));
    const endpointOff = await defineHandler('/api/iso/endpoint-off', handlerCode('b'));
    await t.api('GET', '/api/iso/handler-off');
    await t.api('GET', '/api/iso/endpoint-off');
    expect(liveIsolateCount()).toBe(baseline + 2);
    expect((await t.api('PUT', `/api/endpoints/${handlerOff}`, { token: admin, body: { handler: { enabled: false } } })).status).toBe(200);
    expect((await t.api('PUT', `/api/endpoints/${endpointOff}`, { token: admin, body: { enabled: false } })).status).toBe(200);
    await touchRoutes();
    expect(liveIsolateCount()).toBe(baseline);
  });

  it('a request in flight on the old isolate finishes normally; the isolate goes when it has', async () => {
    await touchRoutes();
    const baseline = liveIsolateCount();
    // The handler records that it started, then works for a while on the old code.
    const slow = (answer: string) =>
      `async function handler(req, db) { await db.create({ started: true }); const end = Date.now() + 1500; while (Date.now() < end) {} return { status: 200, data: ${JSON.stringify(answer)} }; }`;
    const list = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'iso slow list', path: '/api/iso/slow', method: 'GET', accessType: 'public', schema: {} } });
    expect(list.status, list.text).toBe(201);
    const res = await t.api('POST', '/api/endpoints', {
      token: admin,
      body: { name: 'iso slow', path: '/api/iso/slow', method: 'POST', accessType: 'public', schema: {}, handler: { enabled: true, code: slow('old') } },
    });
    expect(res.status, res.text).toBe(201);
    const inFlight = t.api('POST', '/api/iso/slow', { body: {} });
    const started = Date.now();
    while ((await t.api('GET', '/api/iso/slow')).body.meta.total === 0) {
      expect(Date.now() - started).toBeLessThan(10_000);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await editHandler(res.body.data._id, slow('new'));
    await touchRoutes();
    const old = await inFlight;
    expect(old.status, old.text).toBe(200);
    expect(old.body).toEqual({ success: true, data: 'old' });
    expect(liveIsolateCount()).toBe(baseline);
    expect((await t.api('POST', '/api/iso/slow', { body: {} })).body).toEqual({ success: true, data: 'new' });
    expect(liveIsolateCount()).toBe(baseline + 1);
  });
});
