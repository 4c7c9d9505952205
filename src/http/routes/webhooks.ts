// /api/webhooks: manage webhooks (manage_api), send a test event, list and redeliver deliveries.
// Who may touch a hook or delivery that carries user records is the services' rule (webhooks.ts).
// Changes are audited by the service (webhook_created/updated/deleted); attempts by the dispatcher
// (webhook_dispatch).
import type { WebhookDispatcher } from '../../automation/webhooks/dispatcher.ts';
import { TEST_EVENT } from '../../model/webhook.ts';
import { publicDelivery, type WebhookDeliveriesService } from '../../services/webhook-deliveries.ts';
import { publicWebhook, type WebhookActor, type WebhooksService } from '../../services/webhooks.ts';
import { requireAny, requirePrincipal } from '../middleware/require-permission.ts';
import { listQuery, noInput, noQuery, readQuery } from '../query.ts';
import { ok, paged } from '../respond.ts';
import { requestInfo, type DynContext } from '../state.ts';
import type { ApiRouter } from './router.ts';

const PAGE_ONLY = ['page', 'limit'];

export function webhookRoutes(router: ApiRouter, services: { webhooks: WebhooksService; webhookDeliveries: WebhookDeliveriesService; webhookDispatcher: WebhookDispatcher }): void {
  const { webhooks, webhookDeliveries, webhookDispatcher } = services;
  const manage = requireAny('manage_api');
  const actor = (ctx: DynContext): WebhookActor => ({ principal: requirePrincipal(ctx), request: requestInfo(ctx) });
  const hook = (ctx: DynContext) => webhooks.find(ctx.params.id as string);

  router.get('/webhooks', manage, async (ctx) => {
    const query = listQuery(ctx);
    paged(ctx, await webhooks.list(query), query, publicWebhook);
  });

  router.get('/webhooks/:id', manage, noQuery, async (ctx) => {
    ok(ctx, publicWebhook(await hook(ctx)));
  });

  router.post('/webhooks', manage, noQuery, async (ctx) => {
    ok(ctx, publicWebhook(await webhooks.create(ctx.request.body, actor(ctx))), { status: 201 });
  });

  router.put('/webhooks/:id', manage, noQuery, async (ctx) => {
    const current = await hook(ctx);
    ok(ctx, publicWebhook(await webhooks.update(current._id, ctx.request.body, actor(ctx))));
  });

  router.delete('/webhooks/:id', manage, noInput, async (ctx) => {
    const current = await hook(ctx);
    ok(ctx, publicWebhook(await webhooks.delete(current._id, actor(ctx))));
  });

  // Queues a `webhook.test` delivery and sends it at once (enabled or not); answers with the
  // delivery after that first attempt. A failed test is retried like any delivery.
  router.post('/webhooks/:id/test', manage, noInput, async (ctx) => {
    const current = await hook(ctx);
    const body = JSON.stringify({ event: TEST_EVENT, timestamp: new Date().toISOString(), data: { webhookId: current._id, name: current.name } });
    const [queued] = await webhookDeliveries.enqueue([current._id], TEST_EVENT, body);
    ok(ctx, publicDelivery(await webhookDispatcher.sendNow(queued!), current));
  });

  // Deliveries are paged, not searched: `search` is a 400 like any unknown parameter, never ignored.
  router.get('/webhooks/:id/deliveries', manage, async (ctx) => {
    readQuery(ctx, PAGE_ONLY);
    const query = listQuery(ctx);
    const current = await hook(ctx);
    paged(ctx, await webhookDeliveries.list(current._id, query), query, (delivery) => publicDelivery(delivery, current));
  });

  router.post('/webhooks/:id/deliveries/:deliveryId/redeliver', manage, noInput, async (ctx) => {
    const current = await hook(ctx);
    const delivery = await webhookDeliveries.redeliver(current._id, ctx.params.deliveryId as string, requirePrincipal(ctx));
    webhookDispatcher.wake();
    ok(ctx, publicDelivery(delivery, current), { status: 202 });
  });
}
