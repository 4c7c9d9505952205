import { principalUserId } from '../../model/principal.ts';
import type { Services } from '../container.ts';
import { publicGroup } from '../../services/groups.ts';
import { requireAny, requirePrincipal } from '../middleware/require-permission.ts';
import { listQuery } from '../query.ts';
import { ok, paged } from '../respond.ts';
import { requestInfo, type DynContext } from '../state.ts';
import type { ApiRouter } from './router.ts';

export function groupRoutes(router: ApiRouter, services: Services): void {
  const read = requireAny('view', 'manage_users');
  const write = requireAny('manage_users');
  const audit = (ctx: DynContext, action: string, message: string, status: number) =>
    services.audit.record({ action, message, source: 'groups', userId: principalUserId(ctx.state.principal), statusCode: status, ...requestInfo(ctx) });

  router.get('/groups', read, async (ctx) => {
    const query = listQuery(ctx);
    paged(ctx, await services.groups.list(query), query, publicGroup);
  });

  router.get('/groups/:id', read, async (ctx) => {
    ok(ctx, publicGroup(await services.groups.get(ctx.params.id as string)));
  });

  router.post('/groups', write, async (ctx) => {
    const group = await services.groups.create(ctx.request.body, requirePrincipal(ctx));
    await audit(ctx, 'group_created', `Group ${group.name} created`, 201);
    ok(ctx, publicGroup(group), { status: 201 });
  });

  router.put('/groups/:id', write, async (ctx) => {
    const group = await services.groups.update(ctx.params.id as string, ctx.request.body, requirePrincipal(ctx));
    await audit(ctx, 'group_updated', `Group ${group.name} updated`, 200);
    ok(ctx, publicGroup(group));
  });

  router.delete('/groups/:id', write, async (ctx) => {
    const group = await services.groups.delete(ctx.params.id as string);
    await audit(ctx, 'group_deleted', `Group ${group.name} deleted`, 200);
    ok(ctx, publicGroup(group));
  });
}
