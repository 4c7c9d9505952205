// Cron jobs: schedule in words, next run, last status; an editor per action type (javascript in
// CodeMirror, http, endpoint); run now; run history (/cron/<id>).
import { useState } from 'preact/hooks';
import { api, get } from '../api.ts';
import { navigate } from '../router.ts';
import { EmptyRow, Badge, ErrorBox, Field, Json, Link, Loading, Modal, Page, Pager, SearchBox, SECRET_HEADERS_HINT, attempt, confirmAsk, detailsOf, fmtAgo, fmtDate, useLoad, usePaged } from '../ui.tsx';
import type { PageProps } from '../pages.ts';
import CodeEditor from './code-editor.tsx';
import { scheduleInWords } from './cron-words.ts';

interface Job {
  _id: string;
  name: string;
  description: string;
  schedule: string;
  timezone: string;
  enabled: boolean;
  action: Record<string, any>;
  runAs: string | null;
  lastRunAt: string | null;
  lastStatus: 'ok' | 'failed' | null;
  lastError: string | null;
  failureCount: number;
  nextRunAt: string | null;
}

const RUN_TEMPLATE = `async function run() {
  console.log('hello from cron');
  return { ok: true };
}
`;

const ACTION_DEFAULTS: Record<string, Record<string, any>> = {
  javascript: { type: 'javascript', code: RUN_TEMPLATE },
  http: { type: 'http', url: 'https://example.com/hook', method: 'POST' },
  endpoint: { type: 'endpoint', method: 'GET', path: '/api/' },
};

const jsonOr = (text: string, fallback: unknown) => {
  if (text.trim() === '') return fallback;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

function JobForm(props: { job: Job | null; onDone: (job: Job) => void; onClose: () => void }) {
  const j = props.job;
  const [draft, setDraft] = useState({ name: j?.name ?? '', description: j?.description ?? '', schedule: j?.schedule ?? '0 3 * * *', timezone: j?.timezone ?? 'UTC', enabled: j?.enabled ?? true, runAs: j?.runAs ?? '' });
  const [action, setAction] = useState<Record<string, any>>(j?.action ?? ACTION_DEFAULTS.javascript!);
  const [error, setError] = useState<unknown>(null);
  const details = detailsOf(error);
  const codeError = details.find((d) => d.field === 'action.code')?.message ?? null;
  const setA = (patch: Record<string, any>) => setAction({ ...action, ...patch });
  const save = async (event: Event) => {
    event.preventDefault();
    const body: Record<string, unknown> = { ...draft, action, runAs: action.type === 'endpoint' && draft.runAs ? draft.runAs : null };
    const res = await attempt(() => (j ? api<Job>('PUT', `/api/cron/${j._id}`, { body }) : api<Job>('POST', '/api/cron', { body })), 'Job saved');
    if (res.ok) props.onDone(res.value.data);
    else setError(res.error);
  };
  return (
    <Modal title={j ? `Edit ${j.name}` : 'New cron job'} onClose={props.onClose} wide>
      <form onSubmit={save}>
        <div class="form-grid">
          <Field label="Name" name="name" details={details}>
            <input name="name" value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
          </Field>
          <Field label="Schedule" name="schedule" details={details} hint={scheduleInWords(draft.schedule)}>
            <input name="schedule" class="mono" value={draft.schedule} onInput={(e) => setDraft({ ...draft, schedule: e.currentTarget.value })} />
          </Field>
          <Field label="Time zone" name="timezone" details={details}>
            <input name="timezone" value={draft.timezone} onInput={(e) => setDraft({ ...draft, timezone: e.currentTarget.value })} />
          </Field>
          <Field label="Action type" name="action.type" details={details}>
            <select value={action.type} onChange={(e) => setAction(ACTION_DEFAULTS[e.currentTarget.value]!)}>
              <option value="javascript">javascript: run code</option>
              <option value="http">http: send a request</option>
              <option value="endpoint">endpoint: call a dynamic endpoint</option>
            </select>
          </Field>
        </div>
        <Field label="Description" name="description" details={details}>
          <input name="description" value={draft.description} onInput={(e) => setDraft({ ...draft, description: e.currentTarget.value })} />
        </Field>
        <label class="check">
          <input type="checkbox" checked={draft.enabled} onChange={(e) => setDraft({ ...draft, enabled: e.currentTarget.checked })} /> Enabled
        </label>
        {action.type === 'javascript' && (
          <div style={{ marginTop: '8px' }}>
            <CodeEditor label="Job code" language="javascript" value={action.code ?? ''} error={codeError} onChange={(code) => setAction((a) => ({ ...a, code }))} />
            {codeError && <div class="field-error">{codeError}</div>}
          </div>
        )}
        {action.type !== 'javascript' && (
          <div class="form-grid" style={{ marginTop: '8px' }}>
            <Field label="Method" name="action.method" details={details}>
              <select value={action.method} onChange={(e) => setA({ method: e.currentTarget.value })}>
                {['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m) => (
                  <option>{m}</option>
                ))}
              </select>
            </Field>
            {action.type === 'http' ? (
              <>
                <Field label="URL" name="action.url" details={details}>
                  <input value={action.url ?? ''} onInput={(e) => setA({ url: e.currentTarget.value })} />
                </Field>
                <Field label="Timeout (ms)" name="action.timeoutMs" details={details}>
                  <input type="number" value={action.timeoutMs ?? ''} onInput={(e) => setA({ timeoutMs: e.currentTarget.value ? Number(e.currentTarget.value) : undefined })} />
                </Field>
                <Field label="Headers (JSON)" name="action.headers" details={details} hint={SECRET_HEADERS_HINT}>
                  <input class="mono" value={action.headers ? JSON.stringify(action.headers) : ''} onChange={(e) => setA({ headers: jsonOr(e.currentTarget.value, undefined) })} />
                </Field>
              </>
            ) : (
              <>
                <Field label="Path" name="action.path" details={details}>
                  <input class="mono" value={action.path ?? ''} onInput={(e) => setA({ path: e.currentTarget.value })} />
                </Field>
                <Field label="Query (JSON)" name="action.query" details={details}>
                  <input class="mono" value={action.query ? JSON.stringify(action.query) : ''} onChange={(e) => setA({ query: jsonOr(e.currentTarget.value, undefined) })} />
                </Field>
                <Field label="Run as (login; empty: anonymous)" name="runAs" details={details}>
                  <input value={draft.runAs} onInput={(e) => setDraft({ ...draft, runAs: e.currentTarget.value })} />
                </Field>
              </>
            )}
            <Field label="Body (JSON)" name="action.body" details={details}>
              <textarea class="mono" rows={3} value={action.body === undefined ? '' : typeof action.body === 'string' ? action.body : JSON.stringify(action.body, null, 2)} onChange={(e) => setA({ body: jsonOr(e.currentTarget.value, undefined) })} />
            </Field>
          </div>
        )}
        <ErrorBox error={error} />
        <div class="row end">
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button class="primary" type="submit">
            Save
          </button>
        </div>
      </form>
    </Modal>
  );
}

const Status = (props: { status: string | null }) => (props.status ? <Badge kind={props.status === 'ok' ? 'ok' : 'bad'}>{props.status}</Badge> : <span class="muted">never run</span>);

function Runs(props: { job: Job }) {
  const runs = usePaged<any>(`/api/cron/${props.job._id}/runs`);
  const [open, setOpen] = useState<string | null>(null);
  return (
    <div class="panel table-wrap">
      <h3 style={{ marginTop: 0 }}>Run history</h3>
      <ErrorBox error={runs.error} />
      <table>
        <thead>
          <tr>
            <th>Started</th>
            <th>Trigger</th>
            <th>Status</th>
            <th>Duration</th>
          </tr>
        </thead>
        <tbody>
          {runs.items.map((r) => [
            <tr>
              <td>
                <button class="link" aria-expanded={open === r._id} onClick={() => setOpen(open === r._id ? null : r._id)}>
                  {open === r._id ? '▾' : '▸'} {fmtDate(r.startedAt)}
                </button>
              </td>
              <td>{r.trigger}</td>
              <td>
                <Status status={r.status} /> {r.error && <span class="small bad">{r.error}</span>}
              </td>
              <td>{r.durationMs} ms</td>
            </tr>,
            open === r._id && (
              <tr class="expand-row">
                <td colSpan={4}>
                  <Json value={r.output ?? r} />
                </td>
              </tr>
            ),
          ])}
          <EmptyRow list={runs} colSpan={4}>No runs yet.</EmptyRow>
        </tbody>
      </table>
      <Pager meta={runs.meta} />
    </div>
  );
}

function JobDetail(props: { id: string }) {
  const job = useLoad(() => get<Job>(`/api/cron/${encodeURIComponent(props.id)}`).then((r) => r.data), [props.id]);
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  if (job.error) return <ErrorBox error={job.error} />;
  if (!job.data) return <Loading />;
  const j = job.data;
  const runNow = async () => {
    const res = await attempt(() => api('POST', `/api/cron/${j._id}/run`), 'Run finished');
    setError(res.ok ? null : res.error);
    job.reload();
    setTick(tick + 1);
  };
  const remove = async () => {
    if (!(await confirmAsk(`Delete cron job ${j.name} and its run history?`))) return;
    const res = await attempt(() => api('DELETE', `/api/cron/${j._id}`), 'Deleted');
    if (res.ok) navigate('/cron');
    else setError(res.error);
  };
  return (
    <Page
      title={`Cron job ${j.name}`}
      actions={
        <>
          <Link to="/cron">← All jobs</Link>
          <button class="primary" onClick={runNow}>
            Run now
          </button>
          <button onClick={() => setEditing(true)}>Edit</button>
          <button class="danger" onClick={remove}>
            Delete
          </button>
        </>
      }
    >
      <ErrorBox error={error} />
      <div class="panel">
        <p>
          <code>{j.schedule}</code> — {scheduleInWords(j.schedule)} ({j.timezone}) {!j.enabled && <Badge>disabled</Badge>}
        </p>
        <p>
          Next run: {j.nextRunAt ? `${fmtDate(j.nextRunAt)} (${fmtAgo(j.nextRunAt)})` : '—'} · Last: <Status status={j.lastStatus} /> {j.lastRunAt && fmtAgo(j.lastRunAt)}
          {j.lastError && <span class="bad"> {j.lastError}</span>}
        </p>
        <p class="small muted">{j.description}</p>
        <Json value={j.action} />
      </div>
      <Runs key={tick} job={j} />
      {editing && (
        <JobForm
          job={j}
          onClose={() => setEditing(false)}
          onDone={() => {
            setEditing(false);
            job.reload();
          }}
        />
      )}
    </Page>
  );
}

function JobList() {
  const list = usePaged<Job>('/api/cron');
  const [creating, setCreating] = useState(false);
  return (
    <Page
      title="Cron jobs"
      actions={
        <button class="primary" onClick={() => setCreating(true)}>
          New cron job
        </button>
      }
    >
      <div class="row" style={{ marginBottom: '10px' }}>
        <SearchBox />
      </div>
      <ErrorBox error={list.error} />
      <div class="panel table-wrap">
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Schedule</th>
              <th class="hide-sm">Action</th>
              <th>Next run</th>
              <th>Last run</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((j) => (
              <tr>
                <td>
                  <Link to={`/cron/${j._id}`}>{j.name}</Link> {!j.enabled && <Badge>disabled</Badge>}
                </td>
                <td>
                  {scheduleInWords(j.schedule)}
                  <div class="small muted mono">{j.schedule}</div>
                </td>
                <td class="hide-sm">{j.action?.type}</td>
                <td>{j.nextRunAt ? fmtAgo(j.nextRunAt) : '—'}</td>
                <td>
                  <Status status={j.lastStatus} />
                  {j.failureCount > 0 && <span class="small bad"> {j.failureCount} failures</span>}
                </td>
              </tr>
            ))}
            <EmptyRow list={list} colSpan={5}>No cron jobs yet.</EmptyRow>
          </tbody>
        </table>
        <Pager meta={list.meta} />
      </div>
      {creating && (
        <JobForm
          job={null}
          onClose={() => setCreating(false)}
          onDone={(job) => {
            setCreating(false);
            navigate(`/cron/${job._id}`);
          }}
        />
      )}
    </Page>
  );
}

export default function Cron(props: PageProps) {
  return props.rest[0] ? <JobDetail id={props.rest[0]} /> : <JobList />;
}
