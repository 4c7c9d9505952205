import type { Next } from 'koa';
import type { DynContext } from '../state.ts';

/**
 * CORS from CORS_ORIGINS: unset sends no CORS headers (same-origin only); `*` allows any
 * origin without credentials; a list allows those origins with credentials.
 */
export interface CorsPolicy {
  /** The headers a request from this origin gets (name/value pairs, `Vary: Origin` first), or null for none. */
  headersFor(origin: string | undefined): readonly (readonly [string, string])[] | null;
}

export function corsPolicy(origins: readonly string[]): CorsPolicy {
  const any = origins.includes('*');
  const allowed = new Set(origins.filter((o) => o !== '*'));
  const anyOrigin = [['Vary', 'Origin'], ['Access-Control-Allow-Origin', '*'], ['Access-Control-Expose-Headers', 'Retry-After']] as const;
  return {
    headersFor(origin) {
      if (!origin || (!any && !allowed.has(origin))) return null;
      if (!allowed.has(origin)) return anyOrigin;
      return [['Vary', 'Origin'], ['Access-Control-Allow-Origin', origin], ['Access-Control-Allow-Credentials', 'true'], ['Access-Control-Expose-Headers', 'Retry-After']];
    },
  };
}

export function cors(origins: readonly string[]) {
  const policy = corsPolicy(origins);
  return async (ctx: DynContext, next: Next): Promise<void> => {
    const headers = policy.headersFor(ctx.get('Origin'));
    if (!headers) {
      await next();
      return;
    }
    for (const [name, value] of headers) {
      if (name === 'Vary') ctx.vary(value);
      else ctx.set(name, value);
    }
    if (ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method')) {
      ctx.set('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS');
      // Mcp-Protocol-Version: a browser-based MCP client sends it on every request after initialize.
      ctx.set('Access-Control-Allow-Headers', 'Authorization, Content-Type, X-API-Key, X-CSRF-Token, Mcp-Protocol-Version');
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return;
    }
    await next();
  };
}
