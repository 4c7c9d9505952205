// The engine call the endpoint action makes, in the shape of the engine's coming `invoke` (one invoke
// path for HTTP, /test, MCP and cron). Until that lands this adapter maps it onto `dispatch`; at the
// merge `invokeVia(engine)` becomes `engine.invoke.bind(engine)`.
import type { Principal } from '../../model/principal.ts';
import type { Engine } from '../../runtime/engine.ts';

export type InvokeTarget = string /* endpoint id */ | { method: string; path: string };

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

export interface InvokeResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export type Invoke = (target: InvokeTarget, request: InvokeRequest, principal: Principal | undefined) => Promise<InvokeResponse>;

export function invokeVia(engine: Engine): Invoke {
  return async (target, request, principal) => {
    if (typeof target === 'string') throw new Error('invoking an endpoint by id needs engine.invoke');
    const response = await engine.dispatch({
      method: target.method.toUpperCase(),
      path: target.path,
      headers: request.headers ?? {},
      query: request.query ?? {},
      body: request.body,
      ip: request.ip ?? '',
      principal,
      skipNetworkRules: request.skipNetworkRules ?? false,
    });
    if (!response) return { status: 404, body: { success: false, error: `No endpoint serves ${target.method.toUpperCase()} ${target.path}` } };
    return { status: response.status, body: response.body, ...(response.headers ? { headers: response.headers } : {}) };
  };
}
