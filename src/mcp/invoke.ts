// The one way MCP (and later cron) runs a dynamic endpoint: a target (endpoint id, or method and
// path) and a request go through the engine's dispatch, the same path as a live HTTP call.
// This adapter has the shape of `engine.invoke` (being added to the engine); at the merge it is
// replaced by that call.
import { fillPattern } from '../lib/paths.ts';
import type { Principal } from '../model/principal.ts';
import type { Engine } from '../runtime/engine.ts';

export type InvokeTarget = string | { method: string; path: string };

export interface InvokeRequest {
  headers?: Record<string, string | undefined>;
  query?: Record<string, string | string[] | undefined>;
  body?: unknown;
  ip?: string;
  params?: Record<string, string>;
  recordId?: string;
  skipNetworkRules?: boolean;
  source?: 'http' | 'test' | 'mcp' | 'cron';
}

export interface InvokeResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const failure = (status: number, error: string): InvokeResult => ({ status, body: { success: false, error } });

export async function invokeEndpoint(engine: Pick<Engine, 'table' | 'dispatch' | 'dispatchMatch'>, target: InvokeTarget, request: InvokeRequest, principal: Principal | undefined): Promise<InvokeResult> {
  const base = {
    headers: request.headers ?? {},
    query: request.query ?? {},
    body: request.body,
    ip: request.ip ?? '',
    principal,
    ...(request.skipNetworkRules ? { skipNetworkRules: true } : {}),
  };
  if (typeof target !== 'string') {
    const response = await engine.dispatch({ ...base, method: target.method, path: target.path });
    return response ? pick(response) : failure(404, `No route for ${target.method} ${target.path}`);
  }
  const table = await engine.table();
  const endpoint = table.endpoints.find((e) => e.doc._id === target);
  if (!endpoint) return failure(404, 'Endpoint not found or not enabled');
  const params = request.params ?? {};
  const missing = endpoint.pattern.paramNames.filter((name) => !params[name]);
  if (missing.length > 0) return failure(400, `Missing path parameters: ${missing.join(', ')}`);
  const path = fillPattern(endpoint.pattern, params) + (request.recordId !== undefined ? `/${encodeURIComponent(request.recordId)}` : '');
  const ownParams = Object.fromEntries(endpoint.pattern.paramNames.map((name) => [name, params[name] as string]));
  const response = await engine.dispatchMatch(table, { endpoint, params: ownParams, id: request.recordId ?? null }, { ...base, method: endpoint.doc.method, path });
  return pick(response);
}

function pick(response: { status: number; body: unknown; headers?: Record<string, string> }): InvokeResult {
  return { status: response.status, body: response.body, ...(response.headers ? { headers: response.headers } : {}) };
}
