import type { Webhook, WebhookDelivery } from '../client.ts';
import type { CommandModule } from '../context.ts';
import { CliError, EXIT } from '../errors.ts';
import { parsePositiveInt } from '../option-parsers.ts';
import { shortDate } from '../output.ts';

/** `dynctl webhooks list|test NAME|deliveries NAME`: webhooks (/api/webhooks), needs manage_api. */
export const webhooksCommands: CommandModule = {
  register(program, context) {
    const webhooks = program.command('webhooks').description('list webhooks, send a test event, show deliveries (needs manage_api)');

    webhooks
      .command('list')
      .description('list webhooks with their events, state and health')
      .action(async () => {
        const client = await context.client();
        const hooks = await client.listWebhooks();
        context.out.result(hooks, () =>
          context.out.table(['NAME', 'URL', 'EVENTS', 'ENABLED', 'HEALTH', 'LAST DELIVERY'], hooks.map(hookRow), 'No webhooks.'),
        );
      });

    webhooks
      .command('test')
      .description('send a webhook.test event now and print the delivery; exits 1 when it failed')
      .argument('<name>', 'the webhook name (or id)')
      .action(async (name: string) => {
        const client = await context.client();
        const delivery = await client.testWebhook(name);
        const delivered = delivery.status === 'delivered';
        context.out.result(delivery, () => {
          if (delivered) context.out.success(`Delivered webhook.test (${delivery.responseCode}) in ${delivery.durationMs} ms`);
          else context.out.line(`${context.out.paint('red', '✗')} webhook.test failed${delivery.durationMs !== null ? ` in ${delivery.durationMs} ms` : ''}: ${delivery.error ?? ''}`);
        });
        if (!delivered) throw new CliError(`the test delivery failed: ${delivery.error ?? ''}`, EXIT.failure, { resultPrinted: true });
      });

    webhooks
      .command('deliveries')
      .description('the latest deliveries of a webhook, newest first')
      .argument('<name>', 'the webhook name (or id)')
      .option('-n, --limit <n>', 'how many deliveries to show (the server caps it at maxPageSize)', parsePositiveInt, 20)
      .action(async (name: string, options: { limit: number }) => {
        const client = await context.client();
        const page = await client.webhookDeliveries(name, { limit: options.limit });
        context.out.result(page.items, () =>
          context.out.table(['CREATED', 'EVENT', 'STATUS', 'ATTEMPTS', 'CODE', 'DURATION', 'NEXT ATTEMPT', 'ERROR'], page.items.map(deliveryRow), 'No deliveries yet.'),
        );
      });
  },
};

function hookRow(hook: Webhook): string[] {
  return [hook.name, hook.url, hook.events.join(','), hook.enabled ? 'yes' : 'no', hook.health, shortDate(hook.lastDeliveryAt)];
}

function deliveryRow(delivery: WebhookDelivery): string[] {
  return [
    shortDate(delivery.createdAt),
    delivery.event,
    delivery.status,
    String(delivery.attempts),
    delivery.responseCode === null ? '-' : String(delivery.responseCode),
    delivery.durationMs === null ? '-' : `${delivery.durationMs} ms`,
    shortDate(delivery.nextAttemptAt),
    (delivery.error ?? '').slice(0, 80),
  ];
}
