import type { Services } from '../container.ts';
import { publicUser } from '../../services/users.ts';
import { requireActor, requireAny } from '../middleware/require-permission.ts';
import { listQuery, noInput, noQuery } from '../query.ts';
import { ok, paged } from '../respond.ts';
import type { ApiRouter } from './router.ts';

export function userRoutes(router: ApiRouter, services: Services): void {
  const read = requireAny('view', 'manage_users');
  const write = requireAny('manage_users');

  router.get('/users', read, async (ctx) => {
    const query = listQuery(ctx);
    paged(ctx, await services.users.list(query), query, publicUser);
  });

  router.get('/users/:id', read, noQuery, async (ctx) => {
    ok(ctx, publicUser(await services.users.get(ctx.params.id as string)));
  });

  router.post('/users', write, noQuery, async (ctx) => {
    const user = await services.users.create(ctx.request.body, { actor: requireActor(ctx) });
    ok(ctx, publicUser(user), { status: 201 });
  });

  router.put('/users/:id', write, noQuery, async (ctx) => {
    const user = await services.users.update(ctx.params.id as string, ctx.request.body, requireActor(ctx));
    ok(ctx, publicUser(user));
  });

  // Ends a lockout at once (the user need not wait lockoutMinutes); unlocking a login that is
  // not locked is not an error (`wasLocked: false`).
  router.post('/users/:id/unlock', write, noInput, async (ctx) => {
    const { user, wasLocked } = await services.users.unlock(ctx.params.id as string, requireActor(ctx));
    ok(ctx, { ...publicUser(user), wasLocked });
  });

  router.delete('/users/:id', write, noInput, async (ctx) => {
    const user = await services.users.delete(ctx.params.id as string, requireActor(ctx));
    ok(ctx, publicUser(user));
  });
}
