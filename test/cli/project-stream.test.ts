import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCli, makeCli, type Cli } from '../helpers/dynctl-cli.ts';
import { ADMIN_PASSWORD, cleanupServerProcesses, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

/**
 * dynctl export / import with JSON Lines files (`.jsonl`, `.ndjson`): streamed both ways, into a
 * server whose BODY_LIMIT is far smaller than the file.
 */
const RECORDS = 2500;
let server: ServerProcess;
let cli: Cli;
let work: string;

async function login(target: ServerProcess): Promise<Cli> {
  const client = makeCli();
  const result = await client.run(['login', '--server', target.url, '--login', 'admin', '--password-stdin'], { input: ADMIN_PASSWORD });
  expect(result.code, result.stderr).toBe(0);
  return client;
}

beforeAll(async () => {
  server = await startServerProcess();
  const token = (await server.login()).accessToken;
  const endpoint = await server.api('POST', '/api/endpoints', { token, body: { name: 'Items', path: '/api/items', method: 'POST', accessType: 'public', schema: { title: { type: 'string' } } } });
  expect(endpoint.status, endpoint.text).toBe(201);
  // Records seeded through the streamed import itself (a few thousand POSTs would be slow).
  const lines = [JSON.stringify({ kind: 'header', format: 'dyn-project', version: 1, data: true })];
  for (let i = 0; i < RECORDS; i++) lines.push(JSON.stringify({ kind: 'record', path: '/api/items', record: { title: `Item ${i} ${'y'.repeat(30)}` } }));
  lines.push(JSON.stringify({ kind: 'end', records: RECORDS }));
  const seeded = await fetch(`${server.url}/api/project/import`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${token}` }, body: lines.join('\n') });
  expect(seeded.status, await seeded.clone().text()).toBe(200);
  cli = await login(server);
  work = mkdtempSync(join(tmpdir(), 'dynctl-stream-'));
});

afterAll(async () => {
  await cleanupCli();
  await cleanupServerProcesses();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('dynctl export and import with JSON Lines', () => {
  it('exports to a .jsonl file and imports it into a fresh server with a small BODY_LIMIT: the same export', async () => {
    const file = join(work, 'backup.jsonl');
    const exported = await cli.run(['export', '--data', '--settings', '--out', file]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toMatch(new RegExp(`exported 1 endpoint, 0 groups, ${RECORDS} records, settings in \\d+ ms`));
    expect(exported.stdout).toMatch(/wrote .*backup\.jsonl \(\d+\.\d KB, jsonl\)/);
    const text = readFileSync(file, 'utf8');
    expect(text.length).toBeGreaterThan(100 * 1024);
    expect(JSON.parse(text.trim().split('\n').at(-1) as string)).toEqual({ kind: 'end', records: RECORDS });

    const fresh = await startServerProcess({ env: { BODY_LIMIT: '16kb' } });
    const freshCli = await login(fresh);
    const imported = await freshCli.run(['import', file, '--mode', 'replace']);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(new RegExp(`Imported \\(replace\\): 1 created, 0 updated, 0 deleted; ${RECORDS} records, settings written`));
    expect(imported.stderr).toMatch(/sent \d+\.\d KB in \d+ ms/);

    const again = await freshCli.run(['export', '--data', '--settings', '--format', 'jsonl']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(text);

    // .ndjson is the same format; --json prints the server's result.
    const ndjson = join(work, 'backup.ndjson');
    writeFileSync(ndjson, text);
    const asJson = await freshCli.run(['--json', 'import', ndjson, '--mode', 'merge', '--quiet']);
    expect(asJson.code, asJson.stderr).toBe(0);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ mode: 'merge', records: RECORDS, summary: { create: 0, update: 0, delete: 0 } });
  });

  it('refuses a file cut off before its end line, and one with a bad line, naming it; nothing is imported', async () => {
    const file = join(work, 'backup.jsonl');
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    const fresh = await startServerProcess();
    const freshCli = await login(fresh);

    const cut = join(work, 'cut.jsonl');
    writeFileSync(cut, `${lines.slice(0, -1).join('\n')}\n`);
    const refused = await freshCli.run(['import', cut]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/ended without its end line/);

    const bad = join(work, 'bad.jsonl');
    const broken = [...lines];
    broken[1500] = '{"kind":"record","path":"/api/items","record":{"_id":"nope"}}';
    writeFileSync(bad, `${broken.join('\n')}\n`);
    const invalid = await freshCli.run(['import', bad]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/line 1501: record\._id must be a 24-character hex id/);

    const token = (await fresh.login()).accessToken;
    const endpoints = await fresh.api('GET', '/api/endpoints?limit=100', { token });
    expect(endpoints.body.data.filter((e: any) => !e.isSystem)).toEqual([]);
  });

  it('does not replace a good file with a cut-off export', async () => {
    const target = join(work, 'kept.jsonl');
    writeFileSync(target, 'previous\n');
    const stopped = await startServerProcess();
    const stoppedCli = await login(stopped);
    await stopped.stop();
    const result = await stoppedCli.run(['export', '--data', '--out', target]);
    expect(result.code).not.toBe(0);
    expect(readFileSync(target, 'utf8')).toBe('previous\n');
  });
});
