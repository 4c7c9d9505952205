// Settings (each with its meaning and bounds) and the project as a whole: export (YAML or JSON,
// optionally with data and settings) and import (upload; merge or replace; the plan is shown
// before it is applied).
import { useEffect, useState } from 'preact/hooks';
import { api, can, get } from '../api.ts';
import { ErrorBox, Field, Json, Loading, Page, attempt, confirmAsk, detailsOf, errorText, toast, useLoad } from '../ui.tsx';

type Kind = 'bool' | 'number' | 'list';
const SETTINGS: Array<{ key: string; kind: Kind; meaning: string; bounds?: string }> = [
  { key: 'registrationEnabled', kind: 'bool', meaning: 'allow POST /api/auth/register' },
  { key: 'accessTokenTtlSeconds', kind: 'number', meaning: 'access token lifetime, seconds', bounds: '60–86400' },
  { key: 'refreshTokenTtlSeconds', kind: 'number', meaning: 'refresh token lifetime, seconds', bounds: '300–31536000' },
  { key: 'lockoutThreshold', kind: 'number', meaning: 'failed logins before lockout; 0 turns lockout off' },
  { key: 'lockoutMinutes', kind: 'number', meaning: 'lockout window and duration, minutes' },
  { key: 'rateLimitEnabled', kind: 'bool', meaning: 'the global per-IP rate limit' },
  { key: 'rateLimitWindowSeconds', kind: 'number', meaning: 'the rate limit window, seconds' },
  { key: 'rateLimitMax', kind: 'number', meaning: 'requests per client IP per window' },
  { key: 'defaultPageSize', kind: 'number', meaning: 'limit of list routes when none is given' },
  { key: 'maxPageSize', kind: 'number', meaning: 'the largest limit (larger values are clamped)' },
  { key: 'logRetentionDays', kind: 'number', meaning: 'audit entries older than this are removed hourly' },
  { key: 'auditApiCalls', kind: 'bool', meaning: 'an api_call audit entry for every successful dynamic call' },
  { key: 'trustedProxies', kind: 'list', meaning: 'addresses and CIDR ranges whose X-Forwarded-For is believed' },
  { key: 'handlerMemoryMb', kind: 'number', meaning: 'memory limit of a JavaScript handler, MB', bounds: '8–1024' },
  { key: 'handlerTimeoutMs', kind: 'number', meaning: 'time limit of one handler call, ms', bounds: '10–60000' },
  { key: 'outboundAllowList', kind: 'list', meaning: 'host:port entries or origins outbound requests may reach although not public' },
  { key: 'cronTimeoutMs', kind: 'number', meaning: "time limit of a cron job's javascript run, ms", bounds: '100–600000' },
  { key: 'openApiPublic', kind: 'bool', meaning: 'GET /api/openapi.json for anyone (off: signed-in callers only)' },
];

function SettingsForm() {
  const loaded = useLoad(() => get<Record<string, any>>('/api/settings').then((r) => r.data), []);
  const [draft, setDraft] = useState<Record<string, any> | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (loaded.data) setDraft(loaded.data);
  }, [loaded.data]);
  if (loaded.error) return <ErrorBox error={loaded.error} />;
  if (!draft) return <Loading />;
  const details = detailsOf(error);
  const save = async (event: Event) => {
    event.preventDefault();
    const changed = Object.fromEntries(SETTINGS.filter((s) => JSON.stringify(draft[s.key]) !== JSON.stringify(loaded.data![s.key])).map((s) => [s.key, draft[s.key]]));
    if (Object.keys(changed).length === 0) return toast('Nothing changed');
    const res = await attempt(() => api('PUT', '/api/settings', { body: changed }), 'Settings saved');
    setError(res.ok ? null : res.error);
    if (res.ok) loaded.reload();
  };
  return (
    <form class="panel" onSubmit={save} aria-label="Settings">
      <div class="form-grid">
        {SETTINGS.filter((s) => s.key in draft).map((s) => (
          <Field label={s.key} name={s.key} details={details} hint={`${s.meaning}${s.bounds ? ` (${s.bounds})` : ''}`}>
            {s.kind === 'bool' ? (
              <input type="checkbox" name={s.key} checked={!!draft[s.key]} onChange={(e) => setDraft({ ...draft, [s.key]: e.currentTarget.checked })} />
            ) : s.kind === 'number' ? (
              <input type="number" name={s.key} value={draft[s.key]} onInput={(e) => setDraft({ ...draft, [s.key]: e.currentTarget.value === '' ? '' : Number(e.currentTarget.value) })} />
            ) : (
              <textarea
                class="mono"
                rows={3}
                name={s.key}
                value={(draft[s.key] ?? []).join('\n')}
                onChange={(e) =>
                  setDraft({
                    ...draft,
                    [s.key]: e.currentTarget.value
                      .split('\n')
                      .map((x) => x.trim())
                      .filter(Boolean),
                  })
                }
              />
            )}
          </Field>
        ))}
      </div>
      <ErrorBox error={error} />
      <div class="row">
        <button class="primary" type="submit">
          Save settings
        </button>
        <span class="muted small">Audit log: {loaded.data?.logsCount ?? 0} entries.</span>
      </div>
    </form>
  );
}

function Export() {
  const [format, setFormat] = useState<'yaml' | 'json'>('yaml');
  const [data, setData] = useState(false);
  const [settings, setSettings] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const download = async () => {
    const res = await attempt(() => api<string>('GET', `/api/project/export?format=${format}&data=${data}&settings=${settings}`, { raw: true }));
    if (!res.ok) return setError(res.error);
    setError(null);
    const text = format === 'json' ? JSON.stringify(JSON.parse(res.value.data).data, null, 2) : res.value.data;
    const url = URL.createObjectURL(new Blob([text], { type: format === 'json' ? 'application/json' : 'application/yaml' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `dyn-project.${format === 'json' ? 'json' : 'yaml'}`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  return (
    <div class="panel">
      <h3 style={{ marginTop: 0 }}>Export the project</h3>
      <div class="row">
        <select aria-label="Format" value={format} onChange={(e) => setFormat(e.currentTarget.value as 'yaml' | 'json')}>
          <option value="yaml">YAML</option>
          <option value="json">JSON</option>
        </select>
        <label class="check">
          <input type="checkbox" checked={data} onChange={(e) => setData(e.currentTarget.checked)} /> with data (records)
        </label>
        <label class="check">
          <input type="checkbox" checked={settings} onChange={(e) => setSettings(e.currentTarget.checked)} /> with settings
        </label>
        <button class="primary" onClick={download}>
          Download
        </button>
      </div>
      <ErrorBox error={error} />
    </div>
  );
}

interface Change {
  kind: string;
  key: string;
  action: string;
  fields?: Array<{ field: string; from: unknown; to: unknown }>;
}

function Import() {
  const [bundle, setBundle] = useState<Record<string, any> | null>(null);
  const [fileName, setFileName] = useState('');
  const [mode, setMode] = useState<'merge' | 'replace'>('merge');
  const [plan, setPlan] = useState<{ changes: Change[]; summary: Record<string, number> } | null>(null);
  const [result, setResult] = useState<unknown>(null);
  const [error, setError] = useState<unknown>(null);
  const read = async (file: File) => {
    setPlan(null);
    setResult(null);
    setError(null);
    setFileName(file.name);
    try {
      const text = await file.text();
      // YAML is parsed here (the yaml package loads only now), so the plan can leave data out.
      const parsed = /\.json$/i.test(file.name) || text.trim().startsWith('{') ? JSON.parse(text) : (await import('yaml')).parse(text);
      const value = parsed && typeof parsed === 'object' && 'success' in parsed && 'data' in parsed ? parsed.data : parsed;
      setBundle(value);
    } catch (e) {
      setBundle(null);
      setError(new Error(`Cannot read ${file.name}: ${errorText(e)}`));
    }
  };
  const makePlan = async () => {
    if (!bundle) return;
    const { data, settings, ...definitions } = bundle;
    void [data, settings];
    const res = await attempt(() => api('POST', `/api/project/plan?prune=${mode === 'replace'}`, { body: definitions }));
    if (res.ok) {
      setPlan(res.value.data);
      setError(null);
    } else setError(res.error);
  };
  const apply = async () => {
    if (!bundle) return;
    if (mode === 'replace' && !(await confirmAsk('Replace: definitions missing from the file are deleted (and, with data, records).', 'Replace'))) return;
    const res = await attempt(() => api('POST', `/api/project/import?mode=${mode}`, { body: bundle }), 'Imported');
    if (res.ok) {
      setResult(res.value.data);
      setPlan(null);
      setError(null);
    } else setError(res.error);
  };
  return (
    <div class="panel">
      <h3 style={{ marginTop: 0 }}>Import a project</h3>
      <div class="row">
        <input type="file" aria-label="Project file" accept=".yaml,.yml,.json" onChange={(e) => e.currentTarget.files?.[0] && read(e.currentTarget.files[0])} />
        <select aria-label="Mode" value={mode} onChange={(e) => (setMode(e.currentTarget.value as 'merge' | 'replace'), setPlan(null))}>
          <option value="merge">merge: add and update</option>
          <option value="replace">replace: also delete what the file lacks</option>
        </select>
        <button disabled={!bundle} onClick={makePlan}>
          Show the plan
        </button>
      </div>
      {bundle && (
        <p class="small muted">
          {fileName}: {(bundle.groups ?? []).length} groups, {(bundle.endpoints ?? []).length} endpoints
          {bundle.data ? `, records for ${Object.keys(bundle.data).length} paths` : ''}
          {bundle.settings ? ', settings' : ''}.
        </p>
      )}
      <ErrorBox error={error} />
      {plan && (
        <div data-testid="import-plan">
          <p>
            Plan: <strong>{plan.summary.create}</strong> to create, <strong>{plan.summary.update}</strong> to update, <strong>{plan.summary.delete}</strong> to delete
            {bundle?.data ? '; records are restored as in the file' : ''}
            {bundle?.settings ? '; settings are applied' : ''}.
          </p>
          {plan.changes.length > 0 && (
            <table>
              <tbody>
                {plan.changes.map((c) => (
                  <tr>
                    <td>{c.action}</td>
                    <td>{c.kind}</td>
                    <td>
                      <code>{c.key}</code>
                    </td>
                    <td class="small">{c.fields?.map((f) => f.field).join(', ')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <div class="row" style={{ marginTop: '8px' }}>
            <button class="primary" onClick={apply}>
              Apply the import
            </button>
          </div>
        </div>
      )}
      {result !== null && (
        <div data-testid="import-result">
          <p class="ok">Imported.</p>
          <Json value={(result as any).summary ?? result} />
        </div>
      )}
    </div>
  );
}

export default function Settings() {
  return (
    <Page title="Settings">
      <SettingsForm />
      {can('manage_api') ? (
        <>
          <Export />
          <Import />
        </>
      ) : (
        <p class="muted">Project export and import need manage_api.</p>
      )}
    </Page>
  );
}
