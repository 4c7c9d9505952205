// The cookies of a browser session (`"cookie": true` at login): the access token for every path,
// the refresh token for /api/auth only, both httpOnly and SameSite=Strict, and `Secure` when the
// request came over HTTPS — to dyn itself, or to a trusted proxy that says so (dyn listens on
// plain HTTP behind the proxy that terminates TLS, so the socket alone never tells).
import type { TokenPair } from '../services/auth.ts';
import { isHttpsRequest } from '../lib/client-ip.ts';
import { ACCESS_COOKIE } from './middleware/authenticate.ts';
import type { DynContext } from './state.ts';

export const REFRESH_COOKIE = 'dyn_refresh';

/**
 * Whether cookies set on this request are `Secure`. The cookies module refuses a secure cookie on
 * a connection it takes for plain HTTP, so it is told what the proxy said.
 */
export function secureCookies(ctx: DynContext): boolean {
  const https = ctx.secure || isHttpsRequest(ctx.req.socket, ctx.get('X-Forwarded-Proto') || undefined, ctx.state.settings.trustedProxyMatcher);
  if (https) (ctx.cookies as { secure: boolean }).secure = true;
  return https;
}

export function setSessionCookies(ctx: DynContext, tokens: TokenPair): void {
  const base = { httpOnly: true, sameSite: 'strict' as const, secure: secureCookies(ctx), overwrite: true };
  ctx.cookies.set(ACCESS_COOKIE, tokens.accessToken, { ...base, path: '/', expires: new Date(tokens.accessTokenExpiresAt) });
  ctx.cookies.set(REFRESH_COOKIE, tokens.refreshToken, { ...base, path: '/api/auth', expires: new Date(tokens.refreshTokenExpiresAt) });
}

export function clearSessionCookies(ctx: DynContext): void {
  ctx.cookies.set(ACCESS_COOKIE, null, { path: '/' });
  ctx.cookies.set(REFRESH_COOKIE, null, { path: '/api/auth' });
}
