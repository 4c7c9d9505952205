import { publicApiKey } from '../../services/api-keys.ts';
import type { Services } from '../container.ts';
import { requireActor, requireAny } from '../middleware/require-permission.ts';
import { listQuery, noInput, noQuery } from '../query.ts';
import { ok, paged } from '../respond.ts';
import type { ApiRouter } from './router.ts';

export function apiKeyRoutes(router: ApiRouter, services: Services): void {
  const manage = requireAny('manage_api');

  router.get('/api-keys', manage, async (ctx) => {
    const query = listQuery(ctx);
    paged(ctx, await services.apiKeys.list(query), query, publicApiKey);
  });

  router.get('/api-keys/:id', manage, noQuery, async (ctx) => {
    ok(ctx, publicApiKey(await services.apiKeys.get(ctx.params.id as string)));
  });

  // The key itself is in this response only (data.key); the store keeps a bcrypt hash.
  router.post('/api-keys', manage, noQuery, async (ctx) => {
    const { doc, key } = await services.apiKeys.create(ctx.request.body, requireActor(ctx));
    ok(ctx, { ...publicApiKey(doc), key }, { status: 201 });
  });

  router.put('/api-keys/:id', manage, noQuery, async (ctx) => {
    const doc = await services.apiKeys.update(ctx.params.id as string, ctx.request.body, requireActor(ctx));
    ok(ctx, publicApiKey(doc));
  });

  router.delete('/api-keys/:id', manage, noInput, async (ctx) => {
    const doc = await services.apiKeys.revoke(ctx.params.id as string, requireActor(ctx));
    ok(ctx, publicApiKey(doc));
  });
}
