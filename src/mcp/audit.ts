// One `mcp_call` audit entry per JSON-RPC request (notifications are not calls). The endpoint
// a tools/call runs writes its own api_call/error entry with the status, as any call does.
import type { Principal } from '../model/principal.ts';
import type { AuditLog } from '../services/audit-log.ts';
import type { JsonRpcRequest } from './json-rpc.ts';

export function auditMcpCalls(audit: Pick<AuditLog, 'enqueue'>, requests: readonly JsonRpcRequest[], caller: { principal: Principal; ip: string }): void {
  const who = caller.principal.kind === 'user' ? caller.principal.login : `API key "${caller.principal.name}"`;
  for (const request of requests) {
    const tool = request.method === 'tools/call' ? (request.params as { name?: unknown } | undefined)?.name : undefined;
    const uri = request.method === 'resources/read' ? (request.params as { uri?: unknown } | undefined)?.uri : undefined;
    const target = typeof tool === 'string' ? ` ${tool.slice(0, 128)}` : typeof uri === 'string' ? ` ${uri.slice(0, 200)}` : '';
    audit.enqueue({
      action: 'mcp_call',
      message: `MCP ${request.method.slice(0, 128)}${target} by ${who}`,
      source: 'mcp',
      ip: caller.ip,
      userId: caller.principal.kind === 'user' ? caller.principal.userId : null,
      method: 'POST',
      path: '/api/mcp',
    });
  }
}
