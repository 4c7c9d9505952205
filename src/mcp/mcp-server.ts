// The MCP server of one caller, on the official SDK's low-level Server (raw JSON Schemas as
// input schemas). Built per HTTP request (the transport is stateless), so every handler knows
// who is calling. Tools run through the engine's invoke path as the caller, with the network
// rules applied to the caller's address and headers, like a direct call would be.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { type CallToolRequest, type CallToolResult, DEFAULT_NEGOTIATED_PROTOCOL_VERSION, InitializeRequestSchema, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import type { Principal } from '../model/principal.ts';
import type { Engine } from '../runtime/engine.ts';
import type { OpenApiDocs } from '../docs/openapi-docs.ts';
import { INVALID_PARAMS, RpcMethodError } from './json-rpc.ts';
import { type ArgumentsRefusal, readArguments } from './tool-arguments.ts';
import { cursorAfter, pageStart } from './tools-cursor.ts';
import { toolsFor } from './tools.ts';

export const OPENAPI_RESOURCE = 'openapi://dyn/openapi.json';
/** MCP's code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;

export interface McpCaller {
  principal: Principal;
  ip: string;
  /** The HTTP request's lower-case headers that network rules read (origin, referer, host). */
  headers: Record<string, string | undefined>;
}

export interface McpDeps {
  engine: Pick<Engine, 'table' | 'invoke'>;
  openApi: Pick<OpenApiDocs, 'json'>;
  version: string;
}

// Params are checked in the handlers (or by the SDK's tools/call wrapper): the SDK's own request
// schemas would report malformed params as an internal error rather than as invalid params.
// The list methods take only a paging cursor: tools/list pages by TOOLS_PER_PAGE (a tenant with
// thousands of endpoints would otherwise answer megabytes at once); resources/list has one page.
const loose = <M extends string>(method: M) => z.object({ method: z.literal(method), params: z.unknown().optional() });
const ListTools = loose('tools/list');
const CallToolLoose = loose('tools/call');
const ListResources = loose('resources/list');
const ReadResourceLoose = loose('resources/read');

/**
 * An `initialize` request as the SDK takes it. The JSON-RPC shape the spec gives makes `params`
 * optional, so a client written from it may send the handshake bare; the SDK would answer that
 * with an internal error. Missing members are filled in (the newest protocol version, no
 * capabilities, an unnamed client); a member of the wrong type is an invalid-params error.
 */
export function initializeRequest(message: Record<string, unknown>): { message: Record<string, unknown> } | { invalid: string } {
  if (message.method !== 'initialize') return { message };
  const params = message.params ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return { invalid: 'initialize params must be an object' };
  const filled = { ...message, params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'unnamed client', version: '0' }, ...params } };
  const checked = InitializeRequestSchema.safeParse(filled);
  if (checked.success) return { message: filled };
  const issue = checked.error.issues[0];
  const field = issue?.path.filter((key, i) => !(i === 0 && key === 'params')).join('.');
  return { invalid: `initialize params: ${issue ? `${field || 'params'}: ${issue.message}` : 'invalid'}`.slice(0, 300) };
}

export function createMcpServer(deps: McpDeps, caller: McpCaller): Server {
  const server = new Server(
    { name: 'dyn', version: deps.version },
    { capabilities: { tools: { listChanged: false }, resources: { listChanged: false } }, instructions: 'Each tool calls one dynamic endpoint of this dyn service as the authenticated caller. The OpenAPI document is the resource openapi://dyn/openapi.json.' },
  );

  server.setRequestHandler(ListTools, async (request) => {
    // Only what this caller can use from where it is: a tool its network rules refuse to the
    // caller's address or headers is left out too (a call of it still answers the 403).
    const from = { ip: caller.ip, origin: caller.headers.origin, referer: caller.headers.referer, host: caller.headers.host };
    const tools = toolsFor(await deps.engine.table(), caller.principal).filter((tool) => tool.endpoint.network.allows(from));
    const start = pageStart(tools, (request.params as { cursor?: unknown } | undefined)?.cursor);
    const page = tools.slice(start, start + TOOLS_PER_PAGE);
    const last = page.at(-1);
    const next = last && start + TOOLS_PER_PAGE < tools.length ? cursorAfter(last) : undefined;
    return { tools: page.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })), ...(next ? { nextCursor: next } : {}) };
  });

  server.setRequestHandler(CallToolLoose, async (raw, extra) => {
    // Server's tools/call wrapper has checked params against CallToolRequestSchema (-32602
    // otherwise); over HTTP, json-rpc.ts has refused what the method does not take before that.
    const { params } = raw as unknown as CallToolRequest;
    const tools = toolsFor(await deps.engine.table(), caller.principal);
    const tool = tools.find((t) => t.name === params.name);
    if (!tool) throw new RpcMethodError(INVALID_PARAMS, `Unknown tool: ${params.name.slice(0, 128)}`);
    const args = readArguments(tool, params.arguments ?? {});
    if ('refused' in args) return refusedArguments(args.refused, protocolVersionOf(extra.requestInfo));
    const result = await deps.engine.invoke(tool.endpoint.doc._id, {
      headers: { origin: caller.headers.origin, referer: caller.headers.referer, host: caller.headers.host, 'content-type': 'application/json' },
      ip: caller.ip,
      source: 'mcp',
      ...args.request,
    }, caller.principal);
    const structuredContent = { status: result.status, response: result.body };
    return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent, isError: result.status >= 400 };
  });

  server.setRequestHandler(ListResources, async () => ({
    resources: [{ uri: OPENAPI_RESOURCE, name: 'openapi', title: 'OpenAPI document', description: 'The OpenAPI 3.0 document of the endpoints you may call', mimeType: 'application/json' }],
  }));

  server.setRequestHandler(ReadResourceLoose, async (request) => {
    const uri = (request.params as { uri?: unknown } | undefined)?.uri;
    if (typeof uri !== 'string') throw new RpcMethodError(INVALID_PARAMS, 'Invalid params: resources/read params.uri: must be a string');
    if (uri !== OPENAPI_RESOURCE) throw new RpcMethodError(RESOURCE_NOT_FOUND, `Resource not found: ${uri.slice(0, 200)}`);
    const text = await deps.openApi.json({ principal: caller.principal, from: { ip: caller.ip, origin: caller.headers.origin, referer: caller.headers.referer, host: caller.headers.host } });
    return { contents: [{ uri, mimeType: 'application/json', text }] };
  });

  return server;
}

/** Tools per tools/list page (a few hundred kilobytes of descriptions and input schemas). */
export const TOOLS_PER_PAGE = 500;

/**
 * The protocol revision a request is made under: the stateless transport hands the client's
 * `MCP-Protocol-Version` header on (the SDK has refused one it does not support); without it the
 * Streamable HTTP transport says to assume 2025-03-26, as the SDK does.
 */
function protocolVersionOf(requestInfo: { headers: Record<string, string | string[] | undefined> } | undefined): string {
  const header = requestInfo?.headers['mcp-protocol-version'];
  return typeof header === 'string' ? header : DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
}

/** The first revision that answers a tool's input validation errors as tool results (SEP-1303). */
const TOOL_RESULT_VALIDATION = '2025-11-25';

/**
 * Arguments the tool's input schema rules out. From 2025-11-25 on they are a tool result with
 * `isError: true`, as the endpoint's own refusals are, so that a model reads what to correct;
 * the revisions before list them among the protocol errors, invalid params (-32602). Either way
 * the message and details are the same. (Revisions are dates: they compare as strings.)
 */
function refusedArguments(refusal: ArgumentsRefusal, protocolVersion: string): CallToolResult {
  if (protocolVersion < TOOL_RESULT_VALIDATION) throw new RpcMethodError(INVALID_PARAMS, refusal.message, { details: refusal.details });
  const structuredContent = { error: refusal.message, details: refusal.details };
  return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent, isError: true };
}
