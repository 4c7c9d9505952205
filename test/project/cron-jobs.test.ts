import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProject } from '../../src/project/files.ts';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { tempDir, writeFiles } from './helpers.ts';
import { removeSyncDirs, sleep, syncTempDir, waitFor } from './sync-helpers.ts';

/**
 * Cron jobs as project definitions (kinds/cron-job.ts): `cron/*.yaml` files with their problems
 * at file and line, `action.file` code beside the YAML, plan/apply/export over the real API (the
 * scheduler picks applied jobs up), runAs checked against the caller, and the two-way file sync,
 * placeholders kept on write-back and export.
 */
const SECRET = 'cron-secret-token-4711';
process.env.DYN_CRON_TEST_TOKEN = SECRET;

const servers: TestServer[] = [];
afterAll(async () => {
  await Promise.all(servers.splice(0).map((t) => t.close()));
  removeSyncDirs();
});
async function start(env: Record<string, string> = {}, dataDir?: string): Promise<TestServer> {
  const t = await startTestServer(env, dataDir);
  servers.push(t);
  return t;
}
async function call(t: TestServer, method: string, path: string, body?: unknown, token?: string): Promise<any> {
  const res = await t.api(method, path, { token: token ?? (await t.adminToken()), ...(body === undefined ? {} : { body }) });
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
  return res.body.data;
}
const read = (dir: string, rel: string): string => readFileSync(join(dir, rel), 'utf8');

/** The headers a job's HTTP action holds in the store (what it sends; the API shows credentials as `(secret)`). */
function storedHeaders(t: TestServer, name: string): Record<string, string> | undefined {
  const db = new DatabaseSync(join(t.dataDir, 'dyn.db'), { readOnly: true });
  try {
    const docs = db.prepare('SELECT doc FROM cronjobs').all().map((row) => JSON.parse(row.doc as string));
    return docs.find((doc) => doc.name === name)?.action.headers;
  } finally {
    db.close();
  }
}

const NIGHTLY = `name: nightly-report
description: Counts the orders of the day
schedule: 0 3 * * *
timezone: Europe/Berlin
enabled: false
action:
  type: javascript
  file: ./nightly-report.js
`;
const NIGHTLY_JS = 'async function run() {\n  return 42;\n}\n';

describe('cron job files', () => {
  it('cron/*.yaml is read into the bundle, a javascript action’s code from its .js file', () => {
    const dir = tempDir();
    writeFiles(dir, { 'cron/nightly-report.yaml': NIGHTLY, 'cron/nightly-report.js': NIGHTLY_JS, 'cron/README.md': 'not a job' });
    const loaded = loadProject(dir);
    expect(loaded.problems).toEqual([]);
    expect(loaded.bundle.cronJobs).toEqual([
      { name: 'nightly-report', description: 'Counts the orders of the day', schedule: '0 3 * * *', timezone: 'Europe/Berlin', enabled: false, action: { type: 'javascript', code: NIGHTLY_JS } },
    ]);
    expect(loaded.files.get('cronJob:nightly-report')).toMatchObject({ relPath: 'cron/nightly-report.yaml', handlerFile: { ref: './nightly-report.js', relPath: 'cron/nightly-report.js' } });
  });

  it('each problem names its file and line, in the words of the cron API', () => {
    const dir = tempDir();
    writeFiles(dir, {
      'cron/bad.yaml': 'name: bad job\nschedule: 0 3 * *\ntimezone: Mars/Base\naction:\n  type: http\n  url: https://1.1.1.1/\n  method: GET\n  retries: 3\n',
      'cron/broken.yaml': 'name: broken\nschedule: "* * * * *"\naction:\n  type: javascript\n  file: ./broken.js\n',
      'cron/broken.js': 'async function run() {\n  return (\n}\n',
      'cron/twin.yaml': 'name: Broken\nschedule: "* * * * *"\naction:\n  type: endpoint\n  path: /api/x\n  method: GET\n',
      'cron/nothing.yaml': 'name: nothing\nschedule: "* * * * *"\naction:\n  type: javascript\n',
    });
    const problems = loadProject(dir).problems.map(({ file, line, path, message }) => ({ file: file?.slice(dir.length + 1), line, path, message }));
    expect(problems).toEqual([
      { file: 'cron/bad.yaml', line: 1, path: 'name', message: 'must be 1-100 letters, digits, `.`, `_` or `-`, starting with a letter or digit' },
      { file: 'cron/bad.yaml', line: 2, path: 'schedule', message: 'is not a valid cron expression: expected 5 fields (or 6 with seconds first) but got 4' },
      { file: 'cron/bad.yaml', line: 3, path: 'timezone', message: 'must be an IANA time zone such as Europe/Berlin, or an offset from UTC such as +02:00' },
      { file: 'cron/bad.yaml', line: 8, path: 'action.retries', message: expect.stringMatching(/^is not a known field/) },
      // A syntax error in a .js file points into it.
      { file: 'cron/broken.js', line: 3, path: '', message: expect.stringMatching(/^does not compile: Unexpected token/) },
      { file: 'cron/nothing.yaml', line: 3, path: 'action', message: 'needs code (inline) or file (a .js file beside the YAML)' },
      { file: 'cron/twin.yaml', line: 1, path: 'name', message: `duplicates the cron job "broken" in ${join(dir, 'cron/broken.yaml')}` },
    ]);
  });
});

describe('cron jobs through POST /api/project/plan and /apply', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await start();
  });
  const job = (name: string, fields: Record<string, unknown> = {}) => ({ name, schedule: '0 3 * * *', action: { type: 'javascript', code: 'async function run() { return "tick"; }' }, ...fields });

  it('applies a job, which the scheduler then runs; plan names cron changes by name, field by field', async () => {
    const plan = await call(t, 'POST', '/api/project/plan', { cronJobs: [job('Ticker', { schedule: '* * * * * *' })] });
    expect(plan.changes).toEqual([{ kind: 'cronJob', key: 'ticker', action: 'create' }]);
    await call(t, 'POST', '/api/project/apply', { cronJobs: [job('Ticker', { schedule: '* * * * * *' })] });
    const created = await call(t, 'GET', '/api/cron/Ticker');
    expect(created).toMatchObject({ name: 'Ticker', schedule: '* * * * * *', timezone: 'UTC', enabled: true, runAs: null });
    await waitFor('a scheduled run of the applied job', async () => (await call(t, 'GET', '/api/cron/Ticker/runs?limit=5')).length > 0, 10_000, 200);

    const update = await call(t, 'POST', '/api/project/plan', { cronJobs: [job('Ticker', { enabled: false, schedule: '* * * * * *' })] });
    expect(update.changes).toEqual([{ kind: 'cronJob', key: 'ticker', action: 'update', fields: [{ field: 'enabled', from: true, to: false }] }]);
    await call(t, 'POST', '/api/project/apply', { cronJobs: [job('Ticker', { enabled: false, schedule: '* * * * * *' })] });
    expect((await call(t, 'GET', '/api/cron/Ticker')).enabled).toBe(false);
  });

  it('a bad job is a 400 naming it, and nothing is written', async () => {
    const res = await t.api('POST', '/api/project/apply', { token: await t.adminToken(), body: { cronJobs: [job('late', { schedule: '61 * * * *' })] } });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ field: 'cronJobs[late].schedule', message: expect.stringMatching(/^is not a valid cron expression: /) }]);
    expect((await t.api('GET', '/api/cron/late', { token: await t.adminToken() })).status).toBe(404);
  });

  it('runAs: the caller must hold at least that user’s permissions, as through the cron API', async () => {
    const manager = await createUserWith(t, ['manage_api']);
    // runAs is for endpoint actions only.
    const endpoint = { type: 'endpoint', path: '/api/x', method: 'GET' };
    const escalate = await t.api('POST', '/api/project/apply', { token: manager.token, body: { cronJobs: [job('as-admin', { runAs: 'admin', action: endpoint })] } });
    expect(escalate.status).toBe(403);
    expect(escalate.body.error).toMatch(/cannot make a job run as "admin"/);
    expect((await t.api('GET', '/api/cron/as-admin', { token: await t.adminToken() })).status).toBe(404);
    await call(t, 'POST', '/api/project/apply', { cronJobs: [job('as-self', { runAs: manager.login, action: endpoint })] }, manager.token);
    expect((await call(t, 'GET', '/api/cron/as-self')).runAs).toBe(manager.login);
    // Who applied it is on record.
    const logs = await call(t, 'GET', '/api/dashboard/logs?action=cron_job_created&search=as-self');
    expect(logs[0]).toMatchObject({ userId: manager.userId });
    // The admin holds every permission: may set any runAs.
    await call(t, 'POST', '/api/project/apply', { cronJobs: [job('as-admin', { runAs: 'admin', action: endpoint })] });
  });

  it('export carries cron jobs with their placeholders, never the secret they resolved to', async () => {
    const headers = { Authorization: 'Bearer ${env:DYN_CRON_TEST_TOKEN}' };
    await call(t, 'POST', '/api/project/apply', { cronJobs: [job('report', { action: { type: 'http', url: 'https://1.1.1.1/report', method: 'POST', headers } })] });
    // The store holds the value the job sends, which the API never shows…
    expect(storedHeaders(t, 'report')).toEqual({ Authorization: `Bearer ${SECRET}` });
    expect((await call(t, 'GET', '/api/cron/report')).action.headers).toEqual({ Authorization: '(secret)' });
    // …export gives the placeholder back, in JSON and YAML.
    const bundle = await call(t, 'GET', '/api/project/export?format=json');
    expect(bundle.cronJobs.find((j: any) => j.name === 'report')).toEqual({
      name: 'report',
      description: '',
      schedule: '0 3 * * *',
      timezone: 'UTC',
      enabled: true,
      runAs: null,
      action: { type: 'http', url: 'https://1.1.1.1/report', method: 'POST', headers },
    });
    const yaml = await t.api('GET', '/api/project/export?format=yaml', { token: await t.adminToken() });
    expect(yaml.text).toContain('${env:DYN_CRON_TEST_TOKEN}');
    expect(yaml.text).not.toContain(SECRET);
    expect(JSON.stringify(bundle)).not.toContain(SECRET);
  });

  it('shows an HTTP action\'s credential header as (secret) in exports; (secret) keeps it, and with nothing to keep is a 400 in the plan', async () => {
    const action = { type: 'http', url: 'https://1.1.1.1/typed', method: 'POST', headers: { Authorization: 'Bearer typed-cron-token' } };
    await call(t, 'POST', '/api/cron', job('typed-cron', { action }));
    const exported = (await call(t, 'GET', '/api/project/export?format=json')).cronJobs.find((j: any) => j.name === 'typed-cron');
    expect(exported.action.headers).toEqual({ Authorization: '(secret)' });
    expect((await call(t, 'POST', '/api/project/plan', { cronJobs: [exported] })).changes).toEqual([]);
    const res = await t.api('POST', '/api/project/plan', { token: await t.adminToken(), body: { cronJobs: [{ ...exported, name: 'another-cron' }] } });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ field: 'cronJobs[another-cron].action.headers.Authorization', message: expect.stringMatching(/^\(secret\) keeps the value stored/) }]);
    expect(storedHeaders(t, 'typed-cron')).toEqual({ Authorization: 'Bearer typed-cron-token' });
  });

  it('a bundle cannot name a .js file: the code goes inline', async () => {
    const res = await t.api('POST', '/api/project/plan', { token: await t.adminToken(), body: { cronJobs: [job('filed', { action: { type: 'javascript', file: './x.js' } })] } });
    expect(res.status).toBe(400);
    expect(res.body.details).toContainEqual({ field: 'cronJobs[0].action.file', message: 'is read by the project loader; send the code inline as action.code' });
  });
});

describe('the file sync of cron/', () => {
  let t: TestServer;
  let dir: string;
  beforeAll(async () => {
    dir = syncTempDir();
    writeFiles(dir, {
      'endpoints/items.yaml': 'name: Items\npath: /api/cron-sync/items\nmethod: GET\naccessType: public\nschema: {}\n',
      'cron/nightly-report.yaml': NIGHTLY,
      'cron/nightly-report.js': NIGHTLY_JS,
    });
    t = await start({ PROJECT_WATCH: 'on', PROJECT_DIR: dir });
  });

  it('the jobs in the files are applied at startup, the code from the .js file', async () => {
    expect(await call(t, 'GET', '/api/cron/nightly-report')).toMatchObject({ schedule: '0 3 * * *', timezone: 'Europe/Berlin', enabled: false, action: { type: 'javascript', code: NIGHTLY_JS } });
  });

  it('a job file added to cron/ becomes a job; removing it deletes the job', async () => {
    const yaml = '# pings the report service\nname: ping\nschedule: "*/5 * * * *"\naction:\n  type: http\n  url: https://1.1.1.1/ping\n  method: GET\n  headers:\n    Authorization: Bearer ${env:DYN_CRON_TEST_TOKEN} # from the environment\n';
    writeFileSync(join(dir, 'cron', 'ping.yaml'), yaml);
    const admin = await t.adminToken();
    await waitFor('the job from the new file', async () => (await t.api('GET', '/api/cron/ping', { token: admin })).status === 200, 5000, 50);
    expect(storedHeaders(t, 'ping')).toEqual({ Authorization: `Bearer ${SECRET}` });

    // An API change is written back: the placeholder and the comments stay.
    const job = await call(t, 'GET', '/api/cron/ping');
    await call(t, 'PUT', `/api/cron/${job._id}`, { schedule: '*/10 * * * *', action: { ...job.action, timeoutMs: 5000 } });
    await waitFor('the write-back of the API change', () => read(dir, 'cron/ping.yaml').includes('*/10'), 5000, 50);
    const written = read(dir, 'cron/ping.yaml');
    expect(written).toContain('# pings the report service');
    expect(written).toContain('Authorization: Bearer ${env:DYN_CRON_TEST_TOKEN} # from the environment');
    expect(written).toContain('timeoutMs: 5000');
    expect(written).not.toContain(SECRET);

    rmSync(join(dir, 'cron', 'ping.yaml'));
    await waitFor('the job of the removed file deleted', async () => (await t.api('GET', '/api/cron/ping', { token: admin })).status === 404, 5000, 50);
  });

  it('code changed through the API goes to the job’s .js file; a job created through the API gets a file of its own', async () => {
    const job = await call(t, 'GET', '/api/cron/nightly-report');
    const code = 'async function run() {\n  return 43;\n}\n';
    await call(t, 'PUT', `/api/cron/${job._id}`, { action: { type: 'javascript', code } });
    await waitFor('the code written back', () => read(dir, 'cron/nightly-report.js') === code, 5000, 50);
    expect(read(dir, 'cron/nightly-report.yaml')).toBe(NIGHTLY);

    await call(t, 'POST', '/api/cron', { name: 'Made-In-API', schedule: '0 4 * * *', enabled: false, action: { type: 'javascript', code: NIGHTLY_JS } });
    await waitFor('the new job written', () => existsSync(join(dir, 'cron/made-in-api.yaml')), 5000, 50);
    expect(read(dir, 'cron/made-in-api.yaml')).toBe(
      '# yaml-language-server: $schema=https://dynctl.dev/schemas/cron-job.schema.json\nname: Made-In-API\nschedule: 0 4 * * *\nenabled: false\naction:\n  type: javascript\n  file: ./made-in-api.js\n',
    );
    expect(read(dir, 'cron/made-in-api.js')).toBe(NIGHTLY_JS);

    await call(t, 'DELETE', '/api/cron/Made-In-API');
    await waitFor('the files of the deleted job removed', () => !existsSync(join(dir, 'cron/made-in-api.yaml')) && !existsSync(join(dir, 'cron/made-in-api.js')), 5000, 50);
    await sleep(300);
    // The sync did not bring it back.
    expect((await t.api('GET', '/api/cron/Made-In-API', { token: await t.adminToken() })).status).toBe(404);
  });

  it('jobs applied by the file sync are audited as project-sync', async () => {
    const logs = await call(t, 'GET', '/api/dashboard/logs?action=cron_job_created&search=nightly-report');
    expect(logs[0]).toMatchObject({ source: 'project-sync', userId: null });
  });
});

describe('a project directory from before cron jobs were project definitions', () => {
  it('without a cron/ directory, the store’s jobs are written there at startup instead of being deleted', async () => {
    const dataDir = syncTempDir('dyn-cron-data-');
    const dir = syncTempDir();
    writeFiles(dir, { 'endpoints/items.yaml': 'name: Items\npath: /api/cron-adopt/items\nmethod: GET\naccessType: public\nschema: {}\n' });
    const off = await startTestServer({}, dataDir);
    await call(off, 'POST', '/api/cron', { name: 'kept', schedule: '0 5 * * *', enabled: false, action: { type: 'endpoint', path: '/api/cron-adopt/items', method: 'GET' } });
    await off.close();

    const t = await start({ PROJECT_WATCH: 'on', PROJECT_DIR: dir }, dataDir);
    expect((await call(t, 'GET', '/api/cron/kept')).schedule).toBe('0 5 * * *');
    expect(read(dir, 'cron/kept.yaml')).toContain('name: kept\nschedule: 0 5 * * *\nenabled: false\naction:\n  type: endpoint\n  path: /api/cron-adopt/items\n  method: GET\n');
  });
});
