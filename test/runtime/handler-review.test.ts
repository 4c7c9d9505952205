// Handlers over real HTTP, for what a black-box review found: late code is held to the time limit,
// a run cannot flood the host with db calls, only real answers (200–599) are sent, an uncaught db
// refusal answers with its own status, and req.user is filled on public endpoints too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PENDING_DB_CALLS } from '../../src/sandbox/handler-types.ts';
import { createUserWith, startTestServer, type ApiResponse, type TestServer } from '../helpers/test-server.ts';

const TIMEOUT_MS = 300;

let t: TestServer;
let admin: string;
beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  await setTimeoutMs(TIMEOUT_MS);
});
afterAll(async () => {
  await t.close();
});

let seq = 0;
async function defineHandler(path: string, code: string, definition: Record<string, unknown> = {}): Promise<void> {
  const res = await t.api('POST', '/api/endpoints', {
    token: admin,
    body: { name: `review ${++seq}`, path, method: 'GET', accessType: 'public', schema: {}, ...definition, handler: { enabled: true, code } },
  });
  expect(res.status, res.text).toBe(201);
}

/** A request with its duration; a reply that never comes fails the test instead of hanging it. */
async function timed(method: string, path: string, options: Parameters<TestServer['api']>[2] = {}): Promise<ApiResponse & { ms: number }> {
  const started = performance.now();
  const res = await Promise.race([
    t.api(method, path, options),
    new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error(`${method} ${path} got no answer within 4 s`)), 4000)),
  ]);
  return { ...res, ms: performance.now() - started };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function setTimeoutMs(handlerTimeoutMs: number): Promise<void> {
  const res = await t.api('PUT', '/api/settings', { token: admin, body: { handlerTimeoutMs } });
  expect(res.status, res.text).toBe(200);
}

describe('code that runs after the handler has answered', () => {
  it('is stopped within the time limit, and the next call is served at once', async () => {
    await defineHandler(
      '/api/review/late-loop',
      `async function handler(req, db) {
        if (req.query.loop) db.find({}).then(() => { while (true) {} });
        return { status: 200, data: req.query.loop ? 'early' : 'next' };
      }`,
    );
    const early = await timed('GET', '/api/review/late-loop?loop=1');
    expect(early.status, early.text).toBe(200);
    expect(early.body.data).toBe('early');
    await sleep(TIMEOUT_MS + 200);
    // A run of the same handler needs the isolate's thread: while late code spins there, it waits out
    // its whole time limit and fails (what the review saw); once the late code is stopped, it is quick.
    const next = await timed('GET', '/api/review/late-loop');
    expect(next.status, next.text).toBe(200);
    expect(next.body.data).toBe('next');
    expect(next.ms).toBeLessThan(TIMEOUT_MS);
  });
});

describe('db calls a handler starts without awaiting them', () => {
  it(`are refused beyond ${MAX_PENDING_DB_CALLS} under way with an error the handler can catch`, async () => {
    await defineHandler(
      '/api/review/burst',
      `async function handler(req, db) {
        const calls = [];
        for (let i = 0; i < ${MAX_PENDING_DB_CALLS + 500}; i++) calls.push(db.findOne({}).then(() => 'ok', (error) => error.message));
        const settled = await Promise.all(calls);
        if (req.query.uncaught) await Promise.all([db.findOne({}), ...Array.from({ length: ${MAX_PENDING_DB_CALLS} }, () => db.findOne({}))]);
        return { status: 200, data: { ok: settled.filter((s) => s === 'ok').length, refused: [...new Set(settled.filter((s) => s !== 'ok'))] } };
      }`,
    );
    const refusal = `db.findOne refused: ${MAX_PENDING_DB_CALLS} db calls of this run are already under way; await some before starting more`;
    // A thousand real reads take longer than this file's short limit on a busy machine.
    await setTimeoutMs(5000);
    try {
      const caught = await timed('GET', '/api/review/burst');
      expect(caught.status, caught.text).toBe(200);
      expect(caught.body.data).toEqual({ ok: MAX_PENDING_DB_CALLS, refused: [refusal] });
      const uncaught = await timed('GET', '/api/review/burst?uncaught=1');
      expect(uncaught.status).toBe(500);
      expect(uncaught.body).toEqual({ success: false, error: refusal });
    } finally {
      await setTimeoutMs(TIMEOUT_MS);
    }
  });

  it('cannot hold the server past the time limit, however many the handler starts', async () => {
    await defineHandler(
      '/api/review/flood',
      `async function handler(req, db) {
        const calls = [];
        for (let i = 0; i < 100000; i++) calls.push(db.findOne({}));
        await Promise.all(calls);
        return { status: 200, data: 'done' };
      }`,
    );
    // The default limit: with a short one the sandbox is stopped before it has queued much at all.
    await setTimeoutMs(5000);
    try {
      const flood = timed('GET', '/api/review/flood');
      await sleep(50);
      const health = await timed('GET', '/api/health');
      expect(health.status).toBe(200);
      expect(health.ms).toBeLessThan(500);
      const res = await flood;
      expect(res.status).toBe(500);
      // Stopped by the cap or by the time limit, whichever the sandbox reaches first.
      expect(res.body.error).toMatch(/already under way|time limit/);
      expect(res.ms).toBeLessThan(3000);
    } finally {
      await setTimeoutMs(TIMEOUT_MS);
    }
  });
});

describe('the status a handler returns', () => {
  it('must be 200–599: an interim 1xx status is a 500 like any invalid one', async () => {
    await defineHandler('/api/review/status', `async function handler(req) { return { status: Number(req.query.s), data: 1 }; }`);
    for (const status of [100, 101, 199, 999]) {
      const res = await timed('GET', `/api/review/status?s=${status}`);
      expect(res.status, `status ${status}`).toBe(500);
      expect(res.body).toEqual({ success: false, error: `Handler result is invalid: status must be an integer from 200 to 599, got ${status}` });
      expect(res.ms).toBeLessThan(1000);
    }
    const lowest = await timed('GET', '/api/review/status?s=200');
    expect(lowest.status).toBe(200);
  });
});

describe('errors a handler does not catch', () => {
  it("answer a unique clash with its 409 and message; other db refusals and the handler's own error are 500s", async () => {
    await defineHandler(
      '/api/review/errors',
      `async function handler(req, db) {
        if (req.query.mode === 'unique') await db.create({ name: 'taken' });
        if (req.query.mode === 'invalid') await db.create({ $set: 1 });
        if (req.query.mode === 'filter') await db.find({ $where: 'return true' });
        if (req.query.mode === 'caught') {
          try { await db.create({ name: 'taken' }); } catch (error) { return { status: 200, data: { status: error.status } }; }
        }
        if (req.query.mode === 'own') throw new Error('my own failure');
        return { status: 201, data: await db.create({ name: req.query.name }) };
      }`,
      { schema: [{ name: 'name', type: 'string', unique: true }] },
    );
    expect((await t.api('GET', '/api/review/errors?name=taken')).status).toBe(201);
    const cases: { mode: string; status: number; error: string | RegExp }[] = [
      { mode: 'unique', status: 409, error: 'name must be unique: another record of /api/review/errors has "taken"' },
      { mode: 'invalid', status: 500, error: /\$set/ },
      { mode: 'filter', status: 500, error: /\$where/ },
      { mode: 'own', status: 500, error: 'my own failure' },
    ];
    for (const { mode, status, error } of cases) {
      const res = await t.api('GET', `/api/review/errors?mode=${mode}`);
      expect(res.status, `${mode}: ${res.text}`).toBe(status);
      expect(res.body.success).toBe(false);
      expect(res.body.error).toMatch(error);
    }
    const caught = await t.api('GET', '/api/review/errors?mode=caught');
    expect(caught.body).toEqual({ success: true, data: { status: 409 } });
  });
});

describe('req.user', () => {
  it('is the caller on a public endpoint when valid credentials are sent; null for none, rejected ones or an API key', async () => {
    const echo = `async function handler(req) { return { status: 200, data: req.user }; }`;
    await defineHandler('/api/review/who', echo);
    await defineHandler('/api/review/who', echo, { method: 'POST' });
    await defineHandler('/api/review/who-signed-in', echo, { accessType: 'authenticated' });
    const user = await createUserWith(t, ['view']);
    const expected = { id: user.userId, login: user.login, groupIds: [user.groupId] };
    const key = await t.api('POST', '/api/api-keys', { token: admin, body: { name: 'review-key', permissions: ['view'] } });
    expect(key.status, key.text).toBe(201);

    // GET is answered by the fast path, POST by the Koa chain: both pass the caller on.
    for (const method of ['GET', 'POST']) {
      const body = method === 'POST' ? {} : undefined;
      const signedIn = await t.api(method, '/api/review/who', { token: user.token, body });
      expect(signedIn.body, method).toEqual({ success: true, data: expected });
      const anonymous = await t.api(method, '/api/review/who', { body });
      expect(anonymous.body, method).toEqual({ success: true, data: null });
      // A public endpoint stays reachable with a bad token, as an anonymous call.
      const rejected = await t.api(method, '/api/review/who', { token: 'not-a-valid-token', body });
      expect(rejected.status, method).toBe(200);
      expect(rejected.body, method).toEqual({ success: true, data: null });
      const byKey = await t.api(method, '/api/review/who', { apiKey: key.body.data.key, body });
      expect(byKey.body, method).toEqual({ success: true, data: null });
    }
    expect((await t.api('GET', '/api/review/who-signed-in', { token: user.token })).body).toEqual({ success: true, data: expected });
  });
});
