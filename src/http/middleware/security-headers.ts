import type { Next } from 'koa';
import type { DynContext } from '../state.ts';

/** Conservative headers for a JSON API; every response gets them, errors included. */
export function securityHeaders(options: { production: boolean }) {
  return async (ctx: DynContext, next: Next): Promise<void> => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
    ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
    ctx.set('X-Permitted-Cross-Domain-Policies', 'none');
    if (options.production) ctx.set('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
    await next();
  };
}
