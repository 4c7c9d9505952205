import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AppError } from '../../lib/errors.ts';
import type { OpenApiDocs } from '../../docs/openapi-docs.ts';
import { auditMcpCalls } from '../../mcp/audit.ts';
import { checkMessages, INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, requestsOf, rpcError, type JsonRpcFailure } from '../../mcp/json-rpc.ts';
import { createMcpServer, initializeRequest } from '../../mcp/mcp-server.ts';
import type { Engine } from '../../runtime/engine.ts';
import type { AuditLog } from '../../services/audit-log.ts';
import { inspectParsedBody } from '../middleware/body.ts';
import type { DynContext } from '../state.ts';
import type { ApiRouter } from './router.ts';

// POST /api/mcp: the MCP server on the Streamable HTTP transport, stateless (no session: a new
// SDK server and transport per request) and answering in JSON, never an SSE stream; GET and
// DELETE (streams, sessions) are 405. A JWT or an API key is required. The body is read here
// rather than by the JSON body middleware (app.ts skips this path), so that malformed JSON is a
// JSON-RPC parse error, and checked whole (json-rpc.ts) before any message of it runs. The SDK's
// web-standard transport hands its answer back rather than writing it, so Koa sends it (and
// renders any failure the usual way) and a batch of one is answered with an array.
export const MCP_PATH = '/api/mcp';

interface McpRouteDeps {
  engine: Engine;
  openApi: OpenApiDocs;
  audit: AuditLog;
  config: { bodyLimitBytes: number };
}

export function mcpRoutes(router: ApiRouter, deps: McpRouteDeps, version: string): void {
  // Stateless: no server-initiated stream to GET and no session to DELETE (clients expect a 405).
  const noStreams = () => {
    throw new AppError(405, 'The MCP endpoint takes POST only (stateless, JSON responses)', { headers: { Allow: 'POST' } });
  };
  router.get('/mcp', noStreams);
  router.delete('/mcp', noStreams);

  router.post('/mcp', async (ctx) => {
    const principal = ctx.state.principal;
    if (!principal) throw new AppError(401, ctx.state.authError ?? 'Authentication required: send a Bearer token or an API key', { headers: { 'WWW-Authenticate': 'Bearer realm="dyn"' } });
    if (!ctx.is('application/json')) return rpcReply(ctx, 415, rpcError(-32000, 'Unsupported Media Type: Content-Type must be application/json'));
    const text = await readBody(ctx, deps.config.bodyLimitBytes);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return rpcReply(ctx, 400, rpcError(PARSE_ERROR, 'Parse error: the body is not valid JSON'));
    }
    try {
      inspectParsedBody(body);
    } catch (error) {
      if (error instanceof AppError) return rpcReply(ctx, 400, rpcError(INVALID_REQUEST, `Invalid Request: ${error.message}`));
      throw error;
    }
    const checked = checkMessages(body);
    if ('error' in checked) return rpcReply(ctx, 400, checked.error);
    const messages: Record<string, unknown>[] = [];
    for (const message of checked.messages) {
      const initialize = initializeRequest(message);
      if ('invalid' in initialize) return rpcReply(ctx, 400, rpcError(INVALID_PARAMS, `Invalid params: ${initialize.invalid}`, (message.id as string | number | undefined) ?? null));
      messages.push(initialize.message);
    }
    const caller = { principal, ip: ctx.state.clientIp, headers: { origin: ctx.get('Origin') || undefined, referer: ctx.get('Referer') || undefined, host: ctx.get('Host') || undefined } };
    auditMcpCalls(deps.audit, requestsOf(messages), caller);

    const server = createMcpServer({ engine: deps.engine, openApi: deps.openApi, version }, caller);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      // The SDK reads the headers below and the body given here. Answers are JSON whatever the
      // client accepts; the SDK insists on both types being accepted.
      const headers = new Headers({ accept: 'application/json, text/event-stream', 'content-type': 'application/json' });
      const protocolVersion = ctx.get('Mcp-Protocol-Version');
      if (protocolVersion) headers.set('mcp-protocol-version', protocolVersion);
      const response = await transport.handleRequest(new Request(`http://localhost${MCP_PATH}`, { method: 'POST', headers }), { parsedBody: checked.batch ? messages : messages[0] });
      const text = await response.text();
      if (!text) {
        // Notifications only: 202 with no body (a null body first, or Koa would make it a 204).
        ctx.body = null;
        ctx.status = response.status;
        return;
      }
      const answer: unknown = JSON.parse(text);
      ctx.status = response.status;
      // JSON-RPC answers a batch with an array; the SDK answers a batch of one request bare.
      ctx.body = checked.batch && response.ok && !Array.isArray(answer) ? [answer] : answer;
    } finally {
      await server.close();
    }
  });
}

function rpcReply(ctx: DynContext, status: number, failure: JsonRpcFailure): void {
  ctx.status = status;
  ctx.body = failure;
}

/** The raw body, up to the configured limit (413 beyond it). */
async function readBody(ctx: DynContext, limit: number): Promise<string> {
  const declared = Number(ctx.get('Content-Length') || 0);
  if (declared > limit) throw new AppError(413, `Request body is larger than the limit of ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new AppError(413, `Request body is larger than the limit of ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
