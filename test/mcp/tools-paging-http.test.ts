import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOLS_PER_PAGE } from '../../src/mcp/mcp-server.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

// tools/list paging over HTTP while definitions change between pages: a walk skips no tool that
// existed throughout (the cursor names the last tool sent, not an offset).

const COUNT = TOOLS_PER_PAGE + 20;
let t: TestServer;
let admin: string;
/** Endpoint id by tool name. */
const ids = new Map<string, string>();

async function listTools(cursor?: string): Promise<{ names: string[]; nextCursor?: string }> {
  const res = await t.api('POST', '/api/mcp', { token: admin, body: { jsonrpc: '2.0', id: 1, method: 'tools/list', ...(cursor ? { params: { cursor } } : {}) } });
  if (res.status !== 200) throw new Error(`tools/list: ${res.status} ${res.text}`);
  return { names: res.body.result.tools.map((tool: { name: string }) => tool.name), nextCursor: res.body.result.nextCursor };
}

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  for (let start = 0; start < COUNT; start += 20) {
    await Promise.all(Array.from({ length: Math.min(20, COUNT - start) }, async (_, k) => {
      const i = start + k;
      const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: `Paged ${i}`, method: 'GET', path: `/api/paged/p${i}`, accessType: 'public', schema: {} } });
      if (res.status !== 201) throw new Error(`defining /api/paged/p${i}: ${res.status} ${res.text}`);
      ids.set(`get_api_paged_p${i}`, res.body.data._id);
    }));
  }
});
afterAll(async () => {
  await t.close();
});

describe('tools/list paging while definitions change', () => {
  it('skips no tool that existed throughout when tools of a page already read are deleted', async () => {
    const first = await listTools();
    expect(first.names).toHaveLength(TOOLS_PER_PAGE);
    expect(first.nextCursor).toEqual(expect.any(String));
    const deleted = [first.names[0], first.names[7], first.names[100], first.names[250], first.names[499]] as string[];
    for (const name of deleted) expect((await t.api('DELETE', `/api/endpoints/${ids.get(name)}`, { token: admin })).status).toBe(200);

    const second = await listTools(first.nextCursor);
    expect(second.nextCursor).toBeUndefined();
    // Page two is the 20 tools after page one's last, not the 15 after position 500 of the 515 left.
    // (Definitions are created 20 at a time, so their order within those 20 is not known.)
    expect([...second.names].sort()).toEqual(Array.from({ length: COUNT - TOOLS_PER_PAGE }, (_, k) => `get_api_paged_p${TOOLS_PER_PAGE + k}`).sort());
    const walked = [...first.names, ...second.names].filter((name) => !deleted.includes(name));
    expect(walked.sort()).toEqual([...ids.keys()].filter((name) => !deleted.includes(name)).sort());
  });
});
