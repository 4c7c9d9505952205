// API keys: list (prefix, permissions, last use, expiry), create (the key is shown once, with a
// copy button), revoke.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { EmptyRow, ErrorBox, Field, Modal, Page, Pager, PermissionChecks, SearchBox, attempt, confirmAsk, copy, detailsOf, fmtAgo, fmtDate, usePaged } from '../ui.tsx';

interface ApiKey {
  _id: string;
  name: string;
  prefix: string;
  permissions: string[];
  expiresAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
}

function CreateKey(props: { onDone: () => void; onClose: () => void }) {
  const [draft, setDraft] = useState({ name: '', permissions: ['view'] as string[], expiresAt: '' });
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<string | null>(null);
  const details = detailsOf(error);
  const save = async (event: Event) => {
    event.preventDefault();
    const body = { name: draft.name, permissions: draft.permissions, ...(draft.expiresAt ? { expiresAt: new Date(draft.expiresAt).toISOString() } : {}) };
    const res = await attempt(() => api<{ key: string }>('POST', '/api/api-keys', { body }));
    if (!res.ok) return setError(res.error);
    setCreated(res.value.data.key);
    props.onDone();
  };
  if (created) {
    return (
      <Modal title="Your new API key" onClose={props.onClose}>
        <p>Copy it now: it is shown only once.</p>
        <pre data-testid="new-key">{created}</pre>
        <div class="row end">
          <button onClick={() => copy(created)}>Copy</button>
          <button class="primary" onClick={props.onClose}>
            Done
          </button>
        </div>
      </Modal>
    );
  }
  return (
    <Modal title="New API key" onClose={props.onClose}>
      <form onSubmit={save}>
        <Field label="Name" name="name" details={details}>
          <input name="name" value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
        </Field>
        <Field group label="Permissions" name="permissions" details={details}>
          <PermissionChecks value={draft.permissions} onChange={(permissions) => setDraft({ ...draft, permissions })} />
        </Field>
        <Field label="Expires (optional)" name="expiresAt" details={details}>
          <input name="expiresAt" type="datetime-local" value={draft.expiresAt} onInput={(e) => setDraft({ ...draft, expiresAt: e.currentTarget.value })} />
        </Field>
        <ErrorBox error={error} />
        <div class="row end">
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button class="primary" type="submit">
            Create
          </button>
        </div>
      </form>
    </Modal>
  );
}

export default function ApiKeys() {
  const list = usePaged<ApiKey>('/api/api-keys');
  const [creating, setCreating] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const revoke = async (key: ApiKey) => {
    if (!(await confirmAsk(`Revoke ${key.name} (${key.prefix}…)? Clients using it stop working at once.`, 'Revoke'))) return;
    const res = await attempt(() => api('DELETE', `/api/api-keys/${key._id}`), 'Revoked');
    setError(res.ok ? null : res.error);
    list.reload();
  };
  return (
    <Page
      title="API keys"
      actions={
        <button class="primary" onClick={() => setCreating(true)}>
          New API key
        </button>
      }
    >
      <div class="row" style={{ marginBottom: '10px' }}>
        <SearchBox />
      </div>
      <ErrorBox error={error ?? list.error} />
      <div class="panel table-wrap">
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Prefix</th>
              <th>Permissions</th>
              <th>Last used</th>
              <th class="hide-sm">Expires</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.items.map((k) => (
              <tr>
                <td>{k.name}</td>
                <td>
                  <code>{k.prefix}…</code>
                </td>
                <td>{k.permissions.join(', ')}</td>
                <td>{fmtAgo(k.lastUsedAt)}</td>
                <td class="hide-sm">{k.expiresAt ? fmtDate(k.expiresAt) : 'never'}</td>
                <td class="actions">
                  <button class="link bad" onClick={() => revoke(k)}>
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
            <EmptyRow list={list} colSpan={6}>No API keys yet.</EmptyRow>
          </tbody>
        </table>
        <Pager meta={list.meta} />
      </div>
      {creating && <CreateKey onClose={() => setCreating(false)} onDone={() => list.reload()} />}
    </Page>
  );
}
