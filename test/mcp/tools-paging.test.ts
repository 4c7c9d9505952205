import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_NETWORK_ACCESS, type EndpointDoc } from '../../src/model/endpoint.ts';
import { createMcpServer, TOOLS_PER_PAGE } from '../../src/mcp/mcp-server.ts';
import { compileEndpoint, RouteTable } from '../../src/runtime/route-table.ts';

// tools/list of a large tenant comes in pages (MCP's cursor paging): the MCP server on a real
// route table of more definitions than one page holds, talked to by the SDK's client.

const COUNT = TOOLS_PER_PAGE * 2 + 7;
const table = new RouteTable(
  Array.from({ length: COUNT }, (_, i) => {
    const doc: EndpointDoc = {
      _id: i.toString(16).padStart(24, '0'), name: `Items ${i}`, description: '', slug: `items-${i}`, path: `/api/items${i}`, method: 'GET',
      accessType: i % 2 ? 'public' : 'authenticated', allowedGroupIds: [], groupId: null, schema: { title: { type: 'string' } },
      networkAccess: { ...DEFAULT_NETWORK_ACCESS }, inheritGroupNetworkAccess: true, enabled: true, apiVersion: null, isSystem: false,
      retentionDays: null, handler: { enabled: false, code: '' }, callCount: 0, revision: 1, createdAt: new Date(i * 1000), updatedAt: new Date(0),
    };
    return compileEndpoint(doc, undefined);
  }),
);
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

  it('starts a page where a cursor says: a cursor is an offset in the caller\'s own list, not a signed token', async () => {
    const client = await connect();
    const made = Buffer.from(JSON.stringify({ offset: TOOLS_PER_PAGE * 2 + 5 })).toString('base64url');
    const page = await client.listTools({ cursor: made });
    expect(page.tools.map((tool) => tool.name)).toEqual(['get_api_items1005', 'get_api_items1006']);
    expect(page.nextCursor).toBeUndefined();
  });

  it.each([
    ['not base64url JSON', 'not-a-cursor'],
    ['a negative offset', Buffer.from('{"offset":-1}').toString('base64url')],
    ['an offset that is not a whole number', Buffer.from('{"offset":1.5}').toString('base64url')],
  ])('refuses a cursor that is %s as invalid params', async (_label, cursor) => {
    const client = await connect();
    await expect(client.listTools({ cursor })).rejects.toThrow(/-32602.*cursor is not a tools\/list cursor/);
  });
});
