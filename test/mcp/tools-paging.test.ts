import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_NETWORK_ACCESS, type EndpointDoc } from '../../src/model/endpoint.ts';
import { createMcpServer, TOOLS_PER_PAGE } from '../../src/mcp/mcp-server.ts';
import { compileEndpoint, RouteTable } from '../../src/runtime/route-table.ts';

// tools/list of a large tenant comes in pages (MCP's cursor paging): the MCP server on a real
// route table of more definitions than one page holds, talked to by the SDK's client.

const COUNT = TOOLS_PER_PAGE * 2 + 7;
const endpoints = Array.from({ length: COUNT }, (_, i) => {
  const doc: EndpointDoc = {
    _id: i.toString(16).padStart(24, '0'), name: `Items ${i}`, description: '', slug: `items-${i}`, path: `/api/items${i}`, method: 'GET',
    accessType: i % 2 ? 'public' : 'authenticated', allowedGroupIds: [], groupId: null, schema: { title: { type: 'string' } },
    networkAccess: { ...DEFAULT_NETWORK_ACCESS }, inheritGroupNetworkAccess: true, enabled: true, apiVersion: null, isSystem: false,
    retentionDays: null, handler: { enabled: false, code: '' }, callCount: 0, revision: 1, createdAt: new Date(i * 1000), updatedAt: new Date(0),
  };
  return compileEndpoint(doc, undefined);
});
/** The route table the server reads: tests swap it to change definitions between pages. */
let table = new RouteTable(endpoints);
const clients: Client[] = [];

async function connect(): Promise<Client> {
  const principal = { kind: 'apiKey' as const, keyId: 'k', name: 'agent', permissions: new Set<never>() };
  const server = createMcpServer({ engine: { table: async () => table, invoke: async () => ({ status: 500, body: null }) }, openApi: { json: async () => '{}' }, version: 'test' }, { principal, ip: '127.0.0.1', headers: {} });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'dyn-test', version: '1.0.0' });
  await client.connect(clientSide);
  clients.push(client);
  return client;
}

afterAll(async () => {
  for (const client of clients) await client.close();
});

describe('tools/list paging', () => {
  it('lists every tool once, in creation order, page by page with nextCursor', async () => {
    const client = await connect();
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      expect(page.tools.length).toBeLessThanOrEqual(TOOLS_PER_PAGE);
      names.push(...page.tools.map((tool) => tool.name));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(names).toEqual(Array.from({ length: COUNT }, (_, i) => `get_api_items${i}`));
  });

  it('starts a page after the tool a cursor names: a cursor is a place in the caller\'s own list, not a signed token', async () => {
    const client = await connect();
    const made = Buffer.from(JSON.stringify([1004 * 1000, (1004).toString(16).padStart(24, '0')])).toString('base64url');
    const page = await client.listTools({ cursor: made });
    expect(page.tools.map((tool) => tool.name)).toEqual(['get_api_items1005', 'get_api_items1006']);
    expect(page.nextCursor).toBeUndefined();
  });

  it('skips no tool that existed throughout when tools of a page already read go away, and shows none twice when tools are added', async () => {
    const client = await connect();
    const first = await client.listTools({});
    try {
      // Five tools of page one go, two are created: page two still starts after page one's last tool.
      const gone = new Set([3, 10, 200, 333, 499]);
      const added = [COUNT, COUNT + 1].map((i) => compileEndpoint({ ...endpoints[0]!.doc, _id: i.toString(16).padStart(24, '0'), path: `/api/items${i}`, slug: `items-${i}`, createdAt: new Date(i * 1000) }, undefined));
      table = new RouteTable([...endpoints.filter((_, i) => !gone.has(i)), ...added]);
      const names = first.tools.map((tool) => tool.name);
      let cursor = first.nextCursor;
      while (cursor) {
        const page = await client.listTools({ cursor });
        names.push(...page.tools.map((tool) => tool.name));
        cursor = page.nextCursor;
      }
      expect(names).toEqual([...Array.from({ length: COUNT }, (_, i) => `get_api_items${i}`), `get_api_items${COUNT}`, `get_api_items${COUNT + 1}`]);
    } finally {
      table = new RouteTable(endpoints);
    }
  });

  it.each([
    ['not base64url JSON', 'not-a-cursor'],
    ['an offset (the cursors before 2026-11-29)', Buffer.from('{"offset":500}').toString('base64url')],
    ['a time that is not a whole number', Buffer.from('[1.5,"00000000000000000000000a"]').toString('base64url')],
    ['an id that is no id', Buffer.from('[0,"../x"]').toString('base64url')],
    ['longer than any cursor the server hands out', Buffer.from(JSON.stringify([0, 'a'.repeat(64)])).toString('base64url') + 'A'.repeat(100)],
  ])('refuses a cursor that is %s as invalid params', async (_label, cursor) => {
    const client = await connect();
    await expect(client.listTools({ cursor })).rejects.toThrow(/-32602.*cursor is not a tools\/list cursor/);
  });
});
