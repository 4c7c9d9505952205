import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * POST /api/mcp with the SDK's own client over real HTTP: tools per caller (access type and
 * group membership), a call through the engine, the OpenAPI document as a resource; and the
 * JSON-RPC error codes for raw requests.
 */
let t: TestServer;
let admin: string;
let staffGroupId: string;
let member: { token: string; userId: string };
let outsider: { token: string };
let apiKey: string;
const clients: Client[] = [];

async function define(body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: `${body.method} ${body.path}`, accessType: 'public', ...body } });
  if (res.status !== 201) throw new Error(`defining ${body.method} ${body.path} failed: ${res.status} ${res.text}`);
  return res.body.data;
}

async function connect(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'dyn-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/api/mcp`), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

/** A raw JSON-RPC POST (what a plain HTTP client sends). */
async function rpc(body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(`${t.url}/api/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
}

/** A tools/call creating a category (the endpoint is defined in "batches"). */
const createCategory = (id: number | string, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'post_api_shop_categories', arguments: { body: { name } } } });
const categoryCount = async (): Promise<number> => (await t.api('GET', '/api/shop/categories')).body.meta.total;

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  const staff = await t.api('POST', '/api/groups', { token: admin, body: { name: 'staff', permissions: [] } });
  staffGroupId = staff.body.data._id;
  const created = await createUserWith(t, []);
  await t.api('PUT', `/api/users/${created.userId}`, { token: admin, body: { groupIds: [staffGroupId] } });
  member = { token: (await t.login(created.login, created.password)).accessToken, userId: created.userId };
  outsider = await createUserWith(t, []);
  const key = await t.api('POST', '/api/api-keys', { token: admin, body: { name: 'mcp-agent', permissions: [] } });
  apiKey = key.body.data.key;

  await define({ method: 'GET', path: '/api/shop/products', description: 'The product catalogue', schema: { title: { type: 'string', required: true }, price: { type: 'number' } } });
  await define({ method: 'POST', path: '/api/shop/products', schema: { title: { type: 'string', required: true }, price: { type: 'number', minimum: 0 } } });
  await define({ method: 'GET', path: '/api/shops/:shopId/items', accessType: 'authenticated', schema: { label: { type: 'string' } } });
  await define({ method: 'GET', path: '/api/staff/notes', accessType: 'group', allowedGroupIds: [staffGroupId], schema: { text: { type: 'string' } } });
  await define({ method: 'GET', path: '/api/off/things', enabled: false, schema: {} });
  await define({ method: 'GET', path: '/api/walled/things', networkAccess: { enabled: true, allowedIpRanges: ['10.0.0.0/8'] }, schema: {} });
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await t.close();
});

describe('initialize as the spec shapes it (params optional)', () => {
  it('answers a bare handshake, and one with empty params, with the server and the newest protocol version', async () => {
    for (const body of [{ jsonrpc: '2.0', id: 1, method: 'initialize' }, { jsonrpc: '2.0', id: 2, method: 'initialize', params: {} }]) {
      const res = await rpc(body);
      expect(res.status, res.text).toBe(200);
      expect(res.body.id).toBe(body.id);
      expect(res.body.result.serverInfo.name).toBe('dyn');
      expect(typeof res.body.result.protocolVersion).toBe('string');
      expect(res.body.result.capabilities.tools).toBeDefined();
    }
  });

  it('keeps the version a client asks for, and refuses params of the wrong type as invalid params', async () => {
    const asked = await rpc({ jsonrpc: '2.0', id: 3, method: 'initialize', params: { protocolVersion: '2025-06-18' } });
    expect(asked.body.result.protocolVersion).toBe('2025-06-18');
    const wrong = await rpc({ jsonrpc: '2.0', id: 4, method: 'initialize', params: { protocolVersion: 5 } });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ jsonrpc: '2.0', id: 4, error: { code: -32602 } });
    expect(wrong.body.error.message).toMatch(/^Invalid params: initialize params: protocolVersion/);
    const notObject = await rpc({ jsonrpc: '2.0', id: 5, method: 'initialize', params: [1] });
    expect(notObject.body).toMatchObject({ id: 5, error: { code: -32602, message: 'Invalid params: initialize params must be an object' } });
  });
});

describe('with the SDK client', () => {
  it('initializes and lists one tool per endpoint the caller may call, by group membership', async () => {
    const asMember = await connect({ authorization: `Bearer ${member.token}` });
    expect(asMember.getServerVersion()?.name).toBe('dyn');
    const memberTools = (await asMember.listTools()).tools.map((tool) => tool.name).sort();
    // get_api_walled_things admits 10.0.0.0/8 only: not a tool this caller (127.0.0.1) can use.
    expect(memberTools).toEqual(['get_api_shop_products', 'get_api_shops_shopId_items', 'get_api_staff_notes', 'post_api_shop_products']);

    const asOutsider = await connect({ authorization: `Bearer ${outsider.token}` });
    const outsiderTools = (await asOutsider.listTools()).tools.map((tool) => tool.name).sort();
    expect(outsiderTools).toEqual(['get_api_shop_products', 'get_api_shops_shopId_items', 'post_api_shop_products']);
  });

  it('describes each tool from its definition, with an input schema for params, id, query and body', async () => {
    const client = await connect({ 'x-api-key': apiKey });
    const tools = (await client.listTools()).tools;
    const list = tools.find((tool) => tool.name === 'get_api_shop_products');
    expect(list?.description).toContain('The product catalogue');
    expect(list?.description).toContain('GET /api/shop/products');
    expect(Object.keys(list?.inputSchema.properties ?? {})).toEqual(['id', 'query']);
    const create = tools.find((tool) => tool.name === 'post_api_shop_products');
    expect(create?.inputSchema).toMatchObject({
      type: 'object',
      required: ['body'],
      properties: { body: { type: 'object', required: ['title'], properties: { price: { type: 'number', minimum: 0 } } } },
    });
    const items = tools.find((tool) => tool.name === 'get_api_shops_shopId_items');
    expect(items?.inputSchema).toMatchObject({ required: ['params'], properties: { params: { required: ['shopId'] } } });
    expect(tools.map((tool) => tool.name)).not.toContain('get_api_staff_notes'); // an API key is in no group
  });

  it('calls a tool through the engine as the caller and returns the response as content', async () => {
    const client = await connect({ 'x-api-key': apiKey });
    const created = await client.callTool({ name: 'post_api_shop_products', arguments: { body: { title: 'Lamp', price: 30 } } });
    expect(created.isError).toBe(false);
    const result = created.structuredContent as { status: number; response: any };
    expect(result.status).toBe(201);
    expect(result.response.data).toMatchObject({ title: 'Lamp', price: 30 });
    expect(JSON.parse((created.content as any)[0].text)).toEqual(result);

    const listed = await client.callTool({ name: 'get_api_shop_products', arguments: { query: { title: 'Lamp', limit: 5 } } });
    expect((listed.structuredContent as any).response).toMatchObject({ success: true, meta: { page: 1, limit: 5, total: 1 } });
    const one = await client.callTool({ name: 'get_api_shop_products', arguments: { id: result.response.data._id } });
    expect((one.structuredContent as any).response.data.title).toBe('Lamp');

    // The record is there for a direct call too.
    const direct = await t.api('GET', `/api/shop/products/${result.response.data._id}`);
    expect(direct.body.data.title).toBe('Lamp');
  });

  it('fills path parameters from params, and refuses a call without them', async () => {
    const client = await connect({ 'x-api-key': apiKey });
    const listed = await client.callTool({ name: 'get_api_shops_shopId_items', arguments: { params: { shopId: 'north' } } });
    expect(listed.structuredContent).toEqual({ status: 200, response: { success: true, data: [], meta: { page: 1, limit: 20, total: 0 } } });
    const refused = await client.callTool({ name: 'get_api_shops_shopId_items', arguments: {} });
    expect(refused).toMatchObject({ isError: true, structuredContent: { error: 'Invalid arguments for get_api_shops_shopId_items: params is required' } });
  });

  it('reports a 4xx of the endpoint as a tool error', async () => {
    const client = await connect({ authorization: `Bearer ${member.token}` });
    const missing = await client.callTool({ name: 'get_api_shop_products', arguments: { id: '000000000000000000000000' } });
    expect(missing.isError).toBe(true);
    expect((missing.structuredContent as any).status).toBe(404);
  });

  it('applies network rules to the MCP caller\'s address: the tool is not listed, and a call of it is refused', async () => {
    const client = await connect({ authorization: `Bearer ${member.token}` });
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('get_api_walled_things');
    const walled = await client.callTool({ name: 'get_api_walled_things', arguments: {} });
    expect(walled.isError).toBe(true);
    expect((walled.structuredContent as any)).toEqual({ status: 403, response: { success: false, error: 'Forbidden: network access denied' } });
    // Nor is it in the OpenAPI resource, which holds the endpoints the caller may call.
    const read = await client.readResource({ uri: 'openapi://dyn/openapi.json' });
    expect(Object.keys(JSON.parse((read.contents[0] as { text: string }).text).paths)).not.toContain('/api/walled/things');
  });

  it('refuses an unknown tool, or one the caller may not call, as invalid params', async () => {
    const client = await connect({ authorization: `Bearer ${outsider.token}` });
    await expect(client.callTool({ name: 'get_api_staff_notes', arguments: {} })).rejects.toThrow(/-32602.*Unknown tool/);
  });

  it('answers an argument the tool does not take as a tool error the model can correct (the client negotiated 2025-11-25)', async () => {
    const client = await connect({ authorization: `Bearer ${outsider.token}` });
    const refused = await client.callTool({ name: 'get_api_shop_products', arguments: { colour: 'red' } });
    expect(refused).toMatchObject({ isError: true, structuredContent: { error: 'Invalid arguments for get_api_shop_products: unknown argument "colour"' } });
  });

  it('lists and reads the OpenAPI document as a resource; any other URI is an error', async () => {
    const client = await connect({ authorization: `Bearer ${outsider.token}` });
    expect((await client.listResources()).resources).toEqual([expect.objectContaining({ uri: 'openapi://dyn/openapi.json', mimeType: 'application/json' })]);
    const read = await client.readResource({ uri: 'openapi://dyn/openapi.json' });
    const doc = JSON.parse((read.contents[0] as { text: string }).text);
    expect(doc.openapi).toBe('3.0.3');
    expect(Object.keys(doc.paths)).toContain('/api/shops/{shopId}/items');
    expect(Object.keys(doc.paths)).not.toContain('/api/staff/notes');
    await expect(client.readResource({ uri: 'file:///etc/passwd' })).rejects.toThrow(/Resource not found/);
    await expect(client.readResource({ uri: 'https://example.com/' })).rejects.toThrow(/Resource not found/);
  });

  it("names each tool like its endpoint's OpenAPI operation, without the _by_id of an item route", async () => {
    await define({ method: 'PUT', path: '/api/shops/:shopId/items', accessType: 'authenticated', schema: { label: { type: 'string' } } });
    const client = await connect({ authorization: `Bearer ${admin}` });
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    const read = await client.readResource({ uri: 'openapi://dyn/openapi.json' });
    const doc = JSON.parse((read.contents[0] as { text: string }).text);
    const operationIds = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((methods) => Object.values(methods).map((op) => op.operationId));
    expect(operationIds).toContain('put_api_shops_shopId_items_by_id');
    expect(tools).toContain('put_api_shops_shopId_items');
    for (const tool of tools) expect(operationIds.filter((id) => id === tool || id === `${tool}_by_id`).length, tool).toBeGreaterThan(0);
    // The document holds the tools and nothing else: get_api_walled_things, whose network rules
    // keep this caller (127.0.0.1) out, is in neither.
    for (const id of operationIds) expect(tools, id).toContain(id.replace(/_by_id$/, ''));
    expect(operationIds.filter((id) => id.startsWith('get_api_walled_things'))).toEqual([]);
  });

  it('writes an mcp_call audit entry per call', async () => {
    const client = await connect({ authorization: `Bearer ${member.token}` });
    await client.callTool({ name: 'get_api_staff_notes', arguments: {} });
    await t.server.services.audit.flush();
    const logs = await t.api('GET', '/api/dashboard/logs?action=mcp_call&search=get_api_staff_notes', { token: admin });
    expect(logs.status, logs.text).toBe(200);
    expect(logs.body.data[0]).toMatchObject({ action: 'mcp_call', source: 'mcp', userId: member.userId });
    expect(logs.body.data[0].message).toContain('tools/call get_api_staff_notes');
  });
});

describe('tool arguments, checked against the tool\'s input schema before the call', () => {
  beforeAll(async () => {
    await define({ method: 'GET', path: '/api/checked/things', schema: { label: { type: 'string' } } });
    await define({ method: 'POST', path: '/api/checked/things', schema: { label: { type: 'string', required: true, pattern: '^[a-z]+$' }, size: { type: 'number', minimum: 0 }, due: { type: 'datetime' } } });
  });

  /** The audit entries an endpoint call of /api/checked/things wrote (api_call, error). */
  async function endpointEntries(): Promise<unknown[]> {
    await t.server.services.audit.flush();
    const logs = await t.api('GET', '/api/dashboard/logs?search=/api/checked/things&limit=100', { token: admin });
    expect(logs.status, logs.text).toBe(200);
    return logs.body.data.filter((entry: { action: string }) => entry.action === 'api_call' || entry.action === 'error');
  }

  /** A raw tools/call under a protocol revision (without the header the transport assumes 2025-03-26). */
  const callUnder = (version: string | null, id: number, name: string, args: unknown) =>
    rpc({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }, version ? { 'mcp-protocol-version': version } : {});

  it('answers arguments the schema rules out with a tool result marked isError (2025-11-25), naming the first and listing every problem, and does not call the endpoint', async () => {
    const client = await connect({ 'x-api-key': apiKey });
    const refused = await client.callTool({ name: 'get_api_checked_things', arguments: { id: 'zz', query: { page: 0 } } });
    const error = 'Invalid arguments for get_api_checked_things: id must match the pattern ^[0-9a-f]{24}$';
    const details = [{ field: 'id', message: 'must match the pattern ^[0-9a-f]{24}$' }, { field: 'query.page', message: 'must be at least 1' }];
    expect(refused).toEqual({ isError: true, structuredContent: { error, details }, content: [{ type: 'text', text: JSON.stringify({ error, details }) }] });
    const raw = await callUnder('2025-11-25', 20, 'get_api_checked_things', { id: 'zz', query: { page: 0 } });
    expect(raw.status).toBe(200);
    expect(raw.body).toEqual({ jsonrpc: '2.0', id: 20, result: refused });
    expect(await endpointEntries()).toEqual([]);
  });

  it.each([['2025-06-18'], ['2025-03-26'], [null]])('answers them as invalid params with the same message and details under %s, as the revisions before 2025-11-25 say', async (version) => {
    const raw = await callUnder(version, 21, 'get_api_checked_things', { id: 'zz', query: { page: 0 } });
    expect(raw.status).toBe(200);
    expect(raw.body).toEqual({
      jsonrpc: '2.0',
      id: 21,
      error: {
        code: -32602,
        message: 'Invalid arguments for get_api_checked_things: id must match the pattern ^[0-9a-f]{24}$',
        data: { details: [{ field: 'id', message: 'must match the pattern ^[0-9a-f]{24}$' }, { field: 'query.page', message: 'must be at least 1' }] },
      },
    });
    expect(await endpointEntries()).toEqual([]);
  });

  it('keeps an unknown tool a protocol error (-32602) under 2025-11-25', async () => {
    const raw = await callUnder('2025-11-25', 23, 'get_api_nothing_here', {});
    expect(raw.body).toEqual({ jsonrpc: '2.0', id: 23, error: { code: -32602, message: 'Unknown tool: get_api_nothing_here' } });
  });

  it('refuses a body the schema rules out, listing every problem, and creates nothing', async () => {
    const client = await connect({ 'x-api-key': apiKey });
    const missing = await client.callTool({ name: 'post_api_checked_things', arguments: { body: { size: -1 } } });
    expect(missing).toMatchObject({ isError: true, structuredContent: { error: 'Invalid arguments for post_api_checked_things: body.label is required' } });
    const raw = await callUnder(null, 22, 'post_api_checked_things', { body: { label: 'NO', size: -1, colour: 'red' } });
    expect(raw.body.error.data.details).toEqual([
      { field: 'body.colour', message: 'is not an allowed field' },
      { field: 'body.label', message: 'must match the pattern ^[a-z]+$' },
      { field: 'body.size', message: 'must be at least 0' },
    ]);
    expect(await endpointEntries()).toEqual([]);
    expect((await t.api('GET', '/api/checked/things')).body.meta.total).toBe(0);
  });

  it('answers a malformed date and an impossible one alike under 2025-11-25: both are tool errors', async () => {
    const client = await connect({ 'x-api-key': apiKey });
    const malformed = await client.callTool({ name: 'post_api_checked_things', arguments: { body: { label: 'lamp', due: 'soon' } } });
    expect(malformed).toMatchObject({ isError: true, structuredContent: { error: expect.stringMatching(/^Invalid arguments for post_api_checked_things: body\.due /) } });
    const impossible = await client.callTool({ name: 'post_api_checked_things', arguments: { body: { label: 'lamp', due: '2026-02-30' } } });
    expect(impossible).toMatchObject({ isError: true, structuredContent: { status: 400 } });
  });

  it('calls the endpoint with arguments the schema admits', async () => {
    const client = await connect({ 'x-api-key': apiKey });
    const created = await client.callTool({ name: 'post_api_checked_things', arguments: { body: { label: 'lamp', size: 2, due: '2026-01-01' } } });
    expect(created.structuredContent).toMatchObject({ status: 201 });
    const id = (created.structuredContent as any).response.data._id;
    const read = await client.callTool({ name: 'get_api_checked_things', arguments: { id, query: { populate: 'true' } } });
    expect(read.structuredContent).toMatchObject({ status: 200, response: { data: { label: 'lamp' } } });
    expect(await endpointEntries()).not.toEqual([]); // what the refused calls above would have written
  });
});

describe('a handler tool\'s body', () => {
  let handId: string;
  beforeAll(async () => {
    const hand = await define({ method: 'POST', path: '/api/hand', schema: {}, handler: { enabled: true, code: 'async function handler(req) { return { status: 200, data: req.body }; }' } });
    handId = hand._id;
  });

  /** What calling /api/hand wrote: the calls the endpoint counted and audited. */
  async function handCalls(): Promise<{ counted: number; audited: number }> {
    await t.server.services.audit.flush();
    const logs = await t.api('GET', '/api/dashboard/logs?search=/api/hand&limit=100', { token: admin });
    const audited = logs.body.data.filter((entry: { action: string }) => entry.action === 'api_call' || entry.action === 'error').length;
    const counted = (await t.api('GET', `/api/endpoints/${handId}`, { token: admin })).body.data.callCount;
    return { counted, audited };
  }

  it('is described as an object or an array, what an HTTP call may send', async () => {
    const tools = (await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).body.result.tools;
    expect(tools.find((tool: { name: string }) => tool.name === 'post_api_hand').inputSchema.properties.body).toEqual({ type: ['object', 'array'], description: 'any JSON object or array' });
  });

  it.each([[5], [null], ['str'], [true]])('refuses %j as a body, as POST /api/hand does, and runs and counts nothing', async (body) => {
    const direct = await t.api('POST', '/api/hand', { rawBody: JSON.stringify(body) });
    expect(direct.body).toEqual({ success: false, error: 'Malformed JSON body: expected an object or an array' });
    const before = await handCalls();
    const res = await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'post_api_hand', arguments: { body } } }, { 'mcp-protocol-version': '2025-11-25' });
    const error = 'Invalid arguments for post_api_hand: body must be an object or an array';
    expect(res.body.result).toMatchObject({ isError: true, structuredContent: { error, details: [{ field: 'body', message: 'must be an object or an array' }] } });
    expect(await handCalls()).toEqual(before);
  });

  it('runs the handler with an object or an array', async () => {
    for (const body of [{ a: 1 }, [1, 2]]) {
      const res = await rpc({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'post_api_hand', arguments: { body } } });
      expect(res.body.result.structuredContent).toEqual({ status: 200, response: { success: true, data: body } });
    }
  });
});

describe('over raw HTTP', () => {
  it('needs a JWT or an API key', async () => {
    const anonymous = await fetch(`${t.url}/api/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    expect(anonymous.status).toBe(401); // its body: transport-scenarios.ts
    expect((await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { authorization: 'Bearer not-a-token' })).status).toBe(401);
  });

  it('answers a plain JSON-RPC request without the MCP Accept header, in JSON', async () => {
    const res = await rpc({ jsonrpc: '2.0', id: 7, method: 'tools/list' });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(7);
    expect(res.body.result.tools.length).toBeGreaterThan(0);
  });

  it.each([
    ['malformed JSON', '{"jsonrpc": "2.0", "id": 1,', -32700, null],
    ['a message without jsonrpc', { id: 2, method: 'tools/list' }, -32600, 2],
    ['a method that is not a string', { jsonrpc: '2.0', id: 3, method: 42 }, -32600, 3],
    ['an empty batch', [], -32600, null],
    ['a batch over the bound', Array.from({ length: 21 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })), -32600, null],
    ['a JSON scalar', '"hello"', -32600, null],
  ])('answers %s with the standard error code', async (_label, body, code, id) => {
    const res = await rpc(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id, error: { code } });
  });

  it.each([
    ['tools/list', [1]],
    ['tools/call', ['get_api_shop_products', {}]],
    ['ping', []],
  ])('answers %s with params by position (an array) as invalid params with the request\'s id, not as a parse error', async (method, params) => {
    const res = await rpc({ jsonrpc: '2.0', id: 31, method, params });
    expect(res.body).toEqual({ jsonrpc: '2.0', id: 31, error: { code: -32602, message: `Invalid params: ${method} params must be an object` } });
    // Params that are not structured at all make the message no JSON-RPC request.
    expect((await rpc({ jsonrpc: '2.0', id: 32, method, params: 1 })).body).toMatchObject({ id: 32, error: { code: -32600 } });
  });

  it('answers an unknown method with -32601 and invalid params with -32602, in one line that does not repeat the code', async () => {
    const unknown = await rpc({ jsonrpc: '2.0', id: 4, method: 'tools/destroy' });
    expect(unknown.body).toEqual({ jsonrpc: '2.0', id: 4, error: { code: -32601, message: 'Method not found' } });
    const noName = await rpc({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: {} });
    expect(noName.status).toBe(400); // found before the method ran
    expect(noName.body).toEqual({ jsonrpc: '2.0', id: 5, error: { code: -32602, message: 'Invalid params: tools/call params.name: required' } });
    const noUri = await rpc({ jsonrpc: '2.0', id: 6, method: 'resources/read', params: {} });
    expect(noUri.body).toEqual({ jsonrpc: '2.0', id: 6, error: { code: -32602, message: 'Invalid params: resources/read params.uri: required' } });
    const badCursor = await rpc({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: { cursor: 'x' } });
    expect(badCursor.body).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32602, message: 'Invalid params: cursor is not a tools/list cursor (send the nextCursor of the previous page)' } });
    const unknownResource = await rpc({ jsonrpc: '2.0', id: 8, method: 'resources/read', params: { uri: 'file:///etc/passwd' } });
    expect(unknownResource.body).toEqual({ jsonrpc: '2.0', id: 8, error: { code: -32002, message: 'Resource not found: file:///etc/passwd' } });
  });

  it('refuses an id beyond 2^53 - 1 (JSON parsing has rounded it) as an invalid request with id null', async () => {
    const res = await rpc('{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: id must be a string or an integer of at most 2^53 - 1 in size' } });
    expect((await rpc({ jsonrpc: '2.0', id: Number.MAX_SAFE_INTEGER, method: 'ping' })).body).toEqual({ jsonrpc: '2.0', id: Number.MAX_SAFE_INTEGER, result: {} });
  });

  it('gives notifications no response and answers each request of a batch', async () => {
    const note = await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(note.status).toBe(202);
    expect(note.text).toBe('');
    const batch = await rpc([{ jsonrpc: '2.0', id: 'a', method: 'ping' }, { jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 'b', method: 'resources/list' }]);
    expect(batch.status).toBe(200);
    expect(batch.body.map((m: any) => m.id).sort()).toEqual(['a', 'b']);
  });

  it('GET and DELETE are 405 (no streams, no sessions)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${t.url}/api/mcp`, { method, headers: { authorization: `Bearer ${admin}` } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toContain('POST');
    }
  });
});

describe('batches, refused whole or answered with an array', () => {
  beforeAll(async () => {
    await define({ method: 'POST', path: '/api/shop/categories', schema: { name: { type: 'string', required: true } } });
    await define({ method: 'GET', path: '/api/shop/categories', schema: { name: { type: 'string' } } });
  });

  it('refuses a batch whose requests share an id, naming the id, and runs none of it', async () => {
    const res = await rpc([createCategory(7, 'dupA'), createCategory(7, 'dupB')]);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: message 1: id 7 is already the id of message 0; each request of a batch needs its own id' } });
    expect(await categoryCount()).toBe(0);
  });

  it('tells the number 7 and the string "7" apart, as JSON-RPC does, and answers each request', async () => {
    const res = await rpc([createCategory(7, 'numbered'), createCategory('7', 'named')]);
    expect(res.status).toBe(200);
    expect(res.body.map((answer: any) => [answer.id, answer.result.structuredContent.response.data.name])).toEqual([[7, 'numbered'], ['7', 'named']]);
    expect(await categoryCount()).toBe(2);
  });

  it('answers a batch of one request with an array of one answer', async () => {
    const res = await rpc([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
    const withNotification = await rpc([{ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 2, method: 'ping' }]);
    expect(withNotification.body).toEqual([{ jsonrpc: '2.0', id: 2, result: {} }]);
  });

  it('answers a batch in the order of its requests', async () => {
    const res = await rpc([{ jsonrpc: '2.0', id: 'z', method: 'ping' }, { jsonrpc: '2.0', id: 'a', method: 'tools/destroy' }, { jsonrpc: '2.0', id: 'm', method: 'ping' }]);
    expect(res.body.map((answer: any) => answer.id)).toEqual(['z', 'a', 'm']);
    expect(res.body[1].error.code).toBe(-32601);
  });

  it('refuses initialize in a batch (MCP: it must be sent alone), even with nothing else in it', async () => {
    for (const batch of [[{ jsonrpc: '2.0', id: 1, method: 'initialize' }, { jsonrpc: '2.0', id: 2, method: 'ping' }], [{ jsonrpc: '2.0', id: 1, method: 'initialize' }]]) {
      const res = await rpc(batch);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: message 0: initialize must be sent alone, not in a batch (MCP lifecycle)' } });
    }
  });
});

describe('members a method does not take', () => {
  it('refuses a misspelt member of tools/call params, naming it, rather than listing records instead of reading one', async () => {
    const created = await rpc(createCategory(40, 'kept'));
    const id = created.body.result.structuredContent.response.data._id;
    const res = await rpc({ jsonrpc: '2.0', id: 41, method: 'tools/call', params: { name: 'get_api_shop_categories', argument: { id } } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ jsonrpc: '2.0', id: 41, error: { code: -32602, message: 'Invalid params: tools/call params: unknown member "argument" (tools/call takes name, arguments, _meta)' } });
    const read = await rpc({ jsonrpc: '2.0', id: 42, method: 'tools/call', params: { name: 'get_api_shop_categories', arguments: { id } } });
    expect(read.body.result.structuredContent.response.data.name).toBe('kept');
  });

  it('refuses a misspelt tools/list cursor rather than starting over at page one', async () => {
    const res = await rpc({ jsonrpc: '2.0', id: 43, method: 'tools/list', params: { cursr: 'x' } });
    expect(res.body).toEqual({ jsonrpc: '2.0', id: 43, error: { code: -32602, message: 'Invalid params: tools/list params: unknown member "cursr" (tools/list takes cursor, _meta)' } });
  });

  it('refuses an argument the tool\'s input schema does not list (additionalProperties: false), and calls nothing', async () => {
    const before = await categoryCount();
    const res = await rpc({ jsonrpc: '2.0', id: 44, method: 'tools/call', params: { name: 'post_api_shop_categories', arguments: { body: { name: 'x' }, bdy: { name: 'y' } } } });
    expect(res.body).toMatchObject({ id: 44, error: { code: -32602, message: 'Invalid arguments for post_api_shop_categories: unknown argument "bdy"' } });
    expect(await categoryCount()).toBe(before);
  });
});

describe('members JSON-RPC does not define', () => {
  it('refuses a request with an extra member as an invalid request with its id', async () => {
    const res = await rpc({ jsonrpc: '2.0', id: 1, method: 'ping', extra: 1 });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32600, message: 'Invalid Request: unknown member "extra": a request has only jsonrpc, id, method, params' } });
  });

  it('refuses a misspelt params rather than running the method without it', async () => {
    const before = await categoryCount();
    const { params, ...call } = createCategory(3, 'misspelt');
    const res = await rpc({ ...call, param: params });
    expect(res.body).toMatchObject({ id: 3, error: { code: -32600, message: expect.stringContaining('unknown member "param"') } });
    expect(await categoryCount()).toBe(before);
  });

  it('answers what only the SDK\'s schema rules out (params._meta of the wrong type) with the request\'s id, not as a parse error', async () => {
    const res = await rpc({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: 5 } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 4, error: { code: -32602, message: expect.stringMatching(/^Invalid params: tools\/list params\._meta: /) } });
    const response = await rpc({ jsonrpc: '2.0', id: 5, result: 1 });
    expect(response.body).toMatchObject({ id: 5, error: { code: -32600, message: expect.stringMatching(/^Invalid Request: result: /) } });
  });
});

describe('path variants', () => {
  it('/api/mcp/ with a trailing slash is the same endpoint', async () => {
    const res = await fetch(`${t.url}/api/mcp/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 9, result: {} });
  });
});
