// User groups: list with search, create, edit (permissions as checkboxes), delete. System
// groups and groups with members are protected by the API; its errors are shown as they come.
import { useState } from 'preact/hooks';
import { api, can } from '../api.ts';
import { Badge, ErrorBox, Field, IfCan, Modal, Page, Pager, PermissionChecks, SearchBox, attempt, confirmAsk, detailsOf, usePaged } from '../ui.tsx';

interface Group {
  _id: string;
  name: string;
  description: string;
  permissions: string[];
  isSystem?: boolean;
}

function GroupForm(props: { group: Group | null; onDone: () => void; onClose: () => void }) {
  const g = props.group;
  const [draft, setDraft] = useState({ name: g?.name ?? '', description: g?.description ?? '', permissions: g?.permissions ?? [] });
  const [error, setError] = useState<unknown>(null);
  const details = detailsOf(error);
  const save = async (event: Event) => {
    event.preventDefault();
    const res = await attempt(() => (g ? api('PUT', `/api/groups/${g._id}`, { body: draft }) : api('POST', '/api/groups', { body: draft })), 'Group saved');
    if (res.ok) props.onDone();
    else setError(res.error);
  };
  return (
    <Modal title={g ? `Edit ${g.name}` : 'New group'} onClose={props.onClose}>
      <form onSubmit={save}>
        <Field label="Name" name="name" details={details}>
          <input name="name" value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
        </Field>
        <Field label="Description" name="description" details={details}>
          <input name="description" value={draft.description} onInput={(e) => setDraft({ ...draft, description: e.currentTarget.value })} />
        </Field>
        <Field group label="Permissions" name="permissions" details={details}>
          <PermissionChecks value={draft.permissions} onChange={(permissions) => setDraft({ ...draft, permissions })} />
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

export default function Groups() {
  const list = usePaged<Group>('/api/groups');
  const [editing, setEditing] = useState<Group | null | 'new'>(null);
  const [error, setError] = useState<unknown>(null);
  const writable = can('manage_users');
  const remove = async (g: Group) => {
    if (!(await confirmAsk(`Delete group ${g.name}?`))) return;
    const res = await attempt(() => api('DELETE', `/api/groups/${g._id}`), 'Deleted');
    setError(res.ok ? null : res.error);
    list.reload();
  };
  return (
    <Page
      title="Groups"
      actions={
        <IfCan any={['manage_users']}>
          <button class="primary" onClick={() => setEditing('new')}>
            New group
          </button>
        </IfCan>
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
              <th class="hide-sm">Description</th>
              <th>Permissions</th>
              {writable && <th />}
            </tr>
          </thead>
          <tbody>
            {list.items.map((g) => (
              <tr>
                <td>
                  {g.name} {g.isSystem && <Badge>system</Badge>}
                </td>
                <td class="hide-sm">{g.description}</td>
                <td>{g.permissions.join(', ') || '—'}</td>
                {writable && (
                  <td class="actions">
                    <button class="link" onClick={() => setEditing(g)}>
                      Edit
                    </button>
                    {!g.isSystem && (
                      <button class="link bad" onClick={() => remove(g)}>
                        Delete
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
        <Pager meta={list.meta} />
      </div>
      {editing && (
        <GroupForm
          group={editing === 'new' ? null : editing}
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
