import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCli, signedInCli, type Cli } from '../helpers/dynctl-cli.ts';
import { cleanupServerProcesses, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

/** The errors a new user meets, each said plainly: `node bin/dynctl.js` against a real server process. */
let server: ServerProcess;
let cli: Cli;
let work: string;

beforeAll(async () => {
  server = await startServerProcess();
  cli = await signedInCli(server.url);
  work = mkdtempSync(join(tmpdir(), 'dynctl-errors-'));
});

afterAll(async () => {
  await cleanupCli();
  await cleanupServerProcesses();
  rmSync(work, { recursive: true, force: true });
});

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`no ${what} within ${timeoutMs} ms; server output:\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('clear errors', () => {
  it('https:// against a plain http server is one line, without OpenSSL text (exit 4)', async () => {
    const url = server.url.replace('http:', 'https:');
    const result = await cli.run(['--server', url, 'status']);
    expect(result.code).toBe(4);
    expect(result.stderr).toBe(`dynctl: error: cannot reach ${url}: the server does not speak TLS (https); is it ${server.url}?\n`);
  });

  it('a JSON body without Content-Type: application/json is a 415 naming the header, on management and dynamic routes', async () => {
    const plain = await cli.run(['call', 'POST', '/api/endpoints/groups', '--data', '{"name": "Typed"}', '-H', 'Content-Type: text/plain']);
    expect(plain.code).toBe(1);
    expect(plain.stdout).toMatch(/^415 Unsupported Media Type/);
    expect(plain.stderr).toContain('Request body sent as "text/plain": send JSON with the header Content-Type: application/json');

    const { accessToken } = await server.login();
    const created = await server.api('POST', '/api/endpoints', { token: accessToken, body: { name: 'Typed notes', path: '/api/typed-notes', method: 'POST', accessType: 'public', schema: { text: { type: 'string' } } } });
    expect(created.status, created.text).toBe(201);
    // A byte body: fetch sends it with no Content-Type at all.
    const bare = await fetch(`${server.url}/api/typed-notes`, { method: 'POST', body: new TextEncoder().encode('{"text": "hi"}') });
    expect(bare.status).toBe(415);
    expect(await bare.json()).toEqual({ success: false, error: 'Request body has no Content-Type header: send JSON with the header Content-Type: application/json' });
    const form = await fetch(`${server.url}/api/typed-notes`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'text=hi' });
    expect(form.status).toBe(415);
    // With the header, the same body is accepted.
    const json = await cli.run(['call', 'POST', '/api/typed-notes', '--data', '{"text": "hi"}']);
    expect(json.code, json.stderr).toBe(0);
  });

  it('a wrong reference is listed in details together with the other field errors, in one 400', async () => {
    const definition = {
      name: 'Referencing',
      path: '/api/referencing',
      method: 'POST',
      accessType: 'group',
      schema: { category: { type: 'reference', ref: '/api/shop/categories/:id' }, price: { type: 'number', minimum: 'low' } },
      networkAccess: { enabled: true, allowedIpRanges: ['10.0.0.0/99'] },
    };
    const result = await cli.run(['--json', 'call', 'POST', '/api/endpoints', '--data', JSON.stringify(definition)]);
    expect(result.code).toBe(1);
    const body = JSON.parse(result.stdout).body;
    expect(body.error).toBe('Invalid schema: schema.price.minimum must be a number');
    expect(body.details.map((detail: { field: string }) => detail.field)).toEqual(['schema.price.minimum', 'schema.category.ref', expect.stringMatching(/^networkAccess/), 'allowedGroupIds']);
    expect(body.details[1]).toEqual({ field: 'schema.category.ref', message: 'must be a normalized collection path without :parameters, such as /api/shop/categories' });
  });

  it('a missing project directory "does not exist"', async () => {
    const missing = join(work, 'no-such-project');
    const validate = await cli.run(['validate', missing]);
    expect(validate.code).toBe(1);
    expect(validate.stdout).toBe(`${missing}: does not exist\n`);
    const diff = await cli.run(['diff', missing]);
    expect(diff.code).toBe(1);
    expect(diff.stderr).toContain(`${missing}: does not exist`);
  });

  it('a YAML syntax error is reported once, at the line to fix', async () => {
    const dir = join(work, 'yaml');
    mkdirSync(join(dir, 'endpoints'), { recursive: true });
    const file = join(dir, 'endpoints', 'items.yaml');
    writeFileSync(file, 'name: "Items\npath: /api/items\nmethod: GET\n');
    expect((await cli.run(['validate', dir])).stdout).toBe(`${file}:1: invalid YAML: Missing closing "quote\n`);
    writeFileSync(file, 'name: Items\npath: /api/items\nmethod: GET\naccessType: public\nschema:\n  a:\n    type: string\n  - b\n');
    const cascade = await cli.run(['validate', dir]);
    expect(cascade.stdout).toBe(`${file}:8: invalid YAML: A block sequence may not be used as an implicit map key\n`);
  });

  it('the server logs when a project directory with problems is good again', async () => {
    const project = join(server.dataDir, 'project');
    const file = join(project, 'endpoints', 'fixed-later.yaml');
    mkdirSync(join(project, 'endpoints'), { recursive: true });
    writeFileSync(file, 'name: Fixed later\npath: /api/fixed-later\nmethod: GET\naccessType: public\nschema:\n  n:\n    type: nope\n');
    await until(() => /fixed-later\.yaml:7: schema\.n\.type/.test(server.output()), 'warning about the bad file');
    expect(server.output()).not.toContain('are fixed');
    writeFileSync(file, 'name: Fixed later\npath: /api/fixed-later\nmethod: GET\naccessType: public\nschema:\n  n:\n    type: number\n');
    await until(() => server.output().includes(`project: the problems in ${project} are fixed; the files are applied again`), 'log line saying the problems are fixed');
  });
});
