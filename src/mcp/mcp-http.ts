// POST /api/mcp from the request's bytes to the answer, without Koa: http/routes/mcp.ts
// authenticates the caller and hands the request over. Every answer is JSON-RPC, the
// transport's own errors included (an error with id null, under the HTTP status that says what
// is wrong), so that an MCP client reads one format whatever happened:
//
// | the request                                       | HTTP | answer                      |
// |---------------------------------------------------|------|-----------------------------|
// | has no usable credentials                         | 401  | -32000, `WWW-Authenticate`  |
// | uses another method than POST (OPTIONS: 204)      | 405  | -32000, `Allow`             |
// | has a Content-Type other than application/json    | 415  | -32000                      |
// | has a body over the limit                         | 413  | -32000                      |
// | is not JSON                                       | 400  | -32700                      |
// | is refused before anything runs (json-rpc.ts)     | 400  | -32600 / -32602             |
// | runs (a method's error included)                  | 200  | the answer, or an array     |
// | holds notifications only                          | 202  | no body                     |
//
// A batch is answered with an array, one answer per request in the batch's order: a message
// refused here gets its error in its place and the others run (JSON-RPC 2.0 §6); when every
// message is refused, nothing ran, and the array comes with a 400. The server runs on the SDK's
// web-standard transport, stateless (a new server and transport per request), answering JSON,
// never an SSE stream.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { AuditLog } from '../services/audit-log.ts';
import { auditMcpCalls } from './audit.ts';
import { checkBody, type Entry, INVALID_PARAMS, type JsonRpcFailure, type JsonRpcId, PARSE_ERROR, requestsOf, rpcError } from './json-rpc.ts';
import { createMcpServer, initializeRequest, type McpCaller, type McpDeps } from './mcp-server.ts';

export const MCP_PATH = '/api/mcp';

/** The methods the path is served with. */
export const MCP_ALLOW = 'POST, OPTIONS';

/** JSON-RPC's code for errors of the server itself, which the SDK's transport uses for its HTTP refusals too. */
const TRANSPORT_ERROR = -32000;

export interface McpHttpAnswer {
  status: number;
  headers: Record<string, string>;
  /** undefined: no body. */
  body: unknown;
}

export interface McpPost {
  /** The request's Content-Type and Content-Length headers ('' when absent). */
  contentType: string;
  contentLength: string;
  /** The client's MCP-Protocol-Version header ('' when absent). */
  protocolVersion: string;
  body: AsyncIterable<Uint8Array>;
}

export interface McpHttpDeps extends McpDeps {
  audit: Pick<AuditLog, 'enqueue'>;
  bodyLimitBytes: number;
}

const answer = (status: number, body: unknown, headers: Record<string, string> = {}): McpHttpAnswer => ({ status, headers, body });

export const transportError = (status: number, message: string, headers: Record<string, string> = {}): McpHttpAnswer => answer(status, rpcError(TRANSPORT_ERROR, message), headers);

/** No usable credentials (the MCP route names Bearer, the scheme MCP clients send). */
export const unauthenticated = (message: string): McpHttpAnswer => transportError(401, message, { 'WWW-Authenticate': 'Bearer realm="dyn"' });

/** Any method but POST: OPTIONS names the methods; the others (no streams to GET, no session to DELETE) are 405. */
export function otherMethod(method: string): McpHttpAnswer {
  if (method === 'OPTIONS') return answer(204, undefined, { Allow: MCP_ALLOW });
  return transportError(405, 'Method Not Allowed: the MCP endpoint takes POST only (stateless, JSON responses)', { Allow: MCP_ALLOW });
}

/** The answer to a POST of the caller. */
export async function answerMcpPost(post: McpPost, deps: McpHttpDeps, caller: McpCaller): Promise<McpHttpAnswer> {
  if (!isJsonType(post.contentType)) return transportError(415, 'Unsupported Media Type: Content-Type must be application/json');
  const text = await readText(post, deps.bodyLimitBytes);
  if (text === null) return transportError(413, `Payload Too Large: the body is larger than the limit of ${deps.bodyLimitBytes} bytes`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return answer(400, rpcError(PARSE_ERROR, 'Parse error: the body is not valid JSON'));
  }
  const checked = checkBody(body);
  if ('error' in checked) return answer(400, checked.error);
  const entries = checked.entries.map(withInitializeParams);
  const runnable = entries.flatMap((entry) => ('message' in entry ? [entry.message] : []));
  const refused = entries.flatMap((entry) => ('refused' in entry ? [entry.refused] : []));
  if (runnable.length === 0) return answer(400, checked.batch ? refused : refused[0]);
  auditMcpCalls(deps.audit, requestsOf(runnable), caller);
  const ran = await run(checked.batch ? runnable : runnable[0], post.protocolVersion, deps, caller);
  // A message alone, or the SDK's own refusal of the whole body (an unsupported protocol version).
  if (!checked.batch || (ran.status !== 200 && ran.status !== 202)) return answer(ran.status, ran.body);
  const answers = inBatchOrder(entries, ran.body);
  return answers.length === 0 ? answer(202, undefined) : answer(200, answers);
}

function isJsonType(contentType: string): boolean {
  return contentType.split(';')[0]?.trim().toLowerCase() === 'application/json';
}

/** The body as text, or null when it is larger than the limit (read no further). */
async function readText(post: McpPost, limit: number): Promise<string | null> {
  if (Number(post.contentLength || 0) > limit) return null;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of post.body) {
    size += chunk.length;
    if (size > limit) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** `initialize` with what the spec lets a client leave out filled in, or refused (mcp-server.ts). */
function withInitializeParams(entry: Entry): Entry {
  if (!('message' in entry)) return entry;
  const filled = initializeRequest(entry.message);
  if ('message' in filled) return { message: filled.message };
  return { refused: rpcError(INVALID_PARAMS, `Invalid params: ${filled.invalid}`, (entry.message.id as JsonRpcId | undefined) ?? null) };
}

/** Runs messages (one, or a batch as an array) on a new server and transport; the SDK's status and parsed answer. */
async function run(messages: unknown, protocolVersion: string, deps: McpDeps, caller: McpCaller): Promise<{ status: number; body: unknown }> {
  const server = createMcpServer(deps, caller);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    // The SDK reads the headers below and the body given here. Answers are JSON whatever the
    // client accepts; the SDK insists on both types being accepted.
    const headers = new Headers({ accept: 'application/json, text/event-stream', 'content-type': 'application/json' });
    if (protocolVersion) headers.set('mcp-protocol-version', protocolVersion);
    const response = await transport.handleRequest(new Request(`http://localhost${MCP_PATH}`, { method: 'POST', headers }), { parsedBody: messages });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  } finally {
    await server.close();
  }
}

/**
 * A batch's answers in the order of its messages: a refused message's error where it was, a
 * request's answer from the server's (matched by id, unique in a batch: json-rpc.ts), nothing
 * for a notification or a response. The SDK answers a batch of one request bare.
 */
function inBatchOrder(entries: readonly Entry[], ran: unknown): unknown[] {
  const byId = new Map<string, unknown>();
  for (const reply of ran === undefined ? [] : Array.isArray(ran) ? ran : [ran]) byId.set(idKey((reply as { id: JsonRpcId }).id), reply);
  return entries.flatMap((entry): unknown[] => {
    if ('refused' in entry) return [entry.refused satisfies JsonRpcFailure];
    const { message } = entry;
    const reply = typeof message.method === 'string' && 'id' in message ? byId.get(idKey(message.id as JsonRpcId)) : undefined;
    return reply === undefined ? [] : [reply];
  });
}

/** 7 and "7" are different ids. */
const idKey = (id: JsonRpcId): string => `${typeof id}:${String(id)}`;
