import { expect } from 'vitest';
import type { TestServer } from '../helpers/test-server.ts';

// What POST /api/mcp answers, as a table: the transport's own errors in JSON-RPC, bodies checked
// before they run (ids kept), batches answered per message. transport.test.ts sends each over
// real HTTP.

export interface Scenario {
  name: string;
  /** POST unless given. */
  method?: string;
  /** Sent without credentials. */
  anonymous?: true;
  /** application/json unless given; null: no Content-Type. */
  contentType?: string | null;
  headers?: Record<string, string>;
  /** Sent JSON-encoded, or as it is when a string. */
  body?: unknown;
  status: number;
  /** The whole answer over HTTP (undefined: no body). */
  answer: unknown;
  /** Response headers expected among the answer's. */
  headersOut?: Record<string, string>;
}

const ALLOW = { Allow: 'POST, OPTIONS' };

/** `{a: {a: … 1}}`, `levels` objects deep. */
const nested = (levels: number): unknown => (levels === 0 ? 1 : { a: nested(levels - 1) });
const hand = (id: number, body: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'post_api_hand', arguments: { body } } });
const handResult = (id: number, body: unknown) => ({ jsonrpc: '2.0', id, result: expect.objectContaining({ isError: false, structuredContent: { status: 200, response: { success: true, data: body } } }) });
const failure = (id: string | number | null, code: number, message: string | ReturnType<typeof expect.stringMatching>) => ({ jsonrpc: '2.0', id, error: { code, message } });

/** The handler endpoint the scenarios call: it answers the body it was sent. */
export async function defineHand(t: TestServer, admin: string): Promise<void> {
  const code = 'async function handler(req) { return { status: 200, data: req.body }; }';
  const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'hand', method: 'POST', path: '/api/hand', accessType: 'public', schema: {}, handler: { enabled: true, code } } });
  if (res.status !== 201) throw new Error(`defining /api/hand: ${res.status} ${res.text}`);
}

export const BODY_LIMIT = 1_048_576;

export const transportErrors: Scenario[] = [
  { name: 'a body over the limit: 413', body: hand(1, { text: 'x'.repeat(BODY_LIMIT) }), status: 413, answer: failure(null, -32000, `Payload Too Large: the body is larger than the limit of ${BODY_LIMIT} bytes`) },
  { name: 'no Content-Type: 415', contentType: null, body: '{}', status: 415, answer: failure(null, -32000, 'Unsupported Media Type: Content-Type must be application/json') },
  { name: 'a text/plain body: 415', contentType: 'text/plain', body: '{}', status: 415, answer: failure(null, -32000, 'Unsupported Media Type: Content-Type must be application/json') },
  { name: 'malformed JSON: 400, -32700', body: '{"jsonrpc": "2.0", "id": 1,', status: 400, answer: failure(null, -32700, 'Parse error: the body is not valid JSON') },
  {
    name: 'no credentials: 401, naming Bearer',
    anonymous: true,
    body: { jsonrpc: '2.0', id: 1, method: 'ping' },
    status: 401,
    answer: failure(null, -32000, 'Authentication required: send a Bearer token or an API key'),
    headersOut: { 'WWW-Authenticate': 'Bearer realm="dyn"' },
  },
  {
    name: 'a protocol version the SDK does not support: its 400',
    headers: { 'mcp-protocol-version': '1999-01-01' },
    body: { jsonrpc: '2.0', id: 1, method: 'ping' },
    status: 400,
    answer: failure(null, -32000, expect.stringMatching(/^Bad Request: Unsupported protocol version: 1999-01-01/)),
  },
  ...['GET', 'DELETE', 'PUT', 'PATCH'].map((method): Scenario => ({
    name: `${method}: 405, Allow naming what is served`,
    method,
    status: 405,
    answer: failure(null, -32000, 'Method Not Allowed: the MCP endpoint takes POST only (stateless, JSON responses)'),
    headersOut: ALLOW,
  })),
  { name: 'HEAD: 405, Allow naming what is served', method: 'HEAD', status: 405, answer: undefined, headersOut: ALLOW },
  { name: 'OPTIONS: 204 with Allow', method: 'OPTIONS', status: 204, answer: undefined, headersOut: ALLOW },
];

export const checkedMessages: Scenario[] = [
  {
    name: 'a __proto__ key in arguments: invalid params with the id',
    body: '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"post_api_hand","arguments":{"__proto__":{"body":{}}}}}',
    status: 400,
    answer: failure(7, -32602, 'Invalid params: tools/call params.arguments: the key "__proto__" is not allowed'),
  },
  {
    name: 'a prototype key in params: invalid params with the id',
    body: { jsonrpc: '2.0', id: 'p', method: 'tools/list', params: { prototype: {} } },
    status: 400,
    answer: failure('p', -32602, 'Invalid params: tools/list params: the key "prototype" is not allowed'),
  },
  {
    name: 'a __proto__ key inside a tool\'s body: left to the endpoint, as POST /api/hand leaves it',
    body: '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"post_api_hand","arguments":{"body":{"a":{"__proto__":1}}}}}',
    status: 200,
    answer: { jsonrpc: '2.0', id: 7, result: expect.objectContaining({ isError: false, structuredContent: expect.objectContaining({ status: 200 }) }) },
  },
  { name: 'a tool body 33 levels deep, as deep as POST /api/hand takes', body: hand(8, nested(33)), status: 200, answer: handResult(8, nested(33)) },
  {
    name: 'a tool body 34 levels deep: invalid request with the id, as POST /api/hand refuses it',
    body: hand(9, nested(34)),
    status: 400,
    answer: failure(9, -32600, 'Invalid Request: the message is nested more than 35 levels deep (a tool\'s body may be nested as deep as on a direct call)'),
  },
  { name: 'an id beyond 2^53 - 1: invalid request with id null', body: '{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}', status: 400, answer: failure(null, -32600, 'Invalid Request: id must be a string or an integer of at most 2^53 - 1 in size') },
];

export const batches: Scenario[] = [
  {
    name: 'a batch with an entry that is no message: the others answered, the entry refused in its place',
    body: [{ jsonrpc: '2.0', id: 1, method: 'ping' }, 1],
    status: 200,
    answer: [{ jsonrpc: '2.0', id: 1, result: {} }, failure(null, -32600, 'Invalid Request: message 1: a message must be a JSON object')],
  },
  {
    name: 'a batch with params by position in one request: that request refused with its id, the other answered',
    body: [{ jsonrpc: '2.0', id: 'a', method: 'ping' }, { jsonrpc: '2.0', id: 'b', method: 'tools/list', params: [1] }],
    status: 200,
    answer: [{ jsonrpc: '2.0', id: 'a', result: {} }, failure('b', -32602, 'Invalid params: message 1: tools/list params must be an object')],
  },
  {
    name: 'a batch with a notification that has an extra member: refused with id null, the request answered',
    body: [{ jsonrpc: '2.0', id: 'a', method: 'ping' }, { jsonrpc: '2.0', method: 'notifications/initialized', extra: true }],
    status: 200,
    answer: [{ jsonrpc: '2.0', id: 'a', result: {} }, failure(null, -32600, 'Invalid Request: message 1: unknown member "extra": a request has only jsonrpc, id, method, params')],
  },
  {
    name: 'a batch of a notification and a refused request: the error alone',
    body: [{ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: {} }],
    status: 200,
    answer: [failure(3, -32602, 'Invalid params: message 1: tools/call params.name: required')],
  },
  {
    name: 'a batch whose every entry is refused: 400, an error per entry',
    body: [1, { jsonrpc: '2.0', id: 2, method: 'ping', extra: 1 }],
    status: 400,
    answer: [failure(null, -32600, 'Invalid Request: message 0: a message must be a JSON object'), failure(2, -32600, 'Invalid Request: message 1: unknown member "extra": a request has only jsonrpc, id, method, params')],
  },
  {
    name: 'a batch with a repeated id: refused whole',
    body: [{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 1, method: 'ping' }],
    status: 400,
    answer: failure(null, -32600, 'Invalid Request: message 1: id 1 is already the id of message 0; each request of a batch needs its own id'),
  },
];
