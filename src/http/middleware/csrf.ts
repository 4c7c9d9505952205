import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Next } from 'koa';
import { forbidden } from '../../lib/errors.ts';
import { secureCookies } from '../session-cookies.ts';
import type { DynContext } from '../state.ts';

/**
 * Double-submit CSRF protection for cookie sessions: GET /api/csrf-token sets a random token
 * as a cookie and returns it; a state-changing request authenticated by the session cookie
 * must echo it in X-CSRF-Token. Header-authenticated requests (Bearer, API key) cannot be
 * forged cross-site and are not checked.
 */
export const CSRF_COOKIE = 'dyn_csrf';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function issueCsrfToken(ctx: DynContext): string {
  const token = randomBytes(32).toString('base64url');
  ctx.cookies.set(CSRF_COOKIE, token, { httpOnly: false, sameSite: 'strict', path: '/', secure: secureCookies(ctx), overwrite: true });
  return token;
}

/** Throws 403 unless X-CSRF-Token matches the CSRF cookie; for routes that read a session cookie themselves. */
export function assertCsrfToken(ctx: DynContext): void {
  const cookie = Buffer.from(ctx.cookies.get(CSRF_COOKIE) ?? '');
  const header = Buffer.from(ctx.get('X-CSRF-Token'));
  // Compared as bytes: the same number of characters may be a different number of bytes.
  const matches = cookie.length > 0 && cookie.length === header.length && timingSafeEqual(cookie, header);
  if (!matches) throw forbidden('Missing or invalid CSRF token: send the value of GET /api/csrf-token in X-CSRF-Token');
}

export function csrfProtection() {
  return async (ctx: DynContext, next: Next): Promise<void> => {
    if (ctx.state.authVia === 'cookie' && !SAFE_METHODS.has(ctx.method)) assertCsrfToken(ctx);
    await next();
  };
}
