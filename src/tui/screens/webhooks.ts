// Webhooks: each webhook's events and delivery health; Enter opens its deliveries (status,
// attempts, response code, time, error, next attempt); `t` sends a test event (`manage_api`).
// A server without the webhook routes (404) says so instead of failing.
import React from 'react';
import { Box, Text } from 'ink';
import type { Webhook, WebhookDelivery } from '../../cli/client.ts';
import { ApiError } from '../../cli/errors.ts';
import { Busy } from '../components/busy.ts';
import { ErrorView } from '../components/error-view.ts';
import { ListView } from '../components/list-view.ts';
import { clip, row, safe, when } from '../format.ts';
import { useKeys } from '../keys.ts';
import { useSession } from '../session.ts';
import { statusTone, tone } from '../theme.ts';
import { useAction, useRequest } from '../use-request.ts';

const h = React.createElement;

export function WebhooksScreen(): React.ReactElement {
  const [open, setOpen] = React.useState<Webhook | null>(null);
  return open ? h(Deliveries, { hook: open, onBack: () => setOpen(null) }) : h(WebhookList, { onOpen: setOpen });
}

const notAvailable = (error: unknown): boolean => error instanceof ApiError && error.status === 404;

function health(hook: Webhook): string {
  if (!hook.enabled) return 'disabled';
  return hook.health === 'failing' && hook.consecutiveFailures ? `failing ×${hook.consecutiveFailures}` : hook.health;
}

function WebhookList({ onOpen }: { onOpen(hook: Webhook): void }): React.ReactElement {
  const session = useSession();
  const { rows, columns } = session.size;
  const hooks = useRequest((signal) => session.client.webhooks({ page: 1, limit: 100 }, { signal }), []);
  const [cursor, setCursor] = React.useState<Webhook | undefined>(undefined);
  const canTest = session.can('manage_api');
  const test = useAction<WebhookDelivery>(() => hooks.reload());
  useKeys(
    (input, key) => {
      if (key.escape) {
        if (hooks.loading) hooks.cancel();
        else if (test.busy) test.cancel();
      } else if (input === 'r') hooks.reload();
      else if (input === 't' && canTest && cursor) test.run((signal) => session.client.testWebhook(cursor._id, { signal }));
    },
    { isActive: !session.overlay },
  );
  if (notAvailable(hooks.error)) {
    return h(Box, { flexDirection: 'column' }, h(Text, { bold: true }, 'Webhooks'), h(Text, { color: tone('yellow') }, 'webhooks not available on this server'));
  }
  const layout = (name: string, url: string, events: string, secret: string, state: string): string =>
    row([{ text: name, width: 16 }, { text: url, width: 'flex' }, { text: events, width: 16 }, { text: secret, width: 6 }, { text: state, width: 12 }], columns - 1);
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { bold: true, wrap: 'truncate' }, 'Webhooks', h(Text, { dimColor: true }, `  Enter deliveries${canTest ? '  t test' : ''}  r reload`)),
    hooks.loading ? h(Busy, { label: 'loading webhooks' }) : null,
    hooks.error ? h(ErrorView, { error: hooks.error }) : null,
    hooks.data
      ? h(ListView<Webhook>, {
          items: hooks.data.items,
          height: rows - 4,
          active: !session.overlay,
          header: ` ${layout('NAME', 'URL', 'EVENTS', 'SECRET', 'HEALTH')}`,
          render: (hook) => layout(hook.name, hook.url, hook.events.join(','), hook.secret, health(hook)),
          color: (hook) => (!hook.enabled ? tone('gray') : hook.health === 'failing' ? tone('red') : undefined),
          onOpen,
          onCursor: setCursor,
          empty: 'no webhooks',
        })
      : null,
    test.busy ? h(Busy, { label: 'sending a test event' }) : null,
    test.error ? h(ErrorView, { error: test.error }) : null,
    test.result ? h(Text, { wrap: 'truncate' }, 'test: ', h(Text, { color: statusTone(test.result.responseCode) }, safe(`${test.result.status} ${test.result.responseCode ?? ''}`)), clip(` ${test.result.error ?? ''}`, columns - 20)) : null,
  );
}

function Deliveries({ hook, onBack }: { hook: Webhook; onBack(): void }): React.ReactElement {
  const session = useSession();
  const { rows, columns } = session.size;
  const limit = Math.max(5, rows - 5);
  const [page, setPage] = React.useState(1);
  const deliveries = useRequest((signal) => session.client.webhookDeliveries(hook._id, { page, limit }, { signal }), [hook._id, page, limit]);
  const pages = deliveries.data ? Math.max(1, Math.ceil(deliveries.data.total / limit)) : 1;
  useKeys(
    (input, key) => {
      if (key.escape) {
        if (deliveries.loading) deliveries.cancel();
        else onBack();
      } else if (input === 'n' && page < pages) setPage(page + 1);
      else if (input === 'p' && page > 1) setPage(page - 1);
      else if (input === 'r') deliveries.reload();
    },
    { isActive: !session.overlay },
  );
  const layout = (event: string, status: string, attempts: string, code: string, ms: string, rest: string): string =>
    row([{ text: event, width: 18 }, { text: status, width: 9 }, { text: attempts, width: 3 }, { text: code, width: 4 }, { text: ms, width: 6 }, { text: rest, width: 'flex' }], columns - 1);
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { bold: true, wrap: 'truncate' }, `Deliveries of ${safe(hook.name)}`, h(Text, { dimColor: true }, deliveries.data ? `  page ${page}/${pages}, ${deliveries.data.total} in all` : '')),
    deliveries.loading ? h(Busy, { label: 'loading deliveries' }) : null,
    deliveries.error ? h(ErrorView, { error: deliveries.error }) : null,
    deliveries.data
      ? h(ListView<WebhookDelivery>, {
          items: deliveries.data.items,
          height: rows - 3,
          active: !session.overlay,
          header: ` ${layout('EVENT', 'STATUS', 'TRY', 'CODE', 'MS', 'ERROR / NEXT ATTEMPT (UTC)')}`,
          render: (d) => layout(d.event, d.status, String(d.attempts), String(d.responseCode ?? '—'), String(d.durationMs ?? '—'), d.error ?? (d.nextAttemptAt ? `next ${when(d.nextAttemptAt)}` : '')),
          color: (d) => statusTone(d.responseCode) ?? (d.status === 'failed' ? tone('red') : undefined),
          empty: 'no deliveries yet',
        })
      : null,
    h(Text, { dimColor: true }, 'n/p page  r reload  Esc back'),
  );
}
