import type { Next } from 'koa';
import type { DynContext } from '../state.ts';

/**
 * CORS from CORS_ORIGINS: unset sends no CORS headers (same-origin only); `*` allows any
 * origin without credentials; a list allows those origins with credentials.
 */
export function cors(origins: readonly string[]) {
  const any = origins.includes('*');
  const allowed = new Set(origins.filter((o) => o !== '*'));
  return async (ctx: DynContext, next: Next): Promise<void> => {
    const origin = ctx.get('Origin');
    if (!origin || (!any && !allowed.has(origin))) {
      await next();
      return;
    }
    ctx.vary('Origin');
    ctx.set('Access-Control-Allow-Origin', allowed.has(origin) ? origin : '*');
    if (allowed.has(origin)) ctx.set('Access-Control-Allow-Credentials', 'true');
    ctx.set('Access-Control-Expose-Headers', 'Retry-After');
    if (ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method')) {
      ctx.set('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS');
      ctx.set('Access-Control-Allow-Headers', 'Authorization, Content-Type, X-API-Key, X-CSRF-Token');
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return;
    }
    await next();
  };
}
