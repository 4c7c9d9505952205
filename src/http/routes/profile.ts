import type { Services } from '../container.ts';
import { requireUser } from '../middleware/require-permission.ts';
import { ok } from '../respond.ts';
import { setSessionCookies } from '../session-cookies.ts';
import { requestInfo } from '../state.ts';
import type { ApiRouter } from './router.ts';
import { noQuery } from '../query.ts';

export function profileRoutes(router: ApiRouter, services: Services): void {
  router.get('/profile', noQuery, async (ctx) => {
    ok(ctx, await services.profile.get(requireUser(ctx).userId));
  });

  // A password change returns a new token pair in data.tokens: the old tokens stop working. A
  // browser session (cookies) gets the new pair as its cookies, so it stays signed in.
  router.put('/profile', noQuery, async (ctx) => {
    const { profile, tokens } = await services.profile.update(requireUser(ctx).userId, ctx.request.body, requestInfo(ctx));
    if (tokens && ctx.state.authVia === 'cookie') setSessionCookies(ctx, tokens);
    ok(ctx, tokens ? { ...profile, tokens } : profile);
  });
}
