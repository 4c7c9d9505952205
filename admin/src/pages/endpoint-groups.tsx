// Endpoint groups: list and editor (name, description, icon, colour, order, network rules).
import { useState } from 'preact/hooks';
import { api, can } from '../api.ts';
import { ErrorBox, Field, IfCan, Link, Modal, Page, Pager, SearchBox, attempt, confirmAsk, detailsOf, usePaged } from '../ui.tsx';
import { NetworkRules, NO_RULES, type NetworkAccess } from './network-rules.tsx';

interface EndpointGroup {
  _id: string;
  name: string;
  description: string;
  icon: string;
  color: string;
  order: number;
  networkAccess: NetworkAccess;
}

function GroupForm(props: { group: EndpointGroup | null; onDone: () => void; onClose: () => void }) {
  const g = props.group;
  const [draft, setDraft] = useState({ name: g?.name ?? '', description: g?.description ?? '', icon: g?.icon ?? '', color: g?.color ?? '#2563eb', order: g?.order ?? 0, networkAccess: g?.networkAccess ?? NO_RULES });
  const [error, setError] = useState<unknown>(null);
  const details = detailsOf(error);
  const save = async (event: Event) => {
    event.preventDefault();
    const res = await attempt(() => (g ? api('PUT', `/api/endpoints/groups/${g._id}`, { body: draft }) : api('POST', '/api/endpoints/groups', { body: draft })), 'Endpoint group saved');
    if (res.ok) props.onDone();
    else setError(res.error);
  };
  return (
    <Modal title={g ? `Edit ${g.name}` : 'New endpoint group'} onClose={props.onClose} wide>
      <form onSubmit={save}>
        <div class="form-grid">
          <Field label="Name" name="name" details={details}>
            <input name="name" value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
          </Field>
          <Field label="Icon" name="icon" details={details} hint="a name, e.g. shopping-cart">
            <input name="icon" value={draft.icon} onInput={(e) => setDraft({ ...draft, icon: e.currentTarget.value })} />
          </Field>
          <Field label="Colour" name="color" details={details}>
            <input name="color" type="color" value={draft.color} onInput={(e) => setDraft({ ...draft, color: e.currentTarget.value })} />
          </Field>
          <Field label="Order" name="order" details={details}>
            <input name="order" type="number" value={draft.order} onInput={(e) => setDraft({ ...draft, order: Number(e.currentTarget.value) })} />
          </Field>
        </div>
        <Field label="Description" name="description" details={details}>
          <input name="description" value={draft.description} onInput={(e) => setDraft({ ...draft, description: e.currentTarget.value })} />
        </Field>
        <NetworkRules value={draft.networkAccess} details={details} onChange={(networkAccess) => setDraft({ ...draft, networkAccess })} />
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

export default function EndpointGroups() {
  const list = usePaged<EndpointGroup>('/api/endpoints/groups');
  const [editing, setEditing] = useState<EndpointGroup | null | 'new'>(null);
  const [error, setError] = useState<unknown>(null);
  const writable = can('manage_api');
  const remove = async (g: EndpointGroup) => {
    if (!(await confirmAsk(`Delete endpoint group ${g.name}?`))) return;
    const res = await attempt(() => api('DELETE', `/api/endpoints/groups/${g._id}`), 'Deleted');
    setError(res.ok ? null : res.error);
    list.reload();
  };
  return (
    <Page
      title="Endpoint groups"
      actions={
        <IfCan any={['manage_api']}>
          <button class="primary" onClick={() => setEditing('new')}>
            New endpoint group
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
              <th>Order</th>
              <th>Name</th>
              <th class="hide-sm">Description</th>
              <th>Network rules</th>
              {writable && <th />}
            </tr>
          </thead>
          <tbody>
            {list.items.map((g) => (
              <tr>
                <td>{g.order}</td>
                <td>
                  <span class="badge" style={{ background: g.color, color: '#fff' }}>
                    {g.icon || '■'}
                  </span>{' '}
                  <Link to={`/endpoints?groupId=${g._id}`}>{g.name}</Link>
                </td>
                <td class="hide-sm">{g.description}</td>
                <td>{g.networkAccess.enabled ? `${g.networkAccess.allowedDomains.length} domains, ${g.networkAccess.allowedIpRanges.length} IP rules` : 'off'}</td>
                {writable && (
                  <td class="actions">
                    <button class="link" onClick={() => setEditing(g)}>
                      Edit
                    </button>
                    <button class="link bad" onClick={() => remove(g)}>
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
