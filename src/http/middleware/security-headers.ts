import type { Next } from 'koa';
import type { DynContext } from '../state.ts';

/**
 * Conservative headers for a JSON API; every response gets them, errors included. As name/value
 * pairs in the order they are sent, so the dynamic fast path (fast-path.ts) writes the same ones.
 */
export function securityHeaderPairs(options: { production: boolean }): readonly (readonly [string, string])[] {
  return [
    ['X-Content-Type-Options', 'nosniff'],
    ['X-Frame-Options', 'DENY'],
    ['Referrer-Policy', 'no-referrer'],
    ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
    ['Cross-Origin-Opener-Policy', 'same-origin'],
    ['X-Permitted-Cross-Domain-Policies', 'none'],
    ...(options.production ? [['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'] as const] : []),
  ];
}

export function securityHeaders(options: { production: boolean }) {
  const pairs = securityHeaderPairs(options);
  return async (ctx: DynContext, next: Next): Promise<void> => {
    for (const [name, value] of pairs) ctx.set(name, value);
    await next();
  };
}
