import type { Services } from '../container.ts';
import { notFound } from '../../lib/errors.ts';
import { requireAny, requirePrincipal } from '../middleware/require-permission.ts';
import { listQuery, noInput, noQuery, readQuery } from '../query.ts';
import { notAllowed, ok, paged } from '../respond.ts';
import { requestInfo, type DynContext } from '../state.ts';
import type { RawActor } from '../../services/raw/adapter.ts';
import type { ApiRouter } from './router.ts';

// The raw collection browser: seven collections, `manage_users` for every route (and, for some
// collections, the permission their own API needs: RawAdapter.alsoNeeds).
export function databaseRoutes(router: ApiRouter, services: Services): void {
  const raw = services.rawCollections;
  const allowed = requireAny('manage_users');
  const actor = (ctx: DynContext): RawActor => ({ principal: requirePrincipal(ctx), request: requestInfo(ctx) });
  const name = (ctx: DynContext): string => ctx.params.name as string;

  router.get('/database/collections', allowed, async (ctx) => {
    readQuery(ctx, []);
    ok(ctx, await raw.collections());
  });
  router.get('/database/collections/:name', allowed, async (ctx) => {
    const query = listQuery(ctx);
    paged(ctx, await raw.list(name(ctx), query, requirePrincipal(ctx)), query, (doc) => doc);
  });
  router.post('/database/collections/:name', allowed, noQuery, async (ctx) => {
    ok(ctx, await raw.create(name(ctx), ctx.request.body, actor(ctx)), { status: 201 });
  });
  router.delete('/database/collections/:name', allowed, noInput, async (ctx) => {
    ok(ctx, { deleted: await raw.clear(name(ctx), actor(ctx)) });
  });
  router.get('/database/collections/:name/:id', allowed, noQuery, async (ctx) => {
    ok(ctx, await raw.get(name(ctx), ctx.params.id as string, requirePrincipal(ctx)));
  });
  router.put('/database/collections/:name/:id', allowed, noQuery, async (ctx) => {
    ok(ctx, await raw.replace(name(ctx), ctx.params.id as string, ctx.request.body, actor(ctx)));
  });
  router.delete('/database/collections/:name/:id', allowed, noInput, async (ctx) => {
    ok(ctx, await raw.delete(name(ctx), ctx.params.id as string, actor(ctx)));
  });
  // Methods no route above serves: the router would name the methods any collection takes; this
  // names what this one does (users cannot be cleared, logs cannot be created, ...). OPTIONS too.
  const notServedHere = (which: 'collection' | 'document') => (ctx: DynContext) => {
    const methods = raw.methods(name(ctx));
    if (!methods) throw notFound(`Unknown collection "${name(ctx).slice(0, 64)}"`);
    notAllowed(ctx, methods[which]);
  };
  router.all('/database/collections/:name', notServedHere('collection'));
  router.all('/database/collections/:name/:id', notServedHere('document'));
}
