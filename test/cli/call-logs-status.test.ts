import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCli, signedInCli, type Cli } from '../helpers/dynctl-cli.ts';
import { cleanupServerProcesses, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

let server: ServerProcess;
let cli: Cli;

beforeAll(async () => {
  server = await startServerProcess();
  const { accessToken } = await server.login();
  const schema = { title: { type: 'string', required: true }, price: { type: 'number' } };
  for (const [method, accessType] of [
    ['POST', 'public'],
    ['GET', 'public'],
    ['DELETE', 'authenticated'],
  ] as const) {
    const created = await server.api('POST', '/api/endpoints', { token: accessToken, body: { name: `${method} books`, path: '/api/shop/books', method, accessType, schema } });
    expect(created.status, created.text).toBe(201);
  }
  cli = await signedInCli(server.url);
});

afterAll(async () => {
  await cleanupCli();
  await cleanupServerProcesses();
});

describe('dynctl call', () => {
  it('calls a dynamic endpoint and prints status, timing and the pretty JSON body', async () => {
    const result = await cli.run(['call', 'post', '/api/shop/books', '--data', '{"title":"Dune","price":9.5}']);
    expect(result.code, result.stderr).toBe(0);
    const [statusLine, ...body] = result.stdout.trimEnd().split('\n');
    expect(statusLine).toMatch(/^201 Created {2}POST \/api\/shop\/books {2}\d+(\.\d)? ms$/);
    expect(JSON.parse(body.join('\n'))).toMatchObject({ success: true, data: { title: 'Dune', price: 9.5 } });
    expect(body[1]).toBe('  "success": true,');
  });

  it('--json prints one parseable document with status, duration, headers and body', async () => {
    const result = await cli.run(['--json', 'call', 'GET', '/api/shop/books?limit=5']);
    expect(result.code, result.stderr).toBe(0);
    const parsed = JSON.parse(result.stdout);
    expect(parsed).toMatchObject({ method: 'GET', path: '/api/shop/books?limit=5', status: 200, body: { success: true, meta: { limit: 5 } } });
    expect(parsed.durationMs).toBeTypeOf('number');
    expect(parsed.headers['content-type']).toContain('application/json');
    expect(parsed.body.data.map((b: { title: string }) => b.title)).toContain('Dune');
  });

  it('reads the body from a file and sends extra headers', async () => {
    const { writeFileSync } = await import('node:fs');
    const file = `${cli.home}/book.json`;
    writeFileSync(file, '{"title":"Emma"}');
    const result = await cli.run(['--json', 'call', 'POST', '/api/shop/books', '--data', `@${file}`, '-H', 'X-Trace: 1']);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 201, body: { data: { title: 'Emma' } } });
  });

  it('maps the answer to the exit code: 4xx → 1, 401 → 3, with the response still printed', async () => {
    const invalid = await cli.run(['call', 'POST', '/api/shop/books', '--data', '{"price":1}']);
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toMatch(/^400 Bad Request/);
    expect(invalid.stderr.trim()).toMatch(/^dynctl: error: POST \/api\/shop\/books answered 400: .*title is required$/);

    const anonymous = await cli.run(['--json', 'call', 'DELETE', '/api/shop/books/0123456789abcdef01234567', '--no-auth']);
    expect(anonymous.code).toBe(3);
    expect(JSON.parse(anonymous.stdout)).toMatchObject({ status: 401 });
  });

  it('refuses bad input before sending anything (exit 2)', async () => {
    expect((await cli.run(['call', 'GET', 'api/shop/books'])).code).toBe(2);
    expect((await cli.run(['call', 'GET', '/x', '--data', '{oops'])).stderr).toContain('not valid JSON');
    expect((await cli.run(['call', 'GET', '/x', '-H', 'no-colon'])).code).toBe(2);
    expect((await cli.run(['call', 'G E T', '/x'])).code).toBe(2);
  });

  it('refuses a method it cannot send before sending it (exit 2), accepts the others in any case', async () => {
    const foo = await cli.run(['call', 'FOO', '/api/shop/books']);
    expect(foo.code).toBe(2);
    expect(foo.stdout).toBe('');
    expect(foo.stderr).toContain('"FOO" is not an HTTP method dynctl can send (use GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS)');
    const head = await cli.run(['call', 'head', '/api/shop/books']);
    expect(head.code, head.stderr).toBe(0);
    expect(head.stdout).toMatch(/^200 OK {2}HEAD \/api\/shop\/books/);
  });
});

describe('dynctl logs', () => {
  it('--action shows only entries with that action, oldest first', async () => {
    await cli.run(['keys', 'create', '--name', 'logged', '--permissions', 'view']);
    const result = await cli.run(['--json', 'logs', '--action', 'login']);
    expect(result.code, result.stderr).toBe(0);
    const entries = JSON.parse(result.stdout) as Array<{ action: string; createdAt: string }>;
    expect(entries.length).toBeGreaterThanOrEqual(2);
    expect(new Set(entries.map((e) => e.action))).toEqual(new Set(['login']));
    expect(entries.map((e) => e.createdAt)).toEqual(entries.map((e) => e.createdAt).sort());

    const human = await cli.run(['logs', '--action', 'api_key_created', '--limit', '5']);
    expect(human.stdout).toMatch(/api_key_created\s+API key "logged" created/);
    expect(human.stdout).not.toMatch(/\blogin\s/);
  });

  it('shows control characters from the log as escapes: a login tried by anyone cannot drive the terminal or forge lines', async () => {
    const login = 'esc\u001b]0;PWNED\u0007\u001b[31mRED\nforged line\u202etxt.exe';
    expect((await server.api('POST', '/api/auth/login', { body: { login, password: 'wrong-password-1' } })).status).toBe(401);
    const result = await cli.run(['logs', '--action', 'login_failed', '--limit', '5']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain('\u001b]');
    expect(result.stdout).not.toContain('\u0007');
    expect(result.stdout).not.toMatch(/^forged line/m);
    expect(result.stdout).toContain('esc\\u001b]0;pwned\\u0007\\u001b[31mred\\u000aforged line\\u202etxt.exe');
  });

  it('--follow prints new entries as they come and stops on Ctrl-C', async () => {
    const follow = cli.start(['logs', '--follow', '--action', 'api_key_created', '--limit', '1']);
    await follow.waitFor(/API key "logged" created/);
    await cli.run(['keys', 'create', '--name', 'followed', '--permissions', 'view']);
    await follow.waitFor(/API key "followed" created/);
    const result = await follow.stop('SIGINT');
    expect(result.code).toBe(0);
    expect(result.stdout.match(/API key "followed" created/g)).toHaveLength(1);
  });
});

describe('dynctl status', () => {
  it('prints the health and what the server says about the project', async () => {
    const result = await cli.run(['--json', 'status']);
    expect(result.code, result.stderr).toBe(0);
    const status = JSON.parse(result.stdout);
    expect(status).toMatchObject({ server: server.url, credentials: 'session', health: { status: 'ok' } });
    expect(typeof status.projectRoutes).toBe('boolean');
    const human = await cli.run(['status']);
    expect(human.stdout).toMatch(/^Server\s+http:\/\/127\.0\.0\.1:\d+\s+ok/m);
    expect(human.stdout).toMatch(/^Project/m);
  });
});
