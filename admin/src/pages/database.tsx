// The raw collection browser: collections with counts, paged documents, a JSON editor with
// validation (the API checks every write as its own service would), redacted fields shown as
// such, and clear for endpointdatas and logs (asked first).
import { useState } from 'preact/hooks';
import { api, get } from '../api.ts';
import { navigate } from '../router.ts';
import { EmptyRow, ErrorBox, Link, Loading, Modal, Page, Pager, SearchBox, attempt, confirmAsk, errorText, useLoad, usePaged } from '../ui.tsx';
import type { PageProps } from '../pages.ts';
import CodeEditor from './code-editor.tsx';

const CLEARABLE = ['endpointdatas', 'logs'];
const REDACTED = '[REDACTED]';

function summary(doc: Record<string, any>): string {
  for (const key of ['login', 'name', 'path', 'resourcePath', 'message', 'key']) if (typeof doc[key] === 'string') return doc[key];
  return JSON.stringify(doc).slice(0, 80);
}

function DocEditor(props: { collection: string; doc: Record<string, any> | null; onDone: () => void; onClose: () => void }) {
  const { _id, ...rest } = props.doc ?? {};
  const [text, setText] = useState(JSON.stringify(props.doc ? rest : {}, null, 2));
  const [error, setError] = useState<unknown>(null);
  let parseError: string | null = null;
  try {
    const value = JSON.parse(text);
    if (!value || typeof value !== 'object' || Array.isArray(value)) parseError = 'A document is a JSON object';
  } catch (e) {
    parseError = errorText(e);
  }
  const save = async () => {
    const body = JSON.parse(text);
    const res = await attempt(() => (props.doc ? api('PUT', `/api/database/collections/${props.collection}/${_id}`, { body }) : api('POST', `/api/database/collections/${props.collection}`, { body })), 'Saved');
    if (res.ok) props.onDone();
    else setError(res.error);
  };
  const remove = async () => {
    if (!(await confirmAsk(`Delete this ${props.collection} document (${_id})?`))) return;
    const res = await attempt(() => api('DELETE', `/api/database/collections/${props.collection}/${_id}`), 'Deleted');
    if (res.ok) props.onDone();
    else setError(res.error);
  };
  return (
    <Modal title={props.doc ? `${props.collection} / ${_id}` : `New ${props.collection} document`} onClose={props.onClose} wide>
      {text.includes(REDACTED) && <div class="notice small">Fields shown as "{REDACTED}" are secrets (password hashes, token material): they are never shown, and sending them back unchanged keeps them.</div>}
      <CodeEditor label="Document JSON" language="json" value={text} onChange={setText} error={parseError} />
      {parseError && <div class="field-error">Not valid JSON: {parseError}</div>}
      <ErrorBox error={error} />
      <div class="row end" style={{ marginTop: '10px' }}>
        {props.doc && props.collection !== 'systemsettings' && (
          <button class="danger" onClick={remove}>
            Delete
          </button>
        )}
        <button onClick={props.onClose}>Cancel</button>
        {props.collection !== 'logs' && (
          <button class="primary" disabled={!!parseError} onClick={save}>
            Save
          </button>
        )}
      </div>
    </Modal>
  );
}

function Documents(props: { collection: string; onChanged: () => void }) {
  const list = usePaged<Record<string, any>>(`/api/database/collections/${props.collection}`);
  const [editing, setEditing] = useState<Record<string, any> | null | 'new'>(null);
  const [error, setError] = useState<unknown>(null);
  const clear = async () => {
    if (!(await confirmAsk(`Delete every document of ${props.collection}? This cannot be undone.`, 'Clear'))) return;
    const res = await attempt(() => api('DELETE', `/api/database/collections/${props.collection}`), 'Cleared');
    setError(res.ok ? null : res.error);
    list.reload();
    props.onChanged();
  };
  return (
    <div>
      <div class="spread">
        <h2 style={{ margin: 0 }}>{props.collection}</h2>
        <div class="row">
          <SearchBox placeholder="Search (or an _id)" />
          {props.collection !== 'logs' && <button onClick={() => setEditing('new')}>New document</button>}
          {CLEARABLE.includes(props.collection) && (
            <button class="danger" onClick={clear}>
              Clear collection
            </button>
          )}
        </div>
      </div>
      <ErrorBox error={error ?? list.error} />
      <div class="panel table-wrap">
        <table>
          <thead>
            <tr>
              <th>_id</th>
              <th>Summary</th>
              <th class="hide-sm">Updated</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((doc) => (
              <tr>
                <td>
                  <button class="link mono" onClick={() => setEditing(doc)}>
                    {doc._id}
                  </button>
                </td>
                <td>{summary(doc)}</td>
                <td class="hide-sm small">{doc.updatedAt ?? doc.createdAt ?? ''}</td>
              </tr>
            ))}
            <EmptyRow list={list} colSpan={3}>No documents.</EmptyRow>
          </tbody>
        </table>
        <Pager meta={list.meta} />
      </div>
      {editing && (
        <DocEditor
          collection={props.collection}
          doc={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onDone={() => {
            setEditing(null);
            list.reload();
            props.onChanged();
          }}
        />
      )}
    </div>
  );
}

export default function Database(props: PageProps) {
  const collections = useLoad(() => get<Array<{ name: string; count: number }>>('/api/database/collections').then((r) => r.data), []);
  const current = props.rest[0];
  return (
    <Page title="Database">
      <div class="notice small">Stored documents as they are. Every write is checked as the regular API would check it.</div>
      <ErrorBox error={collections.error} />
      {!collections.data && <Loading />}
      <div class="row" style={{ marginBottom: '12px' }} role="tablist" aria-label="Collections">
        {collections.data?.map((c) => (
          <Link to={`/database/${c.name}`} class={`button${current === c.name ? ' primary' : ''}`} current={current === c.name}>
            {c.name} <span class="small">({c.count})</span>
          </Link>
        ))}
      </div>
      {current ? <Documents key={current} collection={current} onChanged={collections.reload} /> : <p class="muted">Pick a collection.</p>}
      {collections.data && current && !collections.data.some((c) => c.name === current) && (
        <p>
          No collection {current}. <button class="link" onClick={() => navigate('/database')}>Back</button>
        </p>
      )}
    </Page>
  );
}
