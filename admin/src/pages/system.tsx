// Server resources (GET /api/dashboard/system), refreshed every five seconds.
import { useEffect } from 'preact/hooks';
import { get } from '../api.ts';
import { ErrorBox, Loading, Page, fmtBytes, useLoad } from '../ui.tsx';

const duration = (seconds: number) => {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return `${d ? `${d}d ` : ''}${h}h ${m}m`;
};

const Row = (props: { label: string; value: unknown }) => (
  <tr>
    <th>{props.label}</th>
    <td>{String(props.value ?? '—')}</td>
  </tr>
);

export default function System() {
  const info = useLoad(() => get<any>('/api/dashboard/system').then((r) => r.data), []);
  useEffect(() => {
    const timer = setInterval(info.reload, 5000);
    return () => clearInterval(timer);
  }, []);
  const s = info.data;
  if (info.error && !s) return <ErrorBox error={info.error} />;
  if (!s) return <Loading />;
  const mem = s.memory ?? {};
  const disk = s.disk ?? {};
  return (
    <Page title="System">
      <p class="muted small">Refreshed every 5 seconds.</p>
      <div class="grid" style={{ marginBottom: '14px' }}>
        <div class="card">
          <div class="label">CPU load (1 / 5 / 15 min)</div>
          <div class="value">{(s.cpu?.loadAverage ?? []).map((n: number) => n.toFixed(2)).join(' / ')}</div>
        </div>
        <div class="card">
          <div class="label">Memory used</div>
          <div class="value">{mem.totalBytes ? `${Math.round((mem.usedBytes / mem.totalBytes) * 100)}%` : '—'}</div>
          <div class="small muted">
            {fmtBytes(mem.usedBytes)} of {fmtBytes(mem.totalBytes)}
          </div>
        </div>
        <div class="card">
          <div class="label">Disk used (data directory)</div>
          <div class="value">{disk.totalBytes ? `${Math.round((disk.usedBytes / disk.totalBytes) * 100)}%` : '—'}</div>
          <div class="small muted">{fmtBytes(disk.availableBytes)} available · {disk.path}</div>
        </div>
        <div class="card">
          <div class="label">Cron jobs active</div>
          <div class="value">
            {s.cronJobsActive ?? 0} / {s.cronJobsTotal ?? 0}
          </div>
        </div>
      </div>
      <div class="grid wide">
        <div class="panel">
          <h3 style={{ marginTop: 0 }}>Operating system</h3>
          <table>
            <tbody>
              <Row label="Host" value={s.os?.hostname} />
              <Row label="Platform" value={`${s.os?.type ?? ''} ${s.os?.release ?? ''} (${s.os?.arch ?? ''})`} />
              <Row label="Uptime" value={duration(s.os?.uptimeSeconds ?? 0)} />
              <Row label="CPU" value={`${s.cpu?.model ?? ''} × ${s.cpu?.cores ?? '?'}`} />
            </tbody>
          </table>
        </div>
        <div class="panel">
          <h3 style={{ marginTop: 0 }}>Process</h3>
          <table>
            <tbody>
              <Row label="PID" value={s.process?.pid} />
              <Row label="Node" value={s.process?.nodeVersion} />
              <Row label="Uptime" value={duration(s.process?.uptimeSeconds ?? 0)} />
              <Row label="Memory (RSS)" value={fmtBytes(s.process?.memory?.rssBytes)} />
              <Row label="Store" value={`${s.store?.kind ?? ''}${s.store?.sizeBytes ? ` · ${fmtBytes(s.store.sizeBytes)}` : ''}`} />
            </tbody>
          </table>
        </div>
        <div class="panel">
          <h3 style={{ marginTop: 0 }}>Network</h3>
          <table>
            <tbody>
              {(s.network ?? []).map((n: any) => (
                <Row label={`${n.interface} (${n.family})`} value={n.cidr ?? n.address} />
              ))}
            </tbody>
          </table>
        </div>
      </div>
    </Page>
  );
}
