import { badRequest, unauthorized } from '../../lib/errors.ts';
import type { Services } from '../container.ts';
import { assertCsrfToken, issueCsrfToken } from '../middleware/csrf.ts';
import { requireUser } from '../middleware/require-permission.ts';
import { ok } from '../respond.ts';
import { clearSessionCookies, REFRESH_COOKIE, setSessionCookies } from '../session-cookies.ts';
import { requestInfo } from '../state.ts';
import type { ApiRouter } from './router.ts';
import { noQuery } from '../query.ts';

export function authRoutes(router: ApiRouter, services: Services): void {
  router.get('/health', (ctx) => {
    ctx.body = { success: true, status: 'ok', timestamp: new Date().toISOString() };
  });

  router.get('/csrf-token', (ctx) => {
    ok(ctx, { csrfToken: issueCsrfToken(ctx) });
  });

  router.post('/auth/login', noQuery, async (ctx) => {
    const credentials = services.auth.parseLogin(ctx.request.body);
    const result = await services.auth.login(credentials, requestInfo(ctx));
    if (credentials.cookie) setSessionCookies(ctx, result);
    ok(ctx, result);
  });

  router.post('/auth/refresh', noQuery, async (ctx) => {
    const fromBody = services.auth.parseRefresh(ctx.request.body);
    const fromCookie = ctx.cookies.get(REFRESH_COOKIE);
    const token = fromBody ?? fromCookie;
    // Neither in the body nor as the cookie: a missing field (400), as for any other body.
    if (!token) throw badRequest('Invalid request body: refreshToken is required', [{ field: 'refreshToken', message: 'is required' }]);
    // The csrf middleware ran before this route found the refresh cookie: check here.
    if (!fromBody) {
      ctx.state.authVia = 'cookie';
      assertCsrfToken(ctx);
    }
    const result = await services.auth.refresh(token);
    if (!fromBody) setSessionCookies(ctx, result);
    ok(ctx, result);
  });

  // Ends the caller's session (the one its access token or refresh token belongs to); with
  // `{"all": true}` every session of the user.
  router.post('/auth/logout', noQuery, async (ctx) => {
    const { refreshToken, all } = services.auth.parseLogout(ctx.request.body);
    const principal = ctx.state.principal;
    if (principal?.kind === 'user') {
      await services.auth.logout(principal, { all, ...(refreshToken !== undefined ? { refreshToken } : {}) }, requestInfo(ctx));
    } else if (refreshToken) {
      await services.auth.logoutWithRefreshToken(refreshToken, { all }, requestInfo(ctx));
    } else {
      requireUser(ctx); // 401 without credentials, 403 for an API key (valid, but no session)
      throw unauthorized('Logout needs a signed-in user or a refreshToken');
    }
    clearSessionCookies(ctx);
    ok(ctx, { loggedOut: true });
  });

  router.post('/auth/register', noQuery, async (ctx) => {
    ok(ctx, await services.auth.register(ctx.request.body, requestInfo(ctx)), { status: 201 });
  });
}
