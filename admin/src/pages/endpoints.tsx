// Endpoints: the list (search, group filter, method badges, call counts) and the editor of a
// definition — every field, the schema builder, the handler in CodeMirror with its compile error
// at its line, and a side panel with the file it lives in, examples, docs and "Try it".
import { useEffect, useState } from 'preact/hooks';
import { api, can, get, type Detail } from '../api.ts';
import { navigate, setQuery, useRoute } from '../router.ts';
import { EmptyRow, Badge, ErrorBox, Field, IfCan, Json, Link, Loading, Method, Page, Pager, SearchBox, attempt, checked, confirmAsk, detailsOf, errorText, useLoad, usePaged } from '../ui.tsx';
import type { PageProps } from '../pages.ts';
import { AllowedGroups } from './allowed-groups.tsx';
import CodeEditor from './code-editor.tsx';
import { NetworkRules, NO_RULES, type NetworkAccess } from './network-rules.tsx';
import { SchemaBuilder, schemaForSave, type RefTarget, type SchemaField } from './schema-builder.tsx';

interface Endpoint {
  _id?: string;
  name: string;
  description: string;
  path: string;
  method: string;
  accessType: string;
  allowedGroupIds: string[];
  groupId: string | null;
  schema: SchemaField[];
  networkAccess: NetworkAccess;
  inheritGroupNetworkAccess: boolean;
  enabled: boolean;
  apiVersion: string | null;
  retentionDays: number | null;
  handler: { enabled: boolean; code: string };
  isSystem?: boolean;
  callCount?: number;
  updatedAt?: string;
}

interface Named {
  _id: string;
  name: string;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const HANDLER_TEMPLATE = `async function handler(req, db) {
  // req: {method, path, params, query, body, user, headers}; db: findOne, find, create, update, delete
  return { status: 200, data: { hello: 'world' } };
}
`;

const blank = (): Endpoint => ({
  name: '',
  description: '',
  path: '/api/',
  method: 'GET',
  accessType: 'public',
  allowedGroupIds: [],
  groupId: null,
  schema: [],
  networkAccess: NO_RULES,
  inheritGroupNetworkAccess: true,
  enabled: true,
  apiVersion: null,
  retentionDays: null,
  handler: { enabled: false, code: '' },
});

/** Endpoint groups by id, for the list and the editor. */
const loadGroups = () => get<Named[]>('/api/endpoints/groups?limit=100').then((r) => r.data);

function List() {
  const { query } = useRoute();
  const groupId = query.get('groupId') ?? '';
  const list = usePaged<Endpoint>('/api/endpoints', { groupId });
  const groups = useLoad(loadGroups, []);
  const groupName = (id: string | null) => (id ? (groups.data?.find((g) => g._id === id)?.name ?? '…') : '—');
  return (
    <Page
      title="Endpoints"
      actions={
        <IfCan any={['manage_api']}>
          <Link to="/endpoints/new" class="button primary">
            New endpoint
          </Link>
        </IfCan>
      }
    >
      <div class="row" style={{ marginBottom: '10px' }}>
        <SearchBox placeholder="Search name, path, description" />
        <select aria-label="Endpoint group" value={groupId} onChange={(e) => setQuery({ groupId: e.currentTarget.value, page: 1 })}>
          <option value="">All groups</option>
          <option value="none">No group</option>
          {(groups.data ?? []).map((g) => (
            <option value={g._id}>{g.name}</option>
          ))}
        </select>
      </div>
      <ErrorBox error={list.error} />
      <div class="panel table-wrap">
        <table>
          <thead>
            <tr>
              <th>Method</th>
              <th>Path</th>
              <th>Name</th>
              <th class="hide-sm">Group</th>
              <th class="hide-sm">Access</th>
              <th>Calls</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((e) => (
              <tr>
                <td>
                  <Method method={e.method} />
                </td>
                <td>
                  <Link to={`/endpoints/${e._id}`}>
                    <code>{e.path}</code>
                  </Link>
                  {!e.enabled && <> <Badge>disabled</Badge></>}
                  {e.isSystem && <> <Badge>system</Badge></>}
                </td>
                <td>{e.name}</td>
                <td class="hide-sm">{groupName(e.groupId)}</td>
                <td class="hide-sm">{e.accessType}</td>
                <td>{e.callCount ?? 0}</td>
              </tr>
            ))}
            <EmptyRow list={list} colSpan={6}>No endpoints match.</EmptyRow>
          </tbody>
        </table>
        <Pager meta={list.meta} />
      </div>
    </Page>
  );
}

function TryIt(props: { endpoint: Endpoint }) {
  const e = props.endpoint;
  const writes = e.method === 'POST' || e.method === 'PUT' || e.method === 'PATCH';
  const [body, setBody] = useState(writes ? '{\n  \n}' : '');
  const [headers, setHeaders] = useState('{}');
  const [query, setQueryText] = useState('{}');
  const [recordId, setRecordId] = useState('');
  const [clientIp, setClientIp] = useState('');
  const [applyNetworkAccess, setApply] = useState(false);
  const [result, setResult] = useState<any>(null);
  const [error, setError] = useState<unknown>(null);
  const send = async () => {
    setError(null);
    let payload: Record<string, unknown>;
    try {
      payload = {
        ...(body.trim() ? { body: JSON.parse(body) } : {}),
        headers: JSON.parse(headers || '{}'),
        query: JSON.parse(query || '{}'),
        ...(recordId ? { recordId } : {}),
        ...(clientIp ? { clientIp } : {}),
        applyNetworkAccess,
      };
    } catch (parseError) {
      // The answer shown was to another request: it goes, so it is not read as this one's.
      setResult(null);
      setError(new Error(`Not JSON: ${errorText(parseError)}`));
      return;
    }
    const res = await attempt(() => api('POST', `/api/endpoints/${e._id}/test`, { body: payload }));
    setResult(res.ok ? res.value.data : null);
    if (!res.ok) setError(res.error);
  };
  return (
    <div>
      {writes && (
        <Field label="Body (JSON)">
          <textarea class="mono" rows={6} value={body} onInput={(ev) => setBody(ev.currentTarget.value)} aria-label="Request body" />
        </Field>
      )}
      <div class="form-grid">
        <Field label="Headers (JSON)">
          <input class="mono" value={headers} onInput={(ev) => setHeaders(ev.currentTarget.value)} />
        </Field>
        <Field label="Query (JSON)">
          <input class="mono" value={query} onInput={(ev) => setQueryText(ev.currentTarget.value)} />
        </Field>
        <Field label="Record id (item routes)">
          <input value={recordId} onInput={(ev) => setRecordId(ev.currentTarget.value)} />
        </Field>
        <Field label="Client IP">
          <input value={clientIp} placeholder="your address" onInput={(ev) => setClientIp(ev.currentTarget.value)} />
        </Field>
      </div>
      <label class="check">
        <input type="checkbox" checked={applyNetworkAccess} onChange={(ev) => setApply(ev.currentTarget.checked)} /> Apply network rules
      </label>
      <div class="row" style={{ marginTop: '8px' }}>
        <button class="primary" onClick={send}>
          Send
        </button>
      </div>
      <ErrorBox error={error} />
      {result && (
        <div data-testid="try-result">
          <p>
            Status <strong class={result.status < 400 ? 'ok' : 'bad'}>{result.status}</strong> · {result.durationMs} ms
          </p>
          <Json value={result.body} />
        </div>
      )}
    </div>
  );
}

function SidePanel(props: { endpoint: Endpoint }) {
  const id = props.endpoint._id!;
  const [tab, setTab] = useState<'try' | 'examples' | 'docs'>(can('manage_api') ? 'try' : 'examples');
  const examples = useLoad(() => (tab === 'examples' ? get(`/api/endpoints/${id}/examples`).then((r) => r.data) : Promise.resolve(null)), [id, tab]);
  const docs = useLoad(() => (tab === 'docs' ? get(`/api/endpoints/${id}/docs`).then((r) => r.data) : Promise.resolve(null)), [id, tab]);
  const tabs: Array<[typeof tab, string]> = [...(can('manage_api') ? [['try', 'Try it'] as [typeof tab, string]] : []), ['examples', 'Examples'], ['docs', 'Docs']];
  return (
    <div class="panel">
      <div class="tabs" role="tablist">
        {tabs.map(([key, label]) => (
          <button role="tab" aria-selected={tab === key} onClick={() => setTab(key)}>
            {label}
          </button>
        ))}
      </div>
      {tab === 'try' && <TryIt endpoint={props.endpoint} />}
      {tab === 'examples' &&
        (examples.data ? (
          (examples.data as any).examples.map((ex: any) => (
            <div>
              <h3>{ex.name}</h3>
              <div class="small muted">Request</div>
              <Json value={`${ex.request.method} ${ex.request.url}\n${Object.entries(ex.request.headers ?? {}).map(([k, v]) => `${k}: ${v}`).join('\n')}${ex.request.body !== undefined ? `\n\n${JSON.stringify(ex.request.body, null, 2)}` : ''}`} />
              <div class="small muted">Response {ex.response.status}</div>
              <Json value={ex.response.body} />
            </div>
          ))
        ) : (
          <Loading />
        ))}
      {tab === 'docs' &&
        (docs.data ? (
          <div>
            <p>
              <Method method={(docs.data as any).method} /> <code>{(docs.data as any).path}</code>
              {(docs.data as any).versionedPath && (
                <>
                  {' '}
                  also <code>{(docs.data as any).versionedPath}</code>
                </>
              )}
            </p>
            <p>{(docs.data as any).description}</p>
            <p class="small muted">
              Access: {(docs.data as any).accessType}; handler: {(docs.data as any).handler ? 'yes' : 'no'}
            </p>
            <table>
              <thead>
                <tr>
                  <th>Parameter</th>
                  <th>In</th>
                  <th>Type</th>
                  <th>Required</th>
                  <th>Description</th>
                </tr>
              </thead>
              <tbody>
                {((docs.data as any).parameters ?? []).map((p: any) => (
                  <tr>
                    <td>
                      <code>{p.name}</code>
                    </td>
                    <td>{p.in}</td>
                    <td>{p.type}</td>
                    <td>{p.required ? 'yes' : ''}</td>
                    <td>{p.description}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <Loading />
        ))}
    </div>
  );
}

interface ProjectFiles {
  /** The server's project directory, absolute (GET /api/project/status). */
  dir: string;
  /** Where each definition lives, paths relative to `dir` (GET /api/project/files). */
  files: Array<{ kind: string; key: string; file: string; handlerFile?: string }>;
}

/** Both routes need manage_api: without it, null (nothing shown, no server path seen). */
async function loadProjectFiles(): Promise<ProjectFiles | null> {
  if (!can('manage_api')) return null;
  const [status, files] = await Promise.all([get<{ dir: string }>('/api/project/status'), get<ProjectFiles['files']>('/api/project/files')]);
  return { dir: status.data.dir, files: files.data };
}

/** `file` (relative, with `/`) inside `dir`, with the directory's own separator. */
const inDir = (dir: string, file: string): string => {
  const sep = dir.includes('\\') && !dir.includes('/') ? '\\' : '/';
  return `${dir.replace(/[\\/]+$/, '')}${sep}${file.split('/').join(sep)}`;
};

/** The file a definition lives in, in the server's project directory (PROJECT_DIR), once it has one. */
function ProjectFile(props: { endpoint: Endpoint }) {
  const project = useLoad(loadProjectFiles, [props.endpoint._id, props.endpoint.updatedAt]);
  const key = `${props.endpoint.method} ${props.endpoint.path}`;
  const found = project.data?.files.find((f) => f.kind === 'endpoint' && f.key === key);
  // Write-back follows a save within about a second: ask again a few times until the file is there.
  const [asked, setAsked] = useState(0);
  useEffect(() => {
    if (!project.data || found || props.endpoint.isSystem || asked >= 5) return;
    const timer = setTimeout(() => {
      setAsked((n) => n + 1);
      project.reload();
    }, 1000);
    return () => clearTimeout(timer);
  }, [project.data, found, asked]);
  if (!project.data) return null;
  const { dir } = project.data;
  return (
    <p class="small muted" data-testid="project-file">
      {found ? (
        <>
          Project file: <code>{inDir(dir, found.file)}</code>
          {found.handlerFile && (
            <>
              {' '}
              (handler <code>{inDir(dir, found.handlerFile)}</code>)
            </>
          )}
        </>
      ) : props.endpoint.isSystem ? (
        'A system endpoint: not in the project directory.'
      ) : (
        <>
          Not in the project directory (<code>{dir}</code>) yet.
        </>
      )}
    </p>
  );
}

function Editor(props: { id: string | null }) {
  const writable = can('manage_api');
  const loaded = useLoad(async () => (props.id ? (await get<Endpoint>(`/api/endpoints/${props.id}`)).data : blank()), [props.id]);
  const groups = useLoad(loadGroups, []);
  const targets = useLoad(() => get<RefTarget[]>('/api/endpoints?limit=100').then((r) => r.data.filter((e: any) => !e.isSystem)), []);
  const [draft, setDraft] = useState<Endpoint | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [saving, setSaving] = useState(false);
  useEffect(() => {
    if (loaded.data) setDraft(structuredClone(loaded.data));
  }, [loaded.data]);
  if (loaded.error) return <ErrorBox error={loaded.error} />;
  if (!draft) return <Loading />;
  const details: Detail[] = detailsOf(error);
  const put = (patch: Partial<Endpoint>) => setDraft({ ...draft, ...patch });
  const handlerError = details.find((d) => d.field === 'handler.code')?.message ?? null;
  const system = !!draft.isSystem;

  const save = async (event: Event) => {
    event.preventDefault();
    setSaving(true);
    const { _id, isSystem, callCount, createdAt, updatedAt, slug, ...body } = draft as any;
    void [_id, isSystem, callCount, createdAt, updatedAt, slug];
    body.schema = schemaForSave(draft.schema);
    if (body.accessType !== 'group') body.allowedGroupIds = [];
    const res = await attempt(() => (props.id ? api<Endpoint>('PUT', `/api/endpoints/${props.id}`, { body }) : api<Endpoint>('POST', '/api/endpoints', { body })), 'Saved');
    setSaving(false);
    if (!res.ok) return setError(res.error);
    setError(null);
    if (!props.id) navigate(`/endpoints/${res.value.data._id}`, { replace: true });
    else loaded.reload();
  };
  const remove = async () => {
    if (!(await confirmAsk(`Delete ${draft.method} ${draft.path}? Its definition goes; records stay.`))) return;
    const res = await attempt(() => api('DELETE', `/api/endpoints/${props.id}`), 'Deleted');
    if (res.ok) navigate('/endpoints');
    else setError(res.error);
  };

  return (
    <Page title={props.id ? `${draft.method} ${loaded.data?.path}` : 'New endpoint'} actions={<Link to="/endpoints">← All endpoints</Link>}>
      <div class="cols">
        <form class="panel" onSubmit={save} aria-label="Endpoint definition">
          {props.id && <ProjectFile endpoint={loaded.data!} />}
          {system && <div class="notice">A system endpoint: its path, method and logic belong to the platform.</div>}
          <div class="form-grid">
            <Field label="Name" name="name" details={details}>
              <input name="name" value={draft.name} disabled={!writable} onInput={(e) => put({ name: e.currentTarget.value })} />
            </Field>
            <Field label="Path" name="path" details={details}>
              <input name="path" class="mono" value={draft.path} disabled={!writable || system} onInput={(e) => put({ path: e.currentTarget.value })} />
            </Field>
            <Field label="Method" name="method" details={details}>
              <select name="method" value={draft.method} disabled={!writable || system} onChange={(e) => put({ method: e.currentTarget.value })}>
                {METHODS.map((m) => (
                  <option>{m}</option>
                ))}
              </select>
            </Field>
            <Field label="Endpoint group" name="groupId" details={details}>
              <select name="groupId" value={draft.groupId ?? ''} disabled={!writable} onChange={(e) => put({ groupId: e.currentTarget.value || null })}>
                <option value="">No group</option>
                {(groups.data ?? []).map((g) => (
                  <option value={g._id}>{g.name}</option>
                ))}
              </select>
            </Field>
            <Field label="Access" name="accessType" details={details}>
              <select name="accessType" value={draft.accessType} disabled={!writable} onChange={(e) => put({ accessType: e.currentTarget.value })}>
                <option value="public">public: anyone</option>
                <option value="authenticated">authenticated: a token or API key</option>
                <option value="group">group: members of user groups</option>
              </select>
            </Field>
            <Field label="API version" name="apiVersion" details={details} hint="v1, v2…: also served at /api/v1/…">
              <input name="apiVersion" value={draft.apiVersion ?? ''} disabled={!writable} onInput={(e) => put({ apiVersion: e.currentTarget.value || null })} />
            </Field>
            <Field label="Retention (days)" name="retentionDays" details={details} hint="records expire after this many days; empty: kept">
              <input name="retentionDays" type="number" min={1} value={draft.retentionDays ?? ''} disabled={!writable} onInput={(e) => put({ retentionDays: e.currentTarget.value === '' ? null : Number(e.currentTarget.value) })} />
            </Field>
          </div>
          <Field label="Description" name="description" details={details}>
            <textarea name="description" rows={2} value={draft.description} disabled={!writable} onInput={(e) => put({ description: e.currentTarget.value })} />
          </Field>
          {draft.accessType === 'group' && (
            <AllowedGroups value={draft.allowedGroupIds} saved={loaded.data?.allowedGroupIds ?? []} readOnly={!writable} details={details} onChange={(allowedGroupIds) => put({ allowedGroupIds })} />
          )}
          <div class="row">
            <label class="check">
              <input type="checkbox" checked={draft.enabled} disabled={!writable} onChange={(e) => put({ enabled: checked(e.currentTarget) })} /> Enabled
            </label>
            <label class="check">
              <input type="checkbox" checked={draft.inheritGroupNetworkAccess} disabled={!writable} onChange={(e) => put({ inheritGroupNetworkAccess: checked(e.currentTarget) })} /> Inherit the group's network rules
            </label>
          </div>
          <NetworkRules value={draft.networkAccess} details={details} readOnly={!writable} onChange={(networkAccess) => put({ networkAccess })} />
          <h2>Schema</h2>
          <SchemaBuilder fields={draft.schema} onChange={(schema) => put({ schema })} targets={targets.data ?? []} details={details} path="schema" readOnly={!writable || system} />
          <h2>Handler</h2>
          <label class="check">
            <input
              type="checkbox"
              checked={draft.handler.enabled}
              disabled={!writable || system}
              onChange={(e) => put({ handler: { enabled: e.currentTarget.checked, code: draft.handler.code || (e.currentTarget.checked ? HANDLER_TEMPLATE : '') } })}
            />{' '}
            Run JavaScript instead of the default CRUD
          </label>
          {draft.handler.enabled && (
            <div style={{ marginTop: '8px' }}>
              <CodeEditor key={(loaded.data as any)?.updatedAt} label="Handler code" language="javascript" value={draft.handler.code} readOnly={!writable} error={handlerError} onChange={(code) => setDraft((d) => (d ? { ...d, handler: { ...d.handler, code } } : d))} />
              {handlerError && <div class="field-error">{handlerError}</div>}
            </div>
          )}
          <ErrorBox error={error} />
          {writable && (
            <div class="row" style={{ marginTop: '12px' }}>
              <button class="primary" type="submit" disabled={saving}>
                {props.id ? 'Save' : 'Create'}
              </button>
              {props.id && !system && (
                <button type="button" class="danger" onClick={remove}>
                  Delete
                </button>
              )}
            </div>
          )}
        </form>
        {props.id && loaded.data && <SidePanel endpoint={loaded.data} />}
      </div>
    </Page>
  );
}

export default function Endpoints(props: PageProps) {
  const [first] = props.rest;
  if (!first) return <List />;
  if (first === 'new') {
    if (!can('manage_api')) return <div class="notice">Creating endpoints needs manage_api.</div>;
    return <Editor id={null} />;
  }
  return <Editor id={first} />;
}

