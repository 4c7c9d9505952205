// Dashboard: the stats as cards, seven-day charts (uPlot) and automation health with links to
// what is failing. A card or link leads only to a page the user may open (pages.ts decides).
import uPlot from 'uplot';
import { useEffect, useRef } from 'preact/hooks';
import { get } from '../api.ts';
import { mayOpen } from '../pages.ts';
import { ErrorBox, Link, Loading, Page, useLoad } from '../ui.tsx';

interface Stats {
  users: number;
  endpoints: number;
  systemEndpoints: number;
  requests: number;
  errors: number;
  automation: { cronJobs: number; webhooks: number; apiKeys: number; mcpTools: number };
  series: {
    days: string[];
    requests: number[];
    errors: number[];
    logins: number[];
    webhookDeliveries: number[];
    cronRuns: number[];
    trafficBySource: Record<string, number[]>;
  };
  automationHealth: { failedCronJobs: number; webhookErrors: number; unusedApiKeys: number };
}

const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2'];

function Chart(props: { title: string; days: string[]; series: Array<{ label: string; values: number[] }> }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = props.days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const dark = document.documentElement.getAttribute('data-theme') === 'dark';
    const axis = { stroke: dark ? '#9aa5b4' : '#5b6675', grid: { stroke: dark ? '#2b333e' : '#e5e9ef' }, ticks: { show: false } };
    const plot = new uPlot(
      {
        width: Math.max(240, el.clientWidth),
        height: 180,
        series: [{ label: 'Day', value: (_u: uPlot, v: number | null) => (v == null ? '—' : new Date(v * 1000).toISOString().slice(0, 10)) }, ...props.series.map((s, i) => ({ label: s.label, stroke: COLORS[i % COLORS.length], width: 2, points: { size: 5 } }))],
        axes: [{ ...axis, values: (_u: uPlot, ticks: number[]) => ticks.map((t) => new Date(t * 1000).toISOString().slice(5, 10)) }, { ...axis, size: 40 }],
        scales: { x: { time: true }, y: { range: (_u: uPlot, _min: number, max: number) => [0, Math.max(4, max)] } },
        legend: { show: props.series.length > 1 },
      },
      [xs, ...props.series.map((s) => s.values)],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(240, el.clientWidth), height: 180 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [JSON.stringify(props.series), props.days.join()]);
  return (
    <div class="panel">
      <h3 style={{ marginTop: 0 }}>{props.title}</h3>
      <div class="chart" ref={box} role="img" aria-label={`${props.title}, last 7 days: ${props.series.map((s) => `${s.label} ${s.values.join(', ')}`).join('; ')}`} />
    </div>
  );
}

/** A stat; its number links to `to` when the user may open that page. */
const Card = (props: { label: string; value: number | string; to?: string; note?: string }) => (
  <div class="card">
    <div class="label">{props.label}</div>
    <div class="value">{props.to && mayOpen(props.to) ? <Link to={props.to}>{props.value}</Link> : props.value}</div>
    {props.note && <div class="note">{props.note}</div>}
  </div>
);

/** A link to what needs a look, left out when the user may not open that page. */
const SeeLink = (props: { to: string; children: string }) => (mayOpen(props.to) ? <Link to={props.to}>{props.children}</Link> : null);

export default function Dashboard() {
  const { data, error } = useLoad(() => get<Stats>('/api/dashboard/stats').then((r) => r.data), []);
  if (error) return <ErrorBox error={error} />;
  if (!data) return <Loading />;
  const s = data.series;
  const health = data.automationHealth;
  return (
    <Page title="Dashboard">
      <div class="grid" style={{ marginBottom: '14px' }}>
        <Card label="Requests (7 days)" value={data.requests} />
        <Card label="Errors (7 days)" value={data.errors} to="/logs?action=error" />
        <Card label="Endpoints" value={data.endpoints} to="/endpoints" note={data.systemEndpoints ? `${data.systemEndpoints} of them system` : undefined} />
        <Card label="Users" value={data.users} to="/users" />
        <Card label="Cron jobs" value={data.automation.cronJobs} to="/cron" />
        <Card label="Webhooks" value={data.automation.webhooks} to="/webhooks" />
        <Card label="API keys" value={data.automation.apiKeys} to="/api-keys" />
        <Card label="MCP tools" value={data.automation.mcpTools} to="/mcp" />
      </div>
      <div class="panel">
        <h3 style={{ marginTop: 0 }}>Automation health</h3>
        <ul style={{ margin: 0 }}>
          <li class={health.failedCronJobs ? 'bad' : 'ok'}>
            {health.failedCronJobs} cron job(s) whose last run failed {health.failedCronJobs > 0 && <SeeLink to="/cron">see the jobs</SeeLink>}
          </li>
          <li class={health.webhookErrors ? 'bad' : 'ok'}>
            {health.webhookErrors} failed webhook deliveries this week {health.webhookErrors > 0 && <SeeLink to="/webhooks">see webhooks</SeeLink>}
          </li>
          <li class={health.unusedApiKeys ? 'warn' : 'ok'}>
            {health.unusedApiKeys} API key(s) unused for 30 days {health.unusedApiKeys > 0 && <SeeLink to="/api-keys">review keys</SeeLink>}
          </li>
        </ul>
      </div>
      <div class="grid wide">
        <Chart title="Requests and errors" days={s.days} series={[{ label: 'Requests', values: s.requests }, { label: 'Errors', values: s.errors }]} />
        <Chart title="Traffic by source" days={s.days} series={Object.entries(s.trafficBySource).map(([label, values]) => ({ label, values }))} />
        <Chart title="Sign-ins" days={s.days} series={[{ label: 'Logins', values: s.logins }]} />
        <Chart title="Webhook deliveries" days={s.days} series={[{ label: 'Deliveries', values: s.webhookDeliveries }]} />
        <Chart title="Cron runs" days={s.days} series={[{ label: 'Runs', values: s.cronRuns }]} />
      </div>
    </Page>
  );
}
