import { answerMcpPost, MCP_PATH, otherMethod, unauthenticated, type McpHttpAnswer } from '../../mcp/mcp-http.ts';
import type { OpenApiDocs } from '../../docs/openapi-docs.ts';
import type { Engine } from '../../runtime/engine.ts';
import type { AuditLog } from '../../services/audit-log.ts';
import type { DynContext } from '../state.ts';
import type { ApiRouter } from './router.ts';

// /api/mcp: the MCP server (src/mcp/mcp-http.ts answers every request, in JSON-RPC, transport
// errors included). This route authenticates and hands the request over: the body is read there
// rather than by the JSON body middleware (app.ts skips this path), so that malformed JSON is a
// JSON-RPC parse error and the whole body is checked before any message of it runs.
export { MCP_PATH };

interface McpRouteDeps {
  engine: Engine;
  openApi: OpenApiDocs;
  audit: AuditLog;
  config: { bodyLimitBytes: number };
}

export function mcpRoutes(router: ApiRouter, deps: McpRouteDeps, version: string): void {
  const served = { engine: deps.engine, openApi: deps.openApi, audit: deps.audit, version, bodyLimitBytes: deps.config.bodyLimitBytes };
  router.post('/mcp', async (ctx) => {
    const principal = ctx.state.principal;
    if (!principal) return send(ctx, unauthenticated(ctx.state.authError ?? 'Authentication required: send a Bearer token or an API key'));
    const caller = { principal, ip: ctx.state.clientIp, headers: { origin: ctx.get('Origin') || undefined, referer: ctx.get('Referer') || undefined, host: ctx.get('Host') || undefined } };
    const post = { contentType: ctx.get('Content-Type'), contentLength: ctx.get('Content-Length'), protocolVersion: ctx.get('Mcp-Protocol-Version'), body: ctx.req };
    send(ctx, await answerMcpPost(post, served, caller));
  });
  // Every other method, so that Allow names only what is served (the router's own 405 would list
  // the methods of routes registered here).
  router.all('/mcp', (ctx) => send(ctx, otherMethod(ctx.method)));
}

function send(ctx: DynContext, answer: McpHttpAnswer): void {
  ctx.set(answer.headers);
  // No body: null first, or Koa would make a 202 a 204.
  ctx.body = answer.body === undefined ? null : answer.body;
  ctx.status = answer.status;
}
