import type { Services } from '../container.ts';
import { publicGroup } from '../../services/groups.ts';
import { requireActor, requireAny } from '../middleware/require-permission.ts';
import { listQuery, noInput, noQuery } from '../query.ts';
import { ok, paged } from '../respond.ts';
import type { ApiRouter } from './router.ts';

export function groupRoutes(router: ApiRouter, services: Services): void {
  // manage_api too: whoever edits endpoints picks the user groups a `group` endpoint allows.
  const read = requireAny('view', 'manage_users', 'manage_api');
  const write = requireAny('manage_users');

  router.get('/groups', read, async (ctx) => {
    const query = listQuery(ctx);
    paged(ctx, await services.groups.list(query), query, publicGroup);
  });

  router.get('/groups/:id', read, noQuery, async (ctx) => {
    ok(ctx, publicGroup(await services.groups.get(ctx.params.id as string)));
  });

  router.post('/groups', write, noQuery, async (ctx) => {
    const group = await services.groups.create(ctx.request.body, requireActor(ctx));
    ok(ctx, publicGroup(group), { status: 201 });
  });

  router.put('/groups/:id', write, noQuery, async (ctx) => {
    const group = await services.groups.update(ctx.params.id as string, ctx.request.body, requireActor(ctx));
    ok(ctx, publicGroup(group));
  });

  router.delete('/groups/:id', write, noInput, async (ctx) => {
    const group = await services.groups.delete(ctx.params.id as string, requireActor(ctx));
    ok(ctx, publicGroup(group));
  });
}
