import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCli, makeCli, signedInCli, type Cli } from '../helpers/dynctl-cli.ts';
import { cleanupServerProcesses, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

/** `dynctl openapi` and `dynctl mcp tools` against a real server process. */
let server: ServerProcess;
let cli: Cli;

beforeAll(async () => {
  server = await startServerProcess();
  const { accessToken } = await server.login();
  for (const method of ['GET', 'POST']) {
    const created = await server.api('POST', '/api/endpoints', {
      token: accessToken,
      body: { name: `${method} books`, description: 'The books of the shop', path: '/api/shop/books', method, accessType: 'public', schema: { title: { type: 'string', required: true } } },
    });
    expect(created.status, created.text).toBe(201);
  }
  cli = await signedInCli(server.url);
});

afterAll(async () => {
  await cleanupCli();
  await cleanupServerProcesses();
});

describe('dynctl openapi', () => {
  it('prints the OpenAPI document as pretty JSON, ready to redirect into a file', async () => {
    const result = await cli.run(['openapi']);
    expect(result.code, result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout);
    expect(doc.openapi).toBe('3.0.3');
    expect(Object.keys(doc.paths)).toEqual(['/api/shop/books', '/api/shop/books/{id}']);
    expect(result.stdout.split('\n')[1]).toBe('  "openapi": "3.0.3",');
  });

  it('--spec 3.1 asks for the 3.1 document; another value is a usage error', async () => {
    expect(JSON.parse((await cli.run(['openapi', '--spec', '3.1'])).stdout).openapi).toBe('3.1.0');
    const bad = await cli.run(['openapi', '--spec', '2.0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--spec must be 3.0 or 3.1');
  });
});

describe('dynctl mcp tools', () => {
  it('lists the tools with their descriptions', async () => {
    const result = await cli.run(['mcp', 'tools']);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TOOL\s+DESCRIPTION$/);
    expect(lines.slice(1).map((line) => line.split(/\s+/)[0])).toEqual(['get_api_shop_books', 'post_api_shop_books']);
    expect(lines[1]).toContain('The books of the shop');
  });

  it('--json prints the tools with their input schemas', async () => {
    const result = await cli.run(['--json', 'mcp', 'tools']);
    const tools = JSON.parse(result.stdout);
    expect(tools[1]).toMatchObject({ name: 'post_api_shop_books', inputSchema: { type: 'object', required: ['body'] } });
  });

  it('without credentials fails with the auth exit code', async () => {
    const anonymous = makeCli({ DYNCTL_SERVER: server.url });
    const result = await anonymous.run(['mcp', 'tools']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('[HTTP 401]');
  });
});

describe('dynctl mcp tools with more tools than one tools/list page (500)', () => {
  const BULK = 520;
  /** Every tool the server has, in no particular order (apply creates a bundle's endpoints in key order). */
  const expected = ['get_api_shop_books', 'post_api_shop_books', ...Array.from({ length: BULK }, (_, i) => `get_api_bulk_t${i}`)].sort();
  beforeAll(async () => {
    const { accessToken } = await server.login();
    const endpoints = Array.from({ length: BULK }, (_, i) => ({ name: `bulk ${i}`, method: 'GET', path: `/api/bulk/t${i}`, accessType: 'public', schema: {} }));
    const applied = await server.api('POST', '/api/project/apply', { token: accessToken, body: { endpoints } });
    expect(applied.status, applied.text).toBe(200);
  });

  it('follows nextCursor to the last page', async () => {
    const result = await cli.run(['mcp', 'tools']);
    expect(result.code, result.stderr).toBe(0);
    const names = result.stdout.trimEnd().split('\n').slice(1).map((line) => line.split(/\s+/)[0]);
    expect(names.slice(0, 2)).toEqual(['get_api_shop_books', 'post_api_shop_books']);
    expect([...names].sort()).toEqual(expected);
  });

  it('--json prints every tool of every page, once', async () => {
    const result = await cli.run(['--json', 'mcp', 'tools']);
    expect(result.code, result.stderr).toBe(0);
    const names = (JSON.parse(result.stdout) as Array<{ name: string }>).map((tool) => tool.name);
    expect([...names].sort()).toEqual(expected);
  });
});
