import type { Services } from '../container.ts';
import { requireUser } from '../middleware/require-permission.ts';
import { ok } from '../respond.ts';
import { requestInfo } from '../state.ts';
import type { ApiRouter } from './router.ts';

export function profileRoutes(router: ApiRouter, services: Services): void {
  router.get('/profile', async (ctx) => {
    ok(ctx, await services.profile.get(requireUser(ctx).userId));
  });

  // A password change returns a new token pair in data.tokens: the old tokens stop working.
  router.put('/profile', async (ctx) => {
    const { profile, tokens } = await services.profile.update(requireUser(ctx).userId, ctx.request.body, requestInfo(ctx));
    ok(ctx, tokens ? { ...profile, tokens } : profile);
  });
}
