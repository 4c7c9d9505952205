import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

// Cron jobs over the real API: definitions, each action type run now (POST /:id/run), scheduled runs
// on the real clock, and the outbound policy as seen on save and at run time. Outbound requests only
// ever go to the loopback listener below; refused targets must not reach it at all.
let t: TestServer;
let admin: string;
let target: Server;
let targetPort: number;
let connections = 0;
let hits: string[] = [];
/** The headers of the last request the listener took. */
let lastHeaders: Record<string, string | string[] | undefined> = {};

let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}${(seq++).toString(36)}`;

beforeAll(async () => {
  target = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    lastHeaders = req.headers;
    if (req.url === '/big') return res.end('y'.repeat(10_000));
    if (req.url === '/to-blocked') {
      res.writeHead(302, { location: `http://2130706433:${targetPort}/landed` });
      return res.end();
    }
    if (req.url === '/to-localhost') {
      res.writeHead(302, { location: `http://localhost:${targetPort}/landed` });
      return res.end();
    }
    if (req.url === '/to-self') {
      res.writeHead(302, { location: '/landed' });
      return res.end();
    }
    if (req.url?.startsWith('/fail')) {
      res.statusCode = 503;
      return res.end('down');
    }
    res.end(`pong ${req.method}`);
  });
  target.on('connection', () => connections++);
  target.listen(0, '127.0.0.1');
  await new Promise((resolve) => target.once('listening', resolve));
  targetPort = (target.address() as AddressInfo).port;
  t = await startTestServer();
  admin = await t.adminToken();
});

afterAll(async () => {
  await t.close();
  target.closeAllConnections();
  await new Promise((resolve) => target.close(resolve));
});

beforeEach(() => {
  connections = 0;
  hits = [];
});

const js = (code: string) => ({ type: 'javascript', code });
async function createJob(body: Record<string, unknown>, token = admin) {
  const res = await t.api('POST', '/api/cron', { token, body: { name: unique('job'), schedule: '0 3 * * *', ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}
const runNow = (id: string) => t.api('POST', `/api/cron/${id}/run`, { token: admin });
const putSettings = (body: Record<string, unknown>) => t.api('PUT', '/api/settings', { token: admin, body });

async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`not true within ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('cron job definitions', () => {
  it('a created job shows its fields, defaults and next run time', async () => {
    const job = await createJob({ description: 'nightly', action: js('async function run() {}') });
    expect(job).toMatchObject({ description: 'nightly', schedule: '0 3 * * *', timezone: 'UTC', enabled: true, runAs: null, lastRunAt: null, lastStatus: null, failureCount: 0 });
    const next = new Date(job.nextRunAt);
    expect(next.getUTCHours()).toBe(3);
    expect(next.getTime()).toBeGreaterThan(Date.now());
  });

  it('takes back the job a GET showed, changed where the client changed it; its _id cannot change', async () => {
    const job = await createJob({ description: 'before', action: js('async function run() {}') });
    const read = (await t.api('GET', `/api/cron/${job._id}`, { token: admin })).body.data;
    const back = await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { ...read, description: 'after', failureCount: 9 } });
    expect(back.status, back.text).toBe(200);
    expect(back.body.data).toMatchObject({ _id: job._id, description: 'after', failureCount: 0, action: read.action });
    expect((await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { ...read, _id: 'ffffffffffffffffffffffff' } })).body.error).toBe('Invalid request body: _id cannot be changed');
    const { _id, ...copy } = read;
    const made = await t.api('POST', '/api/cron', { token: admin, body: { ...copy, name: unique('job') } });
    expect(made.status, made.text).toBe(201);
    expect((await t.api('POST', '/api/cron', { token: admin, body: { ...copy, _id, name: unique('job') } })).body.error).toBe('Invalid request body: _id is assigned by the service');
  });

  it('is read by id or by name, listed with paging, changed with PUT and removed with DELETE', async () => {
    const job = await createJob({ action: js('async function run() {}') });
    expect((await t.api('GET', `/api/cron/${job._id}`, { token: admin })).body.data.name).toBe(job.name);
    expect((await t.api('GET', `/api/cron/${job.name}`, { token: admin })).body.data._id).toBe(job._id);
    const list = await t.api('GET', `/api/cron?search=${job.name}&limit=5`, { token: admin });
    expect(list.body.data.map((j: any) => j._id)).toEqual([job._id]);
    expect(list.body.meta).toEqual({ page: 1, limit: 5, total: 1 });

    const put = await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { schedule: '30 8 * * 1', timezone: 'Europe/Berlin', enabled: false } });
    expect(put.status, put.text).toBe(200);
    expect(put.body.data).toMatchObject({ schedule: '30 8 * * 1', timezone: 'Europe/Berlin', enabled: false, nextRunAt: null, name: job.name });

    expect((await t.api('DELETE', `/api/cron/${job._id}`, { token: admin })).status).toBe(200);
    expect((await t.api('GET', `/api/cron/${job._id}`, { token: admin })).status).toBe(404);
  });

  it('accepts a sixth (seconds) field', async () => {
    const job = await createJob({ schedule: '*/10 * * * * *', enabled: false, action: js('async function run() {}') });
    expect(job.schedule).toBe('*/10 * * * * *');
  });

  it.each([
    ['an invalid schedule', { schedule: '61 * * * *' }, 'schedule', /^Invalid request body: schedule "61 \* \* \* \*" is not a valid cron expression: 61 is an invalid expression for minute/],
    ['a schedule of seven fields', { schedule: '* * * * * * *' }, 'schedule', /expected 5 fields \(or 6 with seconds first\) but got 7/],
    ['a word for a schedule', { schedule: 'sometimes' }, 'schedule', /not a valid cron expression/],
    ['an unknown timezone', { timezone: 'Mars/Olympus' }, 'timezone', /timezone "Mars\/Olympus" is not a time zone/],
    ['an unknown action type', { action: { type: 'email' } }, 'action.type', /action.type must be equal to one of the allowed values/],
    ['a javascript action without code', { action: { type: 'javascript' } }, 'action.code', /action.code is required/],
    ['code that does not compile', { action: js('async function run() {') }, 'action.code', /The code does not compile/],
    ['code without run()', { action: js('const x = 1;') }, 'action.code', /must define async function run\(\)/],
    ['an http action with an unknown field', { action: { type: 'http', url: 'https://93.184.215.14/', method: 'GET', retries: 3 } }, 'action.retries', /is not an allowed field/],
    ['an endpoint action path without a slash', { action: { type: 'endpoint', path: 'api/x', method: 'GET' } }, 'action.path', /must match pattern/],
    ['a header value with a line break', { action: { type: 'http', url: 'https://93.184.215.14/', method: 'GET', headers: { 'X-A': 'a\r\nHost: evil' } } }, 'action.headers.X-A', /must match pattern/],
    ['an endpoint action path with a query', { action: { type: 'endpoint', path: '/api/x?a=1', method: 'GET' } }, 'action.path', /must match pattern/],
    ['an endpoint action body that is text, not JSON', { action: { type: 'endpoint', path: '/api/x', method: 'POST', body: '{"title": "from cron",' } }, 'action.body', /action.body/],
    ['a bad name', { name: '../etc' }, 'name', /name must match pattern/],
    ['an unknown field', { colour: 'red' }, 'colour', /colour is not an allowed field/],
    ['a runAs user that does not exist', { runAs: 'nobody-here', action: { type: 'endpoint', path: '/api/x', method: 'GET' } }, 'runAs', /runAs user "nobody-here" does not exist/],
  ])('refuses %s with 400 and creates nothing', async (_label, patch, field, message) => {
    const name = unique('bad');
    const res = await t.api('POST', '/api/cron', { token: admin, body: { name, schedule: '0 3 * * *', action: js('async function run() {}'), ...patch } });
    expect(res.status, res.text).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.error).toMatch(message);
    expect(res.body.details.map((d: any) => d.field)).toContain(field);
    expect((await t.api('GET', `/api/cron?search=${name}`, { token: admin })).body.meta.total).toBe(0);
  });

  it('refuses a second job of the same name (any case) with 409', async () => {
    const job = await createJob({ action: js('async function run() {}') });
    const res = await t.api('POST', '/api/cron', { token: admin, body: { name: job.name.toUpperCase(), schedule: '0 3 * * *', action: js('async function run() {}') } });
    expect(res.status).toBe(409);
  });

  it('refuses a name that looks like an id, on create and on update, since :id takes an id or a name', async () => {
    const job = await createJob({ action: js('async function run() {}') });
    for (const name of ['6b09b089031e919c8cff5629', job._id.toUpperCase()]) {
      const created = await t.api('POST', '/api/cron', { token: admin, body: { name, schedule: '0 3 * * *', action: js('async function run() {}') } });
      expect(created.status).toBe(400);
      expect(created.body).toMatchObject({ error: 'Invalid request body: name must not look like an id (24 hexadecimal characters)', details: [{ field: 'name' }] });
      const renamed = await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { name } });
      expect(renamed.status).toBe(400);
      expect(renamed.body.details).toEqual([{ field: 'name', message: 'must not look like an id (24 hexadecimal characters)' }]);
    }
    expect((await t.api('GET', `/api/cron/${job._id}`, { token: admin })).body.data.name).toBe(job.name);
    // 23 or 25 hex digits, or a 24-character name with another letter, are names like any other.
    for (const name of ['6b09b089031e919c8cff562', '6b09b089031e919c8cff5629a', '6b09b089031e919c8cff562x']) {
      expect((await t.api('POST', '/api/cron', { token: admin, body: { name, schedule: '0 3 * * *', action: js('async function run() {}') } })).status).toBe(201);
    }
  });

  it('refuses a name that looks like an id in a project bundle, as the project file schema says', async () => {
    const res = await t.api('POST', '/api/project/plan', { token: admin, body: { cronJobs: [{ name: '6B09B089031E919C8CFF5629', schedule: '0 3 * * *', action: js('async function run() {}') }] } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('must not look like an id (24 hexadecimal characters)');
  });

  it('needs manage_api', async () => {
    const viewer = await createUserWith(t, ['view', 'manage_users']);
    expect((await t.api('GET', '/api/cron')).status).toBe(401);
    expect((await t.api('GET', '/api/cron', { token: viewer.token })).status).toBe(403);
    expect((await t.api('POST', '/api/cron', { token: viewer.token, body: {} })).status).toBe(403);
  });

  it('writes audit entries for created, updated and deleted jobs', async () => {
    const job = await createJob({ action: js('async function run() {}') });
    await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { description: 'x' } });
    await t.api('DELETE', `/api/cron/${job._id}`, { token: admin });
    const logs = await t.api('GET', `/api/dashboard/logs?search=${job.name}&limit=10`, { token: admin });
    expect(logs.body.data.map((l: any) => l.action).sort()).toEqual(['cron_job_created', 'cron_job_deleted', 'cron_job_updated']);
  });
});

describe('the outbound policy on http actions', () => {
  const spellings = () => [
    `http://127.0.0.1:${targetPort}/`,
    `http://2130706433:${targetPort}/`,
    `http://0x7f000001:${targetPort}/`,
    `http://[::ffff:127.0.0.1]:${targetPort}/`,
    `http://0:${targetPort}/`,
    `http://user@127.0.0.1@evil.invalid:${targetPort}/`,
    `http://localhost:${targetPort}/`,
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'file:///etc/passwd',
  ];

  it('refuses loopback, private and metadata targets in every spelling with 400 naming action.url, and connects to none', async () => {
    for (const url of spellings()) {
      const res = await t.api('POST', '/api/cron', { token: admin, body: { name: unique('blocked'), schedule: '0 3 * * *', action: { type: 'http', url, method: 'GET' } } });
      expect(res.status, url).toBe(400);
      expect(res.body.details, url).toEqual([{ field: 'action.url', message: expect.any(String) }]);
    }
    expect(connections).toBe(0);
  });

  it('reaches a target on outboundAllowList and keeps the status and at most 4 kB of the body', async () => {
    await putSettings({ outboundAllowList: [`127.0.0.1:${targetPort}`] });
    try {
      const job = await createJob({ action: { type: 'http', url: `http://127.0.0.1:${targetPort}/big`, method: 'POST', body: { a: 1 } } });
      const run = await runNow(job._id);
      expect(run.status, run.text).toBe(200);
      expect(run.body.data).toMatchObject({ status: 'ok', trigger: 'manual', error: null, output: { status: 200, truncated: true } });
      expect(run.body.data.output.body).toHaveLength(4096);
      expect(hits).toEqual(['POST /big']);
    } finally {
      await putSettings({ outboundAllowList: [] });
    }
  });

  it('a 5xx answer is a failed run', async () => {
    await putSettings({ outboundAllowList: [`127.0.0.1:${targetPort}`] });
    try {
      const job = await createJob({ action: { type: 'http', url: `http://127.0.0.1:${targetPort}/fail`, method: 'GET' } });
      const run = await runNow(job._id);
      expect(run.body.data).toMatchObject({ status: 'failed', error: `GET http://127.0.0.1:${targetPort}/fail answered 503`, output: { status: 503, body: 'down' } });
      // A query may carry a secret: the error, which the audit log shows too, leaves it out.
      const keyed = await createJob({ action: { type: 'http', url: `http://127.0.0.1:${targetPort}/fail?apikey=QUERYSECRET`, method: 'GET' } });
      expect((await runNow(keyed._id)).body.data).toMatchObject({ status: 'failed', error: `GET http://127.0.0.1:${targetPort}/fail?… answered 503` });
      const logged = await eventually(
        async () => (await t.api('GET', `/api/dashboard/logs?action=cron_run&search=${keyed.name}`, { token: admin })).body,
        (body) => body.meta.total >= 1,
        5_000,
      );
      expect(logged.data[0].message).toContain('?… answered 503');
      expect((await t.api('GET', '/api/dashboard/logs?search=QUERYSECRET', { token: admin })).body.meta.total).toBe(0);
    } finally {
      await putSettings({ outboundAllowList: [] });
    }
  });

  it('does not follow a redirect to a refused target', async () => {
    // Allowed by name only; the redirect names the same listener by a loopback address.
    await putSettings({ outboundAllowList: [`localhost:${targetPort}`] });
    try {
      const job = await createJob({ action: { type: 'http', url: `http://localhost:${targetPort}/to-blocked`, method: 'GET' } });
      const run = await runNow(job._id);
      expect(run.body.data.status).toBe('failed');
      expect(run.body.data.error).toMatch(/http:\/\/127\.0\.0\.1:\d+ is refused: 127\.0\.0\.1 is a loopback address/);
      expect(hits).toEqual(['GET /to-blocked']);
    } finally {
      await putSettings({ outboundAllowList: [] });
    }
  });

  it('a target refused after it was saved fails the run and gets no connection', async () => {
    await putSettings({ outboundAllowList: [`127.0.0.1:${targetPort}`] });
    const job = await createJob({ action: { type: 'http', url: `http://127.0.0.1:${targetPort}/`, method: 'GET' } });
    await putSettings({ outboundAllowList: [] });
    const run = await runNow(job._id);
    expect(run.body.data.status).toBe('failed');
    expect(run.body.data.error).toMatch(/is refused: 127\.0\.0\.1 is a loopback address/);
    expect(connections).toBe(0);
  });
});

describe('credential headers of http actions', () => {
  it('are shown as (secret), sent as stored, kept when (secret) comes back, and refused as (secret) with nothing stored', async () => {
    await putSettings({ outboundAllowList: [`127.0.0.1:${targetPort}`] });
    try {
      const action = { type: 'http', url: `http://127.0.0.1:${targetPort}/report`, method: 'POST', headers: { Authorization: 'Bearer cron-tok', 'X-Source': 'dyn' } };
      const job = await createJob({ action });
      expect(job.action).toEqual({ ...action, headers: { Authorization: '(secret)', 'X-Source': 'dyn' } });
      const shown = await t.api('GET', `/api/cron/${job._id}`, { token: admin });
      const listed = await t.api('GET', `/api/cron?search=${job.name}`, { token: admin });
      expect(shown.body.data.action.headers).toEqual({ Authorization: '(secret)', 'X-Source': 'dyn' });
      expect(shown.text + listed.text).not.toContain('cron-tok');

      expect((await runNow(job._id)).body.data.status).toBe('ok');
      expect(lastHeaders.authorization).toBe('Bearer cron-tok');

      // Saved back as shown, with another URL: the credential stays.
      const saved = await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { action: { ...shown.body.data.action, url: `http://127.0.0.1:${targetPort}/report2` } } });
      expect(saved.status, saved.text).toBe(200);
      expect((await runNow(job._id)).body.data.status).toBe('ok');
      expect(hits.at(-1)).toBe('POST /report2');
      expect(lastHeaders.authorization).toBe('Bearer cron-tok');

      const refused = await t.api('POST', '/api/cron', { token: admin, body: { name: unique('masked'), schedule: '0 3 * * *', action: { ...action, headers: { Authorization: '(secret)' } } } });
      expect(refused.status).toBe(400);
      expect(refused.body.details).toEqual([{ field: 'action.headers.Authorization', message: expect.stringMatching(/^\(secret\) keeps the value stored for this header, and none is stored/) }]);
    } finally {
      await putSettings({ outboundAllowList: [] });
    }
  });
});

describe('headers of http actions', () => {
  const credentials = { Authorization: 'Bearer a', 'X-Custom-Token': 'tok', Cookie: 'sid=1', 'X-Api-Key': 'k' };

  it('drops every credential header (and cookies) on a redirect to another origin, and keeps them on the same origin', async () => {
    // 127.0.0.1 and localhost are two origins of the same listener.
    await putSettings({ outboundAllowList: [`127.0.0.1:${targetPort}`, `localhost:${targetPort}`] });
    try {
      const headers = { ...credentials, 'X-Source': 'dyn' };
      const away = await createJob({ action: { type: 'http', url: `http://127.0.0.1:${targetPort}/to-localhost`, method: 'GET', headers } });
      expect((await runNow(away._id)).body.data.status).toBe('ok');
      expect(hits).toEqual(['GET /to-localhost', 'GET /landed']);
      expect(lastHeaders['x-source']).toBe('dyn');
      for (const name of Object.keys(credentials)) expect(lastHeaders[name.toLowerCase()], name).toBeUndefined();

      hits = [];
      const home = await createJob({ action: { type: 'http', url: `http://127.0.0.1:${targetPort}/to-self`, method: 'GET', headers } });
      expect((await runNow(home._id)).body.data.status).toBe('ok');
      expect(hits).toEqual(['GET /to-self', 'GET /landed']);
      expect(lastHeaders).toMatchObject({ authorization: 'Bearer a', 'x-custom-token': 'tok', cookie: 'sid=1', 'x-source': 'dyn' });
    } finally {
      await putSettings({ outboundAllowList: [] });
    }
  });

  it.each(['Host', 'Transfer-Encoding', 'Content-Length', 'Connection', 'host'])('refuses %s as a webhook does: 400 naming action.headers.<name>, nothing stored', async (name) => {
    await putSettings({ outboundAllowList: [`127.0.0.1:${targetPort}`] });
    try {
      const action = { type: 'http', url: `http://127.0.0.1:${targetPort}/`, method: 'POST', headers: { 'X-Source': 'dyn', [name]: 'evil.example' } };
      const jobName = unique('framing');
      const created = await t.api('POST', '/api/cron', { token: admin, body: { name: jobName, schedule: '0 3 * * *', action } });
      expect(created.status, created.text).toBe(400);
      expect(created.body.error).toBe(`Invalid request body: action.headers.${name}: hop-by-hop and framing headers cannot be set (the request sets them itself)`);
      expect(created.body.details).toEqual([{ field: `action.headers.${name}`, message: expect.any(String) }]);
      expect((await t.api('GET', `/api/cron/${jobName}`, { token: admin })).status).toBe(404);

      const job = await createJob({ action: { ...action, headers: { 'X-Source': 'dyn', 'Content-Type': 'text/plain' } } });
      const updated = await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { action } });
      expect(updated.status, updated.text).toBe(400);
      expect(updated.body.details).toEqual([{ field: `action.headers.${name}`, message: expect.any(String) }]);
      // The same header on a webhook: the same shape of answer.
      const hook = await t.api('POST', '/api/webhooks', { token: admin, body: { name: unique('hook'), url: `http://127.0.0.1:${targetPort}/`, events: ['*'], headers: { [name]: 'x' } } });
      expect(hook.status).toBe(400);
      expect(hook.body.error).toMatch(new RegExp(`^Invalid request body: headers\\.${name}: `));
      expect(hook.body.details).toEqual([{ field: `headers.${name}`, message: expect.any(String) }]);
    } finally {
      await putSettings({ outboundAllowList: [] });
    }
  });
});

describe('javascript actions', () => {
  it('runs run() in a sandbox and keeps its console output and result', async () => {
    const job = await createJob({ action: js('async function run() { console.log("hello", {n: 1}); console.warn("careful"); return { done: 2 + 2 }; }') });
    const run = await runNow(job._id);
    expect(run.body.data).toMatchObject({ status: 'ok', error: null, output: { logs: ['hello {"n":1}', '[warn] careful'], result: '{"done":4}' } });
    const after = await t.api('GET', `/api/cron/${job._id}`, { token: admin });
    expect(after.body.data).toMatchObject({ lastStatus: 'ok', lastError: null, failureCount: 0 });
    expect(after.body.data.lastDurationMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(after.body.data.lastRunAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('sees no host objects', async () => {
    const job = await createJob({ action: js('async function run() { return [typeof process, typeof require, typeof fetch, typeof setTimeout, typeof __dynLog].join(","); }') });
    expect((await runNow(job._id)).body.data.output.result).toBe('"undefined,undefined,undefined,undefined,undefined"');
  });

  it('bounds the console output it keeps', async () => {
    const job = await createJob({ action: js('async function run() { for (let i = 0; i < 1000; i++) console.log("line " + i); }') });
    const { output } = (await runNow(job._id)).body.data;
    expect(output.logs).toHaveLength(100);
    expect(output.logsTruncated).toBe(true);
  });

  it('says the output was cut when one long line was cut, not only when lines were dropped', async () => {
    const long = (await runNow((await createJob({ action: js('async function run() { console.log("z".repeat(1e6)); console.warn("w".repeat(3000)); }') }))._id)).body.data.output;
    expect(long.logs.map((line: string) => line.length)).toEqual([2000, 2007]);
    expect(long.logsTruncated).toBe(true);
    const short = (await runNow((await createJob({ action: js('async function run() { console.log("z".repeat(1999)); }') }))._id)).body.data.output;
    expect(short).toEqual({ logs: ['z'.repeat(1999)], result: 'null' });
  });

  it('a result with no JSON form (circular, BigInt) is a failed run that says so, and keeps no result', async () => {
    const circular = await createJob({ action: js('async function run() { const a = {}; a.a = a; return a; }') });
    const run = (await runNow(circular._id)).body.data;
    expect(run).toMatchObject({ status: 'failed', error: expect.stringMatching(/^The result cannot be stored as JSON: Converting circular structure to JSON/) });
    expect(run.output).toEqual({ logs: [] });
    expect((await t.api('GET', `/api/cron/${circular._id}`, { token: admin })).body.data).toMatchObject({ lastStatus: 'failed', failureCount: 1 });
    const big = (await runNow((await createJob({ action: js('async function run() { return 10n; }') }))._id)).body.data;
    expect(big).toMatchObject({ status: 'failed', error: 'The result cannot be stored as JSON: Do not know how to serialize a BigInt' });
  });

  it('keeps the first 4 kB of the return value, and says when it cut it', async () => {
    const small = (await runNow((await createJob({ action: js('async function run() { return { n: 1 }; }') }))._id)).body.data.output;
    expect(small).toEqual({ logs: [], result: '{"n":1}' });
    const big = (await runNow((await createJob({ action: js('async function run() { return "x".repeat(10000); }') }))._id)).body.data.output;
    expect(big.result).toHaveLength(4096);
    expect(big.resultTruncated).toBe(true);
  });

  it('a throw is a failed run with the message, counted in failureCount', async () => {
    const job = await createJob({ action: js('async function run() { throw new Error("no luck"); }') });
    expect((await runNow(job._id)).body.data).toMatchObject({ status: 'failed', error: 'no luck' });
    await runNow(job._id);
    expect((await t.api('GET', `/api/cron/${job._id}`, { token: admin })).body.data).toMatchObject({ lastStatus: 'failed', lastError: 'no luck', failureCount: 2 });
  });

  it.each([
    ['an endless loop', 'async function run() { while (true) {} }', /time limit of 500 ms/],
    ['an endless loop after an await', 'async function run() { await null; for (;;) {} }', /time limit of 500 ms/],
    ['a promise that never settles', 'async function run() { await new Promise(() => {}); }', /time limit of 500 ms/],
    ['a memory bomb', 'async function run() { const a = []; for (;;) a.push(new Array(100000).fill("x")); }', /memory limit of 16 MB|time limit/],
  ])('%s ends as a failed run and the server keeps going', async (_label, code, error) => {
    await putSettings({ cronTimeoutMs: 500, handlerMemoryMb: 16 });
    try {
      const job = await createJob({ action: js(code) });
      const run = await runNow(job._id);
      expect(run.body.data.status).toBe('failed');
      expect(run.body.data.error).toMatch(error);
      const healthy = await createJob({ action: js('async function run() { return 1; }') });
      expect((await runNow(healthy._id)).body.data.status).toBe('ok');
    } finally {
      await putSettings({ cronTimeoutMs: 30_000, handlerMemoryMb: 64 });
    }
  });
});

describe('endpoint actions', () => {
  let member: Awaited<ReturnType<typeof createUserWith>>;

  beforeAll(async () => {
    member = await createUserWith(t, ['view']);
    const make = (body: Record<string, unknown>) => t.api('POST', '/api/endpoints', { token: admin, body: { name: unique('cron-ep'), schema: { title: { type: 'string' } }, ...body } });
    expect((await make({ path: '/api/cron-target/public', method: 'POST', accessType: 'public' })).status).toBe(201);
    expect((await make({ path: '/api/cron-target/members', method: 'GET', accessType: 'authenticated' })).status).toBe(201);
    // Network rules allow nobody: the internal call skips them.
    expect((await make({ path: '/api/cron-target/fenced', method: 'GET', accessType: 'public', networkAccess: { enabled: true, allowedIpRanges: ['203.0.113.9'] } })).status).toBe(201);
  });

  it('calls a public endpoint anonymously through the engine', async () => {
    const job = await createJob({ action: { type: 'endpoint', path: '/api/cron-target/public', method: 'POST', body: { title: 'from cron' } } });
    const run = await runNow(job._id);
    expect(run.body.data).toMatchObject({ status: 'ok', output: { status: 201 } });
    expect(JSON.parse(run.body.data.output.body).data.title).toBe('from cron');
  });

  it('skips network rules (the call is internal)', async () => {
    const job = await createJob({ action: { type: 'endpoint', path: '/api/cron-target/fenced', method: 'GET' } });
    expect((await runNow(job._id)).body.data).toMatchObject({ status: 'ok', output: { status: 200 } });
  });

  it('enforces the access type: without runAs a protected endpoint answers 401', async () => {
    const job = await createJob({ action: { type: 'endpoint', path: '/api/cron-target/members', method: 'GET' } });
    const run = await runNow(job._id);
    expect(run.body.data).toMatchObject({ status: 'failed', output: { status: 401 } });
  });

  it('runs as the runAs user', async () => {
    const job = await createJob({ runAs: member.login, action: { type: 'endpoint', path: '/api/cron-target/members', method: 'GET' } });
    expect(job.runAs).toBe(member.login);
    expect((await runNow(job._id)).body.data).toMatchObject({ status: 'ok', output: { status: 200 } });
  });

  it('only someone holding at least the runAs user’s permissions may save it', async () => {
    const apiManager = await createUserWith(t, ['manage_api']);
    const res = await t.api('POST', '/api/cron', {
      token: apiManager.token,
      body: { name: unique('escalate'), schedule: '0 3 * * *', runAs: 'admin', action: { type: 'endpoint', path: '/api/cron-target/members', method: 'GET' } },
    });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatch(/cannot make a job run as "admin"/);
    const own = await t.api('POST', '/api/cron', {
      token: apiManager.token,
      body: { name: unique('self'), schedule: '0 3 * * *', runAs: apiManager.login, action: { type: 'endpoint', path: '/api/cron-target/members', method: 'GET' } },
    });
    expect(own.status, own.text).toBe(201);
  });

  it("only someone in the runAs user's groups (or holding manage_users) may save it: a group endpoint answers its members", async () => {
    const admin = await t.adminToken();
    const members = await t.api('POST', '/api/groups', { token: admin, body: { name: unique('Members'), permissions: [] } });
    expect(members.status, members.text).toBe(201);
    const secret = await t.api('POST', '/api/endpoints', { token: admin, body: { name: unique('cron-ep'), path: '/api/cron-target/secret', method: 'GET', accessType: 'group', allowedGroupIds: [members.body.data._id], schema: {} } });
    expect(secret.status, secret.text).toBe(201);
    const alice = unique('alice');
    expect((await t.api('POST', '/api/users', { token: admin, body: { login: alice, password: 'alice-password-1', groupIds: [members.body.data._id] } })).status).toBe(201);
    const ops = await createUserWith(t, ['manage_api']);
    const job = { name: unique('as-alice'), schedule: '0 0 1 1 *', runAs: alice, action: { type: 'endpoint', path: '/api/cron-target/secret', method: 'GET' } };
    const refused = await t.api('POST', '/api/cron', { token: ops.token, body: job });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.error).toBe(`You cannot make a job run as "${alice}": they are in groups you are not in: ${members.body.data.name}`);
    expect((await t.api('GET', `/api/cron?limit=100`, { token: admin })).body.data.some((j: { name: string }) => j.name === job.name)).toBe(false);
    // In the group too, ops could call the endpoint itself: the job may act as alice.
    expect((await t.api('PUT', `/api/users/${ops.userId}`, { token: admin, body: { groupIds: [ops.groupId, members.body.data._id] } })).status).toBe(200);
    const opsAgain = await t.login(ops.login, ops.password);
    const saved = await t.api('POST', '/api/cron', { token: opsAgain.accessToken, body: job });
    expect(saved.status, saved.text).toBe(201);
    expect((await runNow(saved.body.data._id)).body.data).toMatchObject({ status: 'ok', output: { status: 200 } });
  });

  it.each([
    ['javascript', js('async function run() {}')],
    ['http', { type: 'http', url: 'https://93.184.215.14/', method: 'GET' }],
  ])('refuses runAs on a %s action with a 400 naming runAs, on create and when the action changes', async (type, action) => {
    const name = unique('runas');
    const created = await t.api('POST', '/api/cron', { token: admin, body: { name, schedule: '0 3 * * *', runAs: member.login, action } });
    expect(created.status).toBe(400);
    const message = `applies to endpoint actions only (this is a ${type} action); send runAs: null`;
    expect(created.body).toMatchObject({ error: `Invalid request body: runAs ${message}`, details: [{ field: 'runAs', message }] });
    expect((await t.api('GET', `/api/cron/${name}`, { token: admin })).status).toBe(404);

    const job = await createJob({ runAs: member.login, action: { type: 'endpoint', path: '/api/cron-target/members', method: 'GET' } });
    const changed = await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { action } });
    expect(changed.status).toBe(400);
    expect(changed.body.details).toEqual([{ field: 'runAs', message }]);
    const cleared = await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { action, runAs: null } });
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body.data).toMatchObject({ runAs: null, action: { type } });
  });

  it('keeps a job stored with runAs on a javascript action (from before the rule) editable', async () => {
    const job = await createJob({ action: js('async function run() {}') });
    await t.server.services.store.collection('cronjobs').updateOne({ _id: job._id }, { $set: { runAs: member.login } });
    const res = await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { description: 'still editable', enabled: false } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ runAs: member.login, description: 'still editable' });
  });

  it('a path no endpoint serves is a failed run', async () => {
    const job = await createJob({ action: { type: 'endpoint', path: '/api/cron-target/nothing', method: 'GET' } });
    expect((await runNow(job._id)).body.data).toMatchObject({ status: 'failed', output: { status: 404 } });
  });
});

describe('manual runs', () => {
  const busy = (ms: number) => js(`async function run() { const until = Date.now() + ${ms}; while (Date.now() < until) {} return "done"; }`);

  it('runs one at a time per job: while one is under way, another is a 409 naming when it started', async () => {
    const job = await createJob({ action: busy(1500) });
    const answers = await Promise.all(Array.from({ length: 12 }, () => runNow(job._id)));
    const ran = answers.filter((answer) => answer.status === 200);
    expect(ran).toHaveLength(1);
    const run = ran[0]!.body.data;
    expect(run).toMatchObject({ status: 'ok', trigger: 'manual', output: { result: '"done"' } });
    for (const refused of answers.filter((answer) => answer.status !== 200)) {
      expect(refused.status).toBe(409);
      expect(refused.body.error).toBe(`Cron job "${job.name}" is already running on this instance (since ${run.startedAt}); run it again once that run has finished`);
    }
    // Once it has finished, it runs again; a refused run leaves no run record.
    expect((await runNow(job.name)).status).toBe(200);
    expect((await t.api('GET', `/api/cron/${job._id}/runs`, { token: admin })).body.meta.total).toBe(2);
  });

  it('does not hold back other jobs', async () => {
    const slow = await createJob({ action: busy(1000) });
    const other = await createJob({ action: js('async function run() { return 1; }') });
    const running = runNow(slow._id);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await runNow(other._id)).status).toBe(200);
    expect((await running).status).toBe(200);
  });
});

describe('run history', () => {
  it('is paged, and refuses search (400 naming it) rather than ignoring it', async () => {
    const job = await createJob({ action: js('async function run() {}') });
    await runNow(job._id);
    await runNow(job._id);
    const page = await t.api('GET', `/api/cron/${job._id}/runs?page=2&limit=1`, { token: admin });
    expect(page.body.meta).toEqual({ page: 2, limit: 1, total: 2 });
    const searched = await t.api('GET', `/api/cron/${job._id}/runs?search=failed`, { token: admin });
    expect(searched.status).toBe(400);
    expect(searched.body).toMatchObject({ error: 'Unknown query parameter "search"', details: [{ field: 'search', message: 'is not an allowed query parameter' }] });
  });
});

describe('scheduled runs', () => {
  it('an enabled job runs on its schedule; its runs are listed newest first and audited as cron_run', async () => {
    const job = await createJob({ schedule: '* * * * * *', action: js('async function run() { return "tick"; }') });
    const runs = await eventually(
      async () => (await t.api('GET', `/api/cron/${job._id}/runs?limit=10`, { token: admin })).body,
      (body) => body.meta.total >= 2,
      10_000,
    );
    await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { enabled: false } });
    expect(runs.data[0]).toMatchObject({ jobId: job._id, jobName: job.name, trigger: 'schedule', status: 'ok', output: { result: '"tick"' } });
    expect(Date.parse(runs.data[0].scheduledAt) % 1000).toBe(0);
    expect(Date.parse(runs.data[0].startedAt)).toBeGreaterThanOrEqual(Date.parse(runs.data[1].startedAt));
    const logs = await t.api('GET', `/api/dashboard/logs?action=cron_run&search=${job.name}`, { token: admin });
    expect(logs.body.meta.total).toBeGreaterThanOrEqual(2);
    expect(logs.body.data[0].message).toMatch(new RegExp(`Cron job "${job.name}" ran in \\d+ ms \\(schedule\\)`));
  });

  it('a disabled job does not run on its schedule', async () => {
    const job = await createJob({ schedule: '* * * * * *', enabled: false, action: js('async function run() {}') });
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect((await t.api('GET', `/api/cron/${job._id}/runs`, { token: admin })).body.meta.total).toBe(0);
  });

  it('a job enabled later starts running without a restart', async () => {
    const job = await createJob({ schedule: '* * * * * *', enabled: false, action: js('async function run() {}') });
    await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { enabled: true } });
    await eventually(async () => (await t.api('GET', `/api/cron/${job._id}/runs`, { token: admin })).body.meta.total, (n) => n >= 1, 10_000);
    await t.api('DELETE', `/api/cron/${job._id}`, { token: admin });
  });
});

describe('restarts', () => {
  it('jobs start with the server, and fires missed while it was down are skipped, not replayed', async () => {
    const first = await startTestServer();
    const dataDir = first.dataDir;
    let second: TestServer | undefined;
    try {
      const token = await first.adminToken();
      const created = await first.api('POST', '/api/cron', { token, body: { name: 'ticker', schedule: '* * * * * *', action: js('async function run() {}') } });
      expect(created.status, created.text).toBe(201);
      const id = created.body.data._id;
      await eventually(async () => (await first.api('GET', `/api/cron/${id}/runs`, { token })).body.meta.total, (n) => n >= 1, 10_000);
      await first.server.close();
      const downFrom = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const downUntil = Date.now();

      second = await startTestServer({}, dataDir);
      const token2 = await second.adminToken();
      const runs = await eventually(
        async () => (await second!.api('GET', `/api/cron/${id}/runs?limit=100`, { token: token2 })).body.data as any[],
        (list) => list.some((run) => Date.parse(run.scheduledAt) > downUntil),
        10_000,
      );
      // Fires that fell while no server ran (with a second of slack at either end) never ran.
      const replayed = runs.filter((run) => Date.parse(run.scheduledAt) > downFrom + 1000 && Date.parse(run.scheduledAt) < downUntil - 1000);
      expect(replayed).toEqual([]);
    } finally {
      await second?.close();
      const { rmSync } = await import('node:fs');
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 40_000);
});

