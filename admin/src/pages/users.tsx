// Users: paged list with search; create, edit, disable/enable, unlock, delete. The API's rules
// (no granting what you lack, the last administrator, your own account) show as its errors.
import { useState } from 'preact/hooks';
import { api, can, get, session } from '../api.ts';
import { Badge, ErrorBox, Field, IfCan, Modal, Page, Pager, SearchBox, attempt, confirmAsk, detailsOf, fmtAgo, useLoad, usePaged } from '../ui.tsx';

interface User {
  _id: string;
  login: string;
  email: string | null;
  name: string;
  groupIds: string[];
  status: 'active' | 'disabled';
  lastLoginAt: string | null;
}
interface Group {
  _id: string;
  name: string;
  permissions: string[];
}

function UserForm(props: { user: User | null; groups: Group[]; onDone: () => void; onClose: () => void }) {
  const u = props.user;
  const [draft, setDraft] = useState({ login: u?.login ?? '', email: u?.email ?? '', name: u?.name ?? '', password: '', currentPassword: '', groupIds: u?.groupIds ?? [], status: u?.status ?? 'active' });
  const [error, setError] = useState<unknown>(null);
  const details = detailsOf(error);
  // Your own password is changed through the profile, which asks for the current one (the
  // users API refuses it: a stolen session must not take the account over).
  const self = !!u && session.get().me?._id === u._id;
  // Putting a user into a group that grants what you lack is refused (403).
  const lacking = (g: Group): string[] => g.permissions.filter((p) => !(session.get().me?.permissions ?? []).includes(p));
  const save = async (event: Event) => {
    event.preventDefault();
    const body: Record<string, unknown> = { email: draft.email, name: draft.name, groupIds: draft.groupIds, status: draft.status };
    if (!u) body.login = draft.login;
    if (draft.password && !self) body.password = draft.password;
    const res = await attempt(async () => {
      if (!u) return api('POST', '/api/users', { body });
      await api('PUT', `/api/users/${u._id}`, { body });
      if (self && draft.password) await api('PUT', '/api/profile', { body: { currentPassword: draft.currentPassword, password: draft.password } });
      return null;
    }, u ? 'User saved' : 'User created');
    if (res.ok) props.onDone();
    else setError(res.error);
  };
  return (
    <Modal title={u ? `Edit ${u.login}` : 'New user'} onClose={props.onClose}>
      <form onSubmit={save}>
        <Field label="Login" name="login" details={details}>
          <input name="login" value={draft.login} disabled={!!u} onInput={(e) => setDraft({ ...draft, login: e.currentTarget.value })} />
        </Field>
        <Field label="Name" name="name" details={details}>
          <input name="name" value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
        </Field>
        <Field label="Email" name="email" details={details}>
          <input name="email" type="email" value={draft.email} onInput={(e) => setDraft({ ...draft, email: e.currentTarget.value })} />
        </Field>
        <Field label={u ? 'New password (leave empty to keep)' : 'Password'} name="password" details={details} hint="8 to 72 bytes">
          <input name="password" type="password" autoComplete="new-password" value={draft.password} onInput={(e) => setDraft({ ...draft, password: e.currentTarget.value })} />
        </Field>
        {self && draft.password ? (
          <Field label="Current password" name="currentPassword" details={details} hint="your own password: asked for before it changes">
            <input name="currentPassword" type="password" autoComplete="current-password" value={draft.currentPassword} onInput={(e) => setDraft({ ...draft, currentPassword: e.currentTarget.value })} />
          </Field>
        ) : null}
        <Field group label="Groups" name="groupIds" details={details}>
          <div>
            {props.groups.map((g) => (
              <label class="check" title={lacking(g).length > 0 ? `grants ${lacking(g).join(', ')}, which you do not hold` : undefined}>
                <input type="checkbox" disabled={lacking(g).length > 0 && !draft.groupIds.includes(g._id)} checked={draft.groupIds.includes(g._id)} onChange={(e) => setDraft({ ...draft, groupIds: e.currentTarget.checked ? [...draft.groupIds, g._id] : draft.groupIds.filter((x) => x !== g._id) })} />
                {g.name}
              </label>
            ))}
          </div>
        </Field>
        <Field label="Status" name="status" details={details}>
          <select name="status" value={draft.status} onChange={(e) => setDraft({ ...draft, status: e.currentTarget.value as User['status'] })}>
            <option value="active">active</option>
            <option value="disabled">disabled</option>
          </select>
        </Field>
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

export default function Users() {
  const list = usePaged<User>('/api/users');
  const groups = useLoad(() => get<Group[]>('/api/groups?limit=100').then((r) => r.data), []);
  const [editing, setEditing] = useState<User | null | 'new'>(null);
  const [error, setError] = useState<unknown>(null);
  const groupName = (id: string) => groups.data?.find((g) => g._id === id)?.name ?? id;
  const act = async (run: () => Promise<unknown>, done: string) => {
    const res = await attempt(run, done);
    setError(res.ok ? null : res.error);
    list.reload();
  };
  const writable = can('manage_users');
  // The API refuses to change a user whose groups grant a permission you lack (403): such a row
  // says so instead of offering buttons that fail.
  const beyondMe = (u: User): string[] => {
    const mine = session.get().me?.permissions ?? [];
    const theirs = u.groupIds.flatMap((id) => groups.data?.find((g) => g._id === id)?.permissions ?? []);
    return [...new Set(theirs.filter((p) => !mine.includes(p)))];
  };
  return (
    <Page
      title="Users"
      actions={
        <IfCan any={['manage_users']}>
          <button class="primary" onClick={() => setEditing('new')}>
            New user
          </button>
        </IfCan>
      }
    >
      <div class="row" style={{ marginBottom: '10px' }}>
        <SearchBox placeholder="Search name, login, email, status" />
      </div>
      <ErrorBox error={error ?? list.error} />
      <div class="panel table-wrap">
        <table>
          <thead>
            <tr>
              <th>Login</th>
              <th class="hide-sm">Name</th>
              <th class="hide-sm">Email</th>
              <th>Groups</th>
              <th>Status</th>
              <th class="hide-sm">Last sign-in</th>
              {writable && <th />}
            </tr>
          </thead>
          <tbody>
            {list.items.map((u) => (
              <tr>
                <td>{u.login}</td>
                <td class="hide-sm">{u.name}</td>
                <td class="hide-sm">{u.email ?? '—'}</td>
                <td>{u.groupIds.map(groupName).join(', ') || '—'}</td>
                <td>
                  <Badge kind={u.status === 'active' ? 'ok' : 'bad'}>{u.status}</Badge>
                </td>
                <td class="hide-sm">{fmtAgo(u.lastLoginAt)}</td>
                {writable && beyondMe(u).length > 0 && (
                  <td class="actions muted small" title="Changing a user needs every permission their groups grant">
                    changing needs {beyondMe(u).join(', ')}
                  </td>
                )}
                {writable && beyondMe(u).length === 0 && (
                  <td class="actions">
                    <button class="link" onClick={() => setEditing(u)}>
                      Edit
                    </button>
                    <button class="link" onClick={() => act(() => api('PUT', `/api/users/${u._id}`, { body: { status: u.status === 'active' ? 'disabled' : 'active' } }), 'Saved')}>
                      {u.status === 'active' ? 'Disable' : 'Enable'}
                    </button>
                    <button class="link" onClick={() => act(async () => (await api('POST', `/api/users/${u._id}/unlock`)).data, 'Unlocked')}>
                      Unlock
                    </button>
                    <button class="link bad" onClick={async () => (await confirmAsk(`Delete user ${u.login}? Their sessions end.`)) && act(() => api('DELETE', `/api/users/${u._id}`), 'Deleted')}>
                      Delete
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
        <Pager meta={list.meta} />
      </div>
      {editing && (
        <UserForm
          user={editing === 'new' ? null : editing}
          groups={groups.data ?? []}
          onClose={() => setEditing(null)}
          onDone={() => {
            setEditing(null);
            list.reload();
          }}
        />
      )}
    </Page>
  );
}
