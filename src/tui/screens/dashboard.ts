// Dashboard: the counts, a seven-day sparkline per series and automation health, from
// GET /api/dashboard/stats. `r` reloads.
import React from 'react';
import { Box, Text } from 'ink';
import type { DashboardStats } from '../../cli/client.ts';
import { Busy } from '../components/busy.ts';
import { ErrorView } from '../components/error-view.ts';
import { safe, sparkline } from '../format.ts';
import { useKeys } from '../keys.ts';
import { useSession } from '../session.ts';
import { tone } from '../theme.ts';
import { useRequest } from '../use-request.ts';

const h = React.createElement;

const SERIES: ReadonlyArray<[keyof DashboardStats['series'], string]> = [
  ['requests', 'requests'],
  ['errors', 'errors'],
  ['logins', 'logins'],
  ['cronRuns', 'cron runs'],
  ['webhookDeliveries', 'deliveries'],
];

export function DashboardScreen(): React.ReactElement {
  const session = useSession();
  const stats = useRequest((signal) => session.client.dashboardStats({ signal }), []);
  useKeys(
    (input, key) => {
      if (key.escape && stats.loading) stats.cancel();
      else if (input === 'r') stats.reload();
    },
    { isActive: !session.overlay },
  );
  const data = stats.data;
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { bold: true }, 'Dashboard', h(Text, { dimColor: true }, '  (last 7 days, UTC; r reloads)')),
    stats.loading && !data ? h(Busy, { label: 'loading the figures' }) : null,
    stats.cancelled ? h(Text, { dimColor: true }, 'cancelled: r loads again') : null,
    stats.error ? h(ErrorView, { error: stats.error }) : null,
    data ? h(Figures, { stats: data }) : null,
  );
}

function Figures({ stats }: { stats: DashboardStats }): React.ReactElement {
  const health = stats.automationHealth;
  const problem = (count: number): string | undefined => (count > 0 ? tone('red') : tone('green'));
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { wrap: 'truncate' }, `Users ${stats.users}   Endpoints ${stats.endpoints}${stats.systemEndpoints ? ` (${stats.systemEndpoints} system)` : ''}   Requests ${stats.requests}   Errors `, h(Text, { color: stats.errors > 0 ? tone('yellow') : undefined }, String(stats.errors))),
    h(Text, { wrap: 'truncate' }, `Cron jobs ${stats.automation.cronJobs}   Webhooks ${stats.automation.webhooks}   API keys ${stats.automation.apiKeys}   MCP tools ${stats.automation.mcpTools}`),
    h(Text, null, ' '),
    h(Text, { dimColor: true, wrap: 'truncate' }, safe(`${''.padEnd(12)}${(stats.series.days[0] ?? '').slice(5)} → ${(stats.series.days.at(-1) ?? '').slice(5)}   total   today`)),
    ...SERIES.map(([name, label]) => {
      const values = (stats.series[name] as number[] | undefined) ?? [];
      const total = values.reduce((sum, value) => sum + value, 0);
      return h(
        Text,
        { key: name, wrap: 'truncate' },
        label.padEnd(12),
        h(Text, { color: tone(name === 'errors' ? 'red' : 'cyan') }, sparkline(values).padEnd(13)),
        ` ${String(total).padStart(7)} ${String(values.at(-1) ?? 0).padStart(7)}`,
      );
    }),
    h(Text, null, ' '),
    h(Text, { bold: true }, 'Automation health'),
    h(Text, { wrap: 'truncate' }, '  failed cron jobs   ', h(Text, { color: problem(health.failedCronJobs) }, String(health.failedCronJobs))),
    health.failingWebhooks === undefined ? null : h(Text, { wrap: 'truncate' }, '  failing webhooks   ', h(Text, { color: problem(health.failingWebhooks) }, String(health.failingWebhooks))),
    h(Text, { wrap: 'truncate' }, '  webhook errors     ', h(Text, { color: problem(health.webhookErrors) }, String(health.webhookErrors))),
    h(Text, { wrap: 'truncate' }, '  unused API keys    ', h(Text, { color: health.unusedApiKeys > 0 ? tone('yellow') : tone('green') }, String(health.unusedApiKeys))),
  );
}
