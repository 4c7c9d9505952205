// Webhooks: hooks with their health; editor (events, filter, secret set/unset — never shown),
// send a test event; deliveries with their request and response, redeliver (/webhooks/<id>).
// A server without webhooks (404) says so instead of failing.
import { useState } from 'preact/hooks';
import { ApiError, api, can, get } from '../api.ts';
import { navigate } from '../router.ts';
import { EmptyRow, Badge, ErrorBox, Field, Json, Link, Loading, Modal, Page, Pager, SearchBox, SECRET_HEADERS_HINT, attempt, confirmAsk, detailsOf, fmtAgo, fmtDate, toast, useLoad, usePaged } from '../ui.tsx';
import type { PageProps } from '../pages.ts';

// The API refuses a hook following user.* (or *) to a caller who may not read users (403).
const USER_EVENTS_HINT = 'user.* events carry user records: following them needs view or manage_users';
const EVENTS = ['user.created', 'user.updated', 'user.deleted', 'endpoint.created', 'endpoint.updated', 'endpoint.deleted', 'endpoint.called', 'api.error', 'record.created', 'record.updated', 'record.deleted'];

interface Hook {
  _id: string;
  name: string;
  url: string;
  events: string[];
  filter: { path?: string; group?: string } | null;
  secret: 'set' | 'unset' | boolean;
  secretSet?: boolean;
  enabled: boolean;
  headers: Record<string, string>;
  health?: 'ok' | 'failing' | 'unknown';
  consecutiveFailures?: number;
  lastDeliveryAt?: string | null;
  lastError?: string | null;
}

const secretIsSet = (h: Hook) => h.secret === 'set' || h.secret === true || h.secretSet === true;

const Health = (props: { hook: Hook }) => {
  const h = props.hook.health ?? 'unknown';
  return <Badge kind={h === 'ok' ? 'ok' : h === 'failing' ? 'bad' : 'muted'}>{h}</Badge>;
};

function HookForm(props: { hook: Hook | null; onDone: (hook: Hook) => void; onClose: () => void }) {
  const h = props.hook;
  const [draft, setDraft] = useState({ name: h?.name ?? '', url: h?.url ?? 'https://', events: h?.events ?? ['record.created'], enabled: h?.enabled ?? true, path: h?.filter?.path ?? '', group: h?.filter?.group ?? '' });
  const [headers, setHeaders] = useState(JSON.stringify(h?.headers ?? {}));
  const [secret, setSecret] = useState('');
  const [removeSecret, setRemoveSecret] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const details = detailsOf(error);
  const save = async (event: Event) => {
    event.preventDefault();
    let parsedHeaders: unknown;
    try {
      parsedHeaders = JSON.parse(headers || '{}');
    } catch {
      return setError(new ApiError(400, 'Headers must be a JSON object', [{ field: 'headers', message: 'must be a JSON object' }]));
    }
    const filter = draft.path || draft.group ? { ...(draft.path ? { path: draft.path } : {}), ...(draft.group ? { group: draft.group } : {}) } : null;
    const body: Record<string, unknown> = { name: draft.name, url: draft.url, events: draft.events, enabled: draft.enabled, filter, headers: parsedHeaders };
    // The secret is write-only: sent only when typed (set) or explicitly removed (null).
    if (secret) body.secret = secret;
    else if (removeSecret) body.secret = null;
    const res = await attempt(() => (h ? api<Hook>('PUT', `/api/webhooks/${h._id}`, { body }) : api<Hook>('POST', '/api/webhooks', { body })), 'Webhook saved');
    if (res.ok) props.onDone(res.value.data);
    else setError(res.error);
  };
  const readsUsers = can('view', 'manage_users');
  const toggle = (event: string, on: boolean) => setDraft({ ...draft, events: on ? [...draft.events, event] : draft.events.filter((e) => e !== event) });
  return (
    <Modal title={h ? `Edit ${h.name}` : 'New webhook'} onClose={props.onClose} wide>
      <form onSubmit={save}>
        <div class="form-grid">
          <Field label="Name" name="name" details={details}>
            <input name="name" value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
          </Field>
          <Field label="URL" name="url" details={details}>
            <input name="url" value={draft.url} onInput={(e) => setDraft({ ...draft, url: e.currentTarget.value })} />
          </Field>
          <Field label="Filter: path (and under it)" name="filter.path" details={details}>
            <input value={draft.path} onInput={(e) => setDraft({ ...draft, path: e.currentTarget.value })} />
          </Field>
          <Field label="Filter: endpoint group" name="filter.group" details={details}>
            <input value={draft.group} onInput={(e) => setDraft({ ...draft, group: e.currentTarget.value })} />
          </Field>
        </div>
        <Field group label="Events" name="events" details={details}>
          <div>
            <label class="check" title={readsUsers ? undefined : USER_EVENTS_HINT}>
              <input type="checkbox" disabled={!readsUsers && !draft.events.includes('*')} checked={draft.events.includes('*')} onChange={(e) => toggle('*', e.currentTarget.checked)} /> all (*)
            </label>
            {EVENTS.map((ev) => {
              const blocked = !readsUsers && ev.startsWith('user.') && !draft.events.includes(ev);
              return (
                <label class="check" title={blocked ? USER_EVENTS_HINT : undefined}>
                  <input type="checkbox" disabled={blocked} checked={draft.events.includes(ev)} onChange={(e) => toggle(ev, e.currentTarget.checked)} /> {ev}
                </label>
              );
            })}
            {readsUsers ? null : <div class="small muted">{USER_EVENTS_HINT}</div>}
          </div>
        </Field>
        <Field label="Headers (JSON object)" name="headers" details={details} hint={SECRET_HEADERS_HINT}>
          <input class="mono" value={headers} onInput={(e) => setHeaders(e.currentTarget.value)} />
        </Field>
        <Field label={`Signing secret (${h && secretIsSet(h) ? 'set' : 'not set'}; never shown)`} name="secret" details={details} hint="Type a new secret to set or replace it; leave empty to keep it.">
          <input type="password" autoComplete="off" value={secret} onInput={(e) => setSecret(e.currentTarget.value)} />
        </Field>
        {h && secretIsSet(h) && (
          <label class="check">
            <input type="checkbox" checked={removeSecret} onChange={(e) => setRemoveSecret(e.currentTarget.checked)} /> Remove the secret
          </label>
        )}
        <label class="check">
          <input type="checkbox" checked={draft.enabled} onChange={(e) => setDraft({ ...draft, enabled: e.currentTarget.checked })} /> Enabled
        </label>
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

function Deliveries(props: { hook: Hook; tick: number }) {
  const list = usePaged<any>(`/api/webhooks/${props.hook._id}/deliveries`);
  const [open, setOpen] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const redeliver = async (id: string) => {
    const res = await attempt(() => api('POST', `/api/webhooks/${props.hook._id}/deliveries/${id}/redeliver`), 'Queued again');
    setError(res.ok ? null : res.error);
    list.reload();
  };
  return (
    <div class="panel table-wrap">
      <h3 style={{ marginTop: 0 }}>Deliveries</h3>
      <ErrorBox error={error ?? list.error} />
      <table>
        <thead>
          <tr>
            <th>When</th>
            <th>Event</th>
            <th>Status</th>
            <th>Response</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {list.items.map((d) => [
            <tr>
              <td>
                <button class="link" aria-expanded={open === d._id} onClick={() => setOpen(open === d._id ? null : d._id)}>
                  {open === d._id ? '▾' : '▸'} {fmtDate(d.createdAt)}
                </button>
              </td>
              <td>
                <code>{d.event}</code>
              </td>
              <td>
                <Badge kind={d.status === 'delivered' || d.status === 'ok' ? 'ok' : d.status === 'failed' ? 'bad' : 'muted'}>{d.status}</Badge> {d.attempts > 1 && <span class="small muted">{d.attempts} attempts</span>}
              </td>
              <td>
                {d.responseCode ?? '—'} {d.durationMs !== undefined && d.durationMs !== null && <span class="small muted">{d.durationMs} ms</span>}
              </td>
              <td class="actions">
                <button class="link" onClick={() => redeliver(d._id)}>
                  Redeliver
                </button>
              </td>
            </tr>,
            open === d._id && (
              <tr class="expand-row">
                <td colSpan={5}>
                  <Json value={d} />
                </td>
              </tr>
            ),
          ])}
          <EmptyRow list={list} colSpan={5}>No deliveries yet.</EmptyRow>
        </tbody>
      </table>
      <Pager meta={list.meta} />
    </div>
  );
}

/** A delivery as the API shows it (publicDelivery). */
interface Delivery {
  _id: string;
  event: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  responseCode: number | null;
  durationMs: number | null;
  error: string | null;
  nextAttemptAt: string | null;
}

function testFailure(d: Delivery): string {
  // The dispatcher words a receiver's status as "answered 503: <body>".
  const why = d.error ? (d.error.startsWith('answered ') ? `the receiver ${d.error}` : d.error) : d.responseCode ? `the receiver answered ${d.responseCode}` : 'no answer';
  return `The test event was not delivered: ${why}.${d.nextAttemptAt ? ` It is retried at ${fmtDate(d.nextAttemptAt)}.` : ''}`;
}

function HookDetail(props: { id: string }) {
  const hook = useLoad(() => get<Hook>(`/api/webhooks/${props.id}`).then((r) => r.data), [props.id]);
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  if (hook.error) return <ErrorBox error={hook.error} />;
  if (!hook.data) return <Loading />;
  const h = hook.data;
  const test = async () => {
    const res = await attempt(() => api<Delivery>('POST', `/api/webhooks/${h._id}/test`));
    // The answer is the delivery after its first attempt: a failed one is no success.
    const delivery = res.ok ? res.value.data : null;
    if (delivery?.status === 'delivered') toast(`Test event delivered (HTTP ${delivery.responseCode ?? '?'})`);
    setError(res.ok ? (delivery && delivery.status !== 'delivered' ? new Error(testFailure(delivery)) : null) : res.error);
    setTick(tick + 1);
    hook.reload();
  };
  const remove = async () => {
    if (!(await confirmAsk(`Delete webhook ${h.name}?`))) return;
    const res = await attempt(() => api('DELETE', `/api/webhooks/${h._id}`), 'Deleted');
    if (res.ok) navigate('/webhooks');
    else setError(res.error);
  };
  return (
    <Page
      title={`Webhook ${h.name}`}
      actions={
        <>
          <Link to="/webhooks">← All webhooks</Link>
          <button class="primary" onClick={test}>
            Send a test event
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
          <Health hook={h} /> <code>{h.url}</code> {!h.enabled && <Badge>disabled</Badge>}
        </p>
        <p class="small">
          Events: {h.events.join(', ')} · Filter: {h.filter ? JSON.stringify(h.filter) : 'none'} · Secret: {secretIsSet(h) ? 'set' : 'not set'}
        </p>
        {h.lastError && <p class="small bad">Last error: {h.lastError}</p>}
      </div>
      <Deliveries key={tick} hook={h} tick={tick} />
      {editing && (
        <HookForm
          hook={h}
          onClose={() => setEditing(false)}
          onDone={() => {
            setEditing(false);
            hook.reload();
          }}
        />
      )}
    </Page>
  );
}

function HookList() {
  const list = usePaged<Hook>('/api/webhooks');
  const [creating, setCreating] = useState(false);
  if (list.error instanceof ApiError && list.error.status === 404) {
    return (
      <Page title="Webhooks">
        <div class="notice">This server does not offer webhooks (GET /api/webhooks answers 404).</div>
      </Page>
    );
  }
  return (
    <Page
      title="Webhooks"
      actions={
        <button class="primary" onClick={() => setCreating(true)}>
          New webhook
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
              <th>Health</th>
              <th class="hide-sm">URL</th>
              <th>Events</th>
              <th class="hide-sm">Last delivery</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((h) => (
              <tr>
                <td>
                  <Link to={`/webhooks/${h._id}`}>{h.name}</Link> {!h.enabled && <Badge>disabled</Badge>}
                </td>
                <td>
                  <Health hook={h} />
                </td>
                <td class="hide-sm">
                  <code>{h.url}</code>
                </td>
                <td class="small">{h.events.join(', ')}</td>
                <td class="hide-sm">{fmtAgo(h.lastDeliveryAt)}</td>
              </tr>
            ))}
            <EmptyRow list={list} colSpan={5}>No webhooks yet.</EmptyRow>
          </tbody>
        </table>
        <Pager meta={list.meta} />
      </div>
      {creating && (
        <HookForm
          hook={null}
          onClose={() => setCreating(false)}
          onDone={(hook) => {
            setCreating(false);
            navigate(`/webhooks/${hook._id}`);
          }}
        />
      )}
    </Page>
  );
}

export default function Webhooks(props: PageProps) {
  return props.rest[0] ? <HookDetail id={props.rest[0]} /> : <HookList />;
}
