import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJsonLines } from '../../src/project/export-stream.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { ensureUserGroup, exportJson, exportYaml, populateShop, post } from './fixture.ts';

/**
 * Streamed projects: GET /api/project/export?format=jsonl and the chunked JSON export, and
 * POST /api/project/import with a JSON Lines body of any size (BODY_LIMIT bounds each line),
 * staged and committed in one step, with progress lines on request.
 */
const JSONL = 'application/x-ndjson';
let source: TestServer;
const servers: TestServer[] = [];

async function fresh(env: Record<string, string> = {}): Promise<TestServer> {
  const server = await startTestServer(env);
  servers.push(server);
  await ensureUserGroup(server, 'Editors');
  return server;
}

async function exportText(t: TestServer, query: string): Promise<{ status: number; type: string | null; text: string }> {
  const res = await t.api('GET', `/api/project/export?${query}`, { token: await t.adminToken() });
  return { status: res.status, type: res.headers.get('content-type'), text: res.text };
}

async function importLines(t: TestServer, body: string, options: { mode?: string; accept?: string } = {}) {
  const headers: Record<string, string> = { 'content-type': JSONL };
  if (options.accept) headers.accept = options.accept;
  return t.api('POST', `/api/project/import?mode=${options.mode ?? 'merge'}`, { token: await t.adminToken(), rawBody: body, headers });
}

const lines = (text: string): any[] => text.trim().split('\n').map((line) => JSON.parse(line));

/** A JSON Lines body: the shop's definitions and `count` categories (ids made up, 24 hex). */
function bundleWith(definitions: string, count: number, options: { bad?: number; end?: boolean } = {}): string {
  const out = definitions
    .trim()
    .split('\n')
    .filter((line) => !/"kind":"(record|end)"/.test(line))
    .map((line) => line.replace('"data":false', '"data":true'));
  for (let i = 0; i < count; i++) {
    const _id = (0x100000 + i).toString(16).padStart(24, 'a');
    const record = i === options.bad ? { _id: 'nope', title: 'bad' } : { _id, title: `Category ${i} ${'x'.repeat(40)}`, createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() };
    out.push(JSON.stringify({ kind: 'record', path: '/api/shop/categories', record }));
  }
  if (options.end !== false) out.push(JSON.stringify({ kind: 'end', records: count }));
  return `${out.join('\n')}\n`;
}

beforeAll(async () => {
  source = await startTestServer();
  await populateShop(source);
});
afterAll(async () => {
  await Promise.all([source, ...servers].map((server) => server.close()));
});

describe('streamed export', () => {
  it('format=jsonl is a header, one line per definition and settings, one per record, and an end line', async () => {
    const res = await exportText(source, 'format=jsonl&data=true&settings=true');
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^application\/x-ndjson/);
    const all = lines(res.text);
    expect(all[0]).toEqual({ kind: 'header', format: 'dyn-project', version: 1, data: true, settings: true, expectedRecords: 2 });
    expect(all.map((line) => line.kind)).toEqual(['header', 'group', 'group', 'endpoint', 'endpoint', 'endpoint', 'endpoint', 'endpoint', 'settings', 'record', 'record', 'end']);
    expect(all.at(-1)).toEqual({ kind: 'end', records: 2 });
    const bundle = await exportJson(source, '&data=true&settings=true');
    expect(all.filter((line) => line.kind === 'endpoint').map((line) => line.spec)).toEqual(bundle.endpoints);
    expect(all.filter((line) => line.kind === 'record').map((line) => [line.path, line.record])).toEqual(Object.entries(bundle.data).flatMap(([path, records]: [string, any]) => records.map((record: any) => [path, record])));
  });

  it('format=json with data is streamed yet the same text JSON.stringify makes of the bundle', async () => {
    const res = await exportText(source, 'format=json&data=true&settings=true');
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^application\/json/);
    const parsed = JSON.parse(res.text);
    expect(JSON.stringify(parsed)).toBe(res.text);
    expect(Object.keys(parsed.data)).toEqual(['groups', 'endpoints', 'cronJobs', 'webhooks', 'data', 'settings']);
    expect(Object.keys(parsed.data.data)).toEqual(['/api/shop/categories', '/api/shop/products']);
  });

  it('gives the event loop a turn after each page of records, and says how many records to expect from the counters', async () => {
    const target = await fresh();
    const definitions = (await exportText(source, 'format=jsonl')).text;
    expect((await importLines(target, bundleWith(definitions, 2500), { mode: 'replace' })).status).toBe(200);
    // Read in this process with no I/O in between: without those turns, the whole export would
    // run in microtasks and a client reading as fast would hold up every other request until it ended.
    let turns = 0;
    let spinning = true;
    const spin = (): void => {
      turns++;
      if (spinning) setImmediate(spin);
    };
    setImmediate(spin);
    const chunks: string[] = [];
    try {
      for await (const chunk of exportJsonLines(target.server.services, { data: true, settings: false })) chunks.push(chunk);
    } finally {
      spinning = false;
    }
    const all = lines(chunks.join(''));
    expect(all[0]).toMatchObject({ kind: 'header', expectedRecords: 2500 });
    expect(all.at(-1)).toEqual({ kind: 'end', records: 2500 });
    expect(turns).toBeGreaterThanOrEqual(3);
  });

  it('refuses an unknown format', async () => {
    const res = await exportText(source, 'format=csv');
    expect(res.status).toBe(400);
  });
});

describe('streamed import', () => {
  it('an exported JSON Lines file imported into a fresh server gives the same export', async () => {
    const text = (await exportText(source, 'format=jsonl&data=true&settings=true')).text;
    const target = await fresh();
    const res = await importLines(target, text, { mode: 'replace' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ mode: 'replace', applied: true, records: 2, settings: true, summary: { create: 7, update: 0, delete: 0 } });
    expect((await exportText(target, 'format=jsonl&data=true&settings=true')).text).toBe(text);
    expect(await exportYaml(target, 'data=true&settings=true')).toBe(await exportYaml(source, 'data=true&settings=true'));
    // Counters follow: the list total counts the imported records.
    expect((await target.api('GET', '/api/shop/categories')).body.meta.total).toBe(1);
  });

  it('takes a body far larger than BODY_LIMIT, which still bounds an ordinary bundle', async () => {
    const target = await fresh({ BODY_LIMIT: '16kb' });
    const definitions = (await exportText(source, 'format=jsonl')).text;
    const body = bundleWith(definitions, 3000);
    expect(Buffer.byteLength(body)).toBeGreaterThan(200 * 1024);
    const res = await importLines(target, body, { mode: 'replace' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.records).toBe(3000);
    const list = await target.api('GET', '/api/shop/categories?limit=1');
    expect(list.body.meta.total).toBe(3000);
    expect(list.body.data[0].title).toMatch(/^Category 0 /);

    const asJson = await post(target, '/api/project/import', { ...(await exportJson(source)), data: { '/api/shop/categories': lines(body).filter((line) => line.kind === 'record').map((line) => line.record) } });
    expect(asJson.status).toBe(413);
  });

  it('a bad line in the middle is a 400 naming the line, and the store keeps its records', async () => {
    const target = await fresh();
    const definitions = (await exportText(source, 'format=jsonl')).text;
    expect((await importLines(target, bundleWith(definitions, 10), { mode: 'replace' })).status).toBe(200);
    const before = await exportText(target, 'format=jsonl&data=true');

    const body = bundleWith(definitions, 2500, { bad: 1500 });
    const res = await importLines(target, body, { mode: 'replace' });
    expect(res.status).toBe(400);
    const line = body.split('\n').findIndex((text) => text.includes('"nope"')) + 1;
    expect(res.body.error).toBe(`Invalid bundle: line ${line}: record._id must be a 24-character hex id`);
    expect(res.body.details).toEqual([{ field: `line ${line}: record._id`, message: 'must be a 24-character hex id' }]);
    expect((await exportText(target, 'format=jsonl&data=true')).text).toBe(before.text);
    expect(await target.server.services.store.collection('importrecords').count({})).toBe(0);
  });

  it('refuses a body cut off before its end line, an id given twice, and records on a path nothing serves', async () => {
    const target = await fresh();
    const definitions = (await exportText(source, 'format=jsonl')).text;
    const cut = await importLines(target, bundleWith(definitions, 1200, { end: false }), { mode: 'replace' });
    expect(cut.status).toBe(400);
    expect(cut.body.error).toMatch(/ended without its end line/);

    const twice = bundleWith(definitions, 1500).replace(/"_id":"aaaaaaaaaaaaaaaaaa100001"/, '"_id":"aaaaaaaaaaaaaaaaaa1005db"');
    const repeated = await importLines(target, twice, { mode: 'replace' });
    expect(repeated.status).toBe(400);
    const later = twice.split('\n').findLastIndex((text) => text.includes('aaaaaaaaaaaaaaaaaa1005db')) + 1;
    expect(repeated.body.error).toBe(`Invalid bundle: line ${later}: record._id repeats the id aaaaaaaaaaaaaaaaaa1005db`);

    const elsewhere = `${JSON.stringify({ kind: 'header', format: 'dyn-project', version: 1 })}\n${JSON.stringify({ kind: 'record', path: '/api/nowhere', record: { title: 'x' } })}\n{"kind":"end"}\n`;
    const orphan = await importLines(target, elsewhere);
    expect(orphan.status).toBe(400);
    expect(orphan.body.error).toBe('Invalid bundle: line 2 path: no endpoint in the bundle or the store serves /api/nowhere');

    const noHeader = await importLines(target, '{"kind":"end"}\n');
    expect(noHeader.status).toBe(400);
    expect(noHeader.body.error).toMatch(/^Invalid bundle: line 1 must be the header/);
    expect((await exportJson(target)).endpoints).toEqual([]);
  });

  it('answers a bad line at the start of a big body while the body is still being sent', async () => {
    const target = await fresh();
    const record = JSON.stringify({ kind: 'record', path: '/api/shop/categories', record: { title: 'z'.repeat(100) } });
    const body = `${JSON.stringify({ kind: 'header', format: 'dyn-project', version: 1 })}\n{not json\n${`${record}\n`.repeat(40_000)}`;
    const res = await importLines(target, body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^Invalid bundle: line 2 is not valid JSON \(/);
    expect((await target.api('GET', '/api/health')).status).toBe(200);
  });

  it('a line longer than BODY_LIMIT is a 413 naming the line', async () => {
    const target = await fresh({ BODY_LIMIT: '16kb' });
    const body = `${JSON.stringify({ kind: 'header', format: 'dyn-project', version: 1 })}\n${JSON.stringify({ kind: 'settings', settings: { note: 'x'.repeat(20_000) } })}\n{"kind":"end"}\n`;
    const res = await importLines(target, body);
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('Line 2 is longer than the limit of 16384 bytes');
  });

  it('answers progress lines and then the result with Accept: application/x-ndjson', async () => {
    const target = await fresh();
    const definitions = (await exportText(source, 'format=jsonl')).text;
    const res = await importLines(target, bundleWith(definitions, 2500), { mode: 'replace', accept: JSONL });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const answer = lines(res.text);
    const progress = answer.filter((line) => line.progress).map((line) => line.progress.records);
    expect(progress).toEqual([1000, 2000, 2500]);
    expect(answer.at(-1)).toMatchObject({ success: true, data: { mode: 'replace', records: 2500 } });
  });

  it('a failure after progress started is the last line, with its status', async () => {
    const target = await fresh();
    const definitions = (await exportText(source, 'format=jsonl')).text;
    const res = await importLines(target, bundleWith(definitions, 2500, { bad: 1500 }), { mode: 'replace', accept: JSONL });
    expect(res.status).toBe(200);
    const answer = lines(res.text);
    expect(answer[0]).toEqual({ progress: { records: 1000, bytes: expect.any(Number) } });
    expect(answer.at(-1)).toMatchObject({ success: false, status: 400, error: expect.stringMatching(/^Invalid bundle: line \d+: record\._id/) });
    expect(await exportJson(target, '&data=true')).toEqual({ groups: [], endpoints: [], cronJobs: [], webhooks: [], data: {} });
  });

  it('a client that disconnects mid-import leaves the old state', async () => {
    const target = await fresh();
    const definitions = (await exportText(source, 'format=jsonl')).text;
    expect((await importLines(target, bundleWith(definitions, 10), { mode: 'replace' })).status).toBe(200);
    const before = await exportText(target, 'format=jsonl&data=true');

    const body = bundleWith(definitions, 3000);
    const token = await target.adminToken();
    const url = new URL('/api/project/import?mode=replace', target.url);
    await new Promise<void>((resolve) => {
      const req = request(url, { method: 'POST', headers: { 'content-type': JSONL, authorization: `Bearer ${token}` } });
      req.on('error', () => resolve());
      req.on('response', () => resolve());
      req.write(body.slice(0, Math.floor(body.length * 0.8)));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 300);
    });
    // Project writes run one at a time: this plan waits until the cut import has cleaned up.
    expect((await post(target, '/api/project/plan', { groups: [], endpoints: [] })).status).toBe(200);
    expect((await exportText(target, 'format=jsonl&data=true')).text).toBe(before.text);
    expect(await target.server.services.store.collection('importrecords').count({})).toBe(0);
  });
});
