// Endpoints: the definitions (search with `/`), one definition's detail (schema, access,
// network rules, call count), "try it" (POST /api/endpoints/:id/test with the path's `:params`,
// the record id and the body you edit: status, body, time) and the endpoint's records
// (records.ts). Write actions — try it, records with delete — show only to logins that hold the
// permission. Names, paths and bodies are the server's text: shown through format.ts `safe`.
import React from 'react';
import { Box, Text } from 'ink';
import type { Endpoint, EndpointTestResult } from '../../cli/client.ts';
import { parsePathPattern } from '../../lib/paths.ts';
import { Busy } from '../components/busy.ts';
import { ErrorView } from '../components/error-view.ts';
import { ListView } from '../components/list-view.ts';
import { SearchLine } from '../components/search-line.ts';
import { TextField } from '../components/text-field.ts';
import { TextView } from '../components/text-view.ts';
import { clip, jsonLines, row, safe } from '../format.ts';
import { useKeys } from '../keys.ts';
import { useCapture, useSession } from '../session.ts';
import { statusTone, tone } from '../theme.ts';
import { useAction, useRequest } from '../use-request.ts';
import { RecordsView } from './records.ts';

const h = React.createElement;

type View = { kind: 'list' } | { kind: 'detail'; id: string } | { kind: 'try'; endpoint: Endpoint } | { kind: 'records'; endpoint: Endpoint };

/** Where the list was left (its search and cursor), so Esc from a detail comes back to it. */
interface ListPlace {
  search: string;
  cursor: number;
}

export function EndpointsScreen(): React.ReactElement {
  const [view, setView] = React.useState<View>({ kind: 'list' });
  const place = React.useRef<ListPlace>({ search: '', cursor: 0 }).current;
  const back = (): void => setView(view.kind === 'try' || view.kind === 'records' ? { kind: 'detail', id: view.endpoint._id } : { kind: 'list' });
  switch (view.kind) {
    case 'list':
      return h(EndpointList, { place, onOpen: (endpoint: Endpoint) => setView({ kind: 'detail', id: endpoint._id }) });
    case 'detail':
      return h(EndpointDetail, { id: view.id, onBack: back, onTry: (endpoint: Endpoint) => setView({ kind: 'try', endpoint }), onRecords: (endpoint: Endpoint) => setView({ kind: 'records', endpoint }) });
    case 'try':
      return h(TryIt, { endpoint: view.endpoint, onBack: back });
    case 'records':
      return h(RecordsView, { path: view.endpoint.path, onBack: back });
  }
}

function EndpointList({ onOpen, place }: { onOpen(endpoint: Endpoint): void; place: ListPlace }): React.ReactElement {
  const session = useSession();
  const { rows, columns } = session.size;
  const list = useRequest((signal) => session.client.listEndpoints(undefined, { signal }), []);
  const [search, setSearchState] = React.useState(place.search);
  const setSearch = (value: string): void => {
    place.search = value;
    place.cursor = 0;
    setSearchState(value);
  };
  const [searching, setSearching] = React.useState(false);
  const shown = React.useMemo(() => {
    const needle = search.trim().toLowerCase();
    const all = list.data ?? [];
    return needle ? all.filter((e) => `${e.method} ${e.path} ${e.name}`.toLowerCase().includes(needle)) : all;
  }, [list.data, search]);
  const keys = !session.overlay && !searching;
  useKeys(
    (input, key) => {
      if (key.escape && list.loading) list.cancel();
      else if (key.escape && search) setSearch('');
      else if (input === '/') setSearching(true);
      else if (input === 'r') list.reload();
    },
    { isActive: keys },
  );
  const layout = (method: string, path: string, name: string, access: string, calls: string): string =>
    row([{ text: method, width: 6 }, { text: path, width: 'flex' }, { text: name, width: Math.min(24, Math.floor(columns / 4)) }, { text: access, width: 13 }, { text: calls, width: 7 }], columns - 1);
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { bold: true }, `Endpoints`, h(Text, { dimColor: true }, list.data ? `  ${shown.length} of ${list.data.length}   / search  Enter open  r reload` : '')),
    h(SearchLine, { value: search, editing: searching, onChange: setSearch, onDone: () => setSearching(false) }),
    list.loading ? h(Busy, { label: 'loading endpoints' }) : null,
    list.cancelled ? h(Text, { dimColor: true }, 'cancelled: r loads again') : null,
    list.error ? h(ErrorView, { error: list.error }) : null,
    list.data
      ? h(ListView<Endpoint>, {
          items: shown,
          height: rows - 2,
          active: keys,
          header: ` ${layout('METHOD', 'PATH', 'NAME', 'ACCESS', 'CALLS')}`,
          render: (e) => layout(e.method, e.path, e.name, e.enabled ? e.accessType : 'disabled', String(e.callCount ?? 0)),
          color: (e) => (e.enabled ? undefined : tone('gray')),
          onOpen,
          initialCursor: place.cursor,
          onCursor: (_endpoint: Endpoint | undefined, index: number) => {
            place.cursor = index;
          },
          empty: search ? `no endpoint matches "${search}"` : 'no endpoints yet',
        })
      : null,
  );
}

function EndpointDetail(props: { id: string; onBack(): void; onTry(endpoint: Endpoint): void; onRecords(endpoint: Endpoint): void }): React.ReactElement {
  const session = useSession();
  const { rows, columns } = session.size;
  const detail = useRequest((signal) => session.client.getEndpoint(props.id, { signal }), [props.id]);
  const endpoint = detail.data;
  const canTry = session.can('manage_api') && endpoint !== undefined && !endpoint.isSystem;
  const canRecords = session.can('manage_users') && endpoint !== undefined && !endpoint.isSystem;
  useKeys(
    (input, key) => {
      if (key.escape) {
        if (detail.loading) detail.cancel();
        else props.onBack();
      } else if (input === 'r') detail.reload();
      else if (input === 't' && canTry) props.onTry(endpoint);
      else if (input === 'd' && canRecords) props.onRecords(endpoint);
    },
    { isActive: !session.overlay },
  );
  if (!endpoint) {
    return h(Box, { flexDirection: 'column' }, detail.loading ? h(Busy, { label: 'loading the definition' }) : null, detail.error ? h(ErrorView, { error: detail.error }) : null, h(Text, { dimColor: true }, 'Esc back'));
  }
  const fields = schemaFields(endpoint.schema);
  const network = endpoint.networkAccess;
  const lines: Array<[string, string]> = [
    ['Name', endpoint.name],
    ['Access', `${endpoint.accessType}${endpoint.allowedGroupIds?.length ? ` (groups: ${endpoint.allowedGroupIds.length})` : ''}${endpoint.enabled ? '' : '  DISABLED'}`],
    ['Network', network?.enabled ? `only ${[...network.allowedIpRanges, ...network.allowedDomains].join(', ') || '(nothing)'}` : `open${endpoint.inheritGroupNetworkAccess ? ' (inherits the group rules)' : ''}`],
    ['Calls', String(endpoint.callCount ?? 0)],
    ['Handler', endpoint.handler?.enabled ? 'JavaScript' : 'records (built in)'],
  ];
  const room = Math.max(1, rows - lines.length - 5);
  const actions = [canTry ? 't try it' : '', canRecords ? 'd records' : '', 'r reload', 'Esc back'].filter(Boolean).join('  ');
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { bold: true, wrap: 'truncate' }, safe(`${endpoint.method} ${endpoint.path}`), endpoint.isSystem ? h(Text, { dimColor: true }, '  (system)') : null),
    ...lines.map(([label, value]) => h(Text, { key: label, wrap: 'truncate' }, h(Text, { dimColor: true }, label.padEnd(9)), safe(value))),
    h(Text, { bold: true }, `Schema (${fields.length} field${fields.length === 1 ? '' : 's'})`),
    ...fields.slice(0, room).map(([name, field]) =>
      h(Text, { key: name, wrap: 'truncate' }, `  ${clip(name, 20).padEnd(20)} ${safe(String(field.type ?? '')).padEnd(10)} ${field.required ? 'required ' : ''}${safe(describeField(field))}`),
    ),
    fields.length > room ? h(Text, { dimColor: true }, `  … ${fields.length - room} more`) : null,
    h(Text, { dimColor: true, wrap: 'truncate' }, clip(actions, columns)),
  );
}

/** `[name, field]` pairs of a schema, whether it is keyed by name or (system endpoints) a list. */
function schemaFields(schema: unknown): Array<[string, Record<string, unknown>]> {
  if (Array.isArray(schema)) return schema.map((field: Record<string, unknown>) => [String(field.name ?? '?'), field]);
  return Object.entries((schema ?? {}) as Record<string, Record<string, unknown>>);
}

/** The constraints of a field in one short phrase. */
function describeField(field: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const key of ['minLength', 'maxLength', 'minimum', 'maximum', 'format', 'enum']) {
    if (field[key] !== undefined && field[key] !== null) parts.push(`${key}=${JSON.stringify(field[key])}`);
  }
  // A reference by the path it points into (its `refEndpointId` is a database id, telling nobody anything).
  const items = field.items as Record<string, unknown> | undefined;
  if (typeof field.ref === 'string') parts.push(`→ ${field.ref}`);
  else if (typeof items?.ref === 'string') parts.push(`→ [${items.ref}]`);
  return parts.join(' ');
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
/** Methods whose call names one record (`PUT P/:id`); a GET may name one, or none to list. */
const ITEM_METHODS = new Set(['PUT', 'PATCH', 'DELETE']);

/** One input of the try-it form: a `:param` of the path, the record id, or the body. */
export interface TryField {
  kind: 'param' | 'id' | 'body';
  /** Where its value is kept: `:shopId`, `id`, `body` (a param may itself be called `id`). */
  key: string;
  /** The param's name (`shopId`); `id` and `body` for the others. */
  name: string;
  label: string;
  required: boolean;
}

/**
 * The form of a try: one field per `:param` of the path (sent as `params`), the record id for
 * a method that acts on one record (`recordId`: required on PUT/PATCH/DELETE, on GET left empty
 * to list), then the body for POST/PUT/PATCH. The route's own parser names the params.
 */
export function tryFields(endpoint: Pick<Endpoint, 'method' | 'path'>): TryField[] {
  let params: string[];
  try {
    params = parsePathPattern(endpoint.path).paramNames;
  } catch {
    params = []; // not a path the server would store; the server says what is wrong when it is sent
  }
  const fields: TryField[] = params.map((name) => ({ kind: 'param', key: `:${name}`, name, label: `:${name}`, required: true }));
  if (ITEM_METHODS.has(endpoint.method) || endpoint.method === 'GET') fields.push({ kind: 'id', key: 'id', name: 'id', label: 'Record id', required: endpoint.method !== 'GET' });
  if (BODY_METHODS.has(endpoint.method)) fields.push({ kind: 'body', key: 'body', name: 'body', label: 'Body', required: false });
  return fields;
}

function TryIt({ endpoint, onBack }: { endpoint: Endpoint; onBack(): void }): React.ReactElement {
  const session = useSession();
  const { rows, columns } = session.size;
  const fields = React.useMemo(() => tryFields(endpoint), [endpoint]);
  const hasBody = BODY_METHODS.has(endpoint.method);
  const [values, setValues] = React.useState<Record<string, string>>({});
  const setValue = (key: string, value: string): void => setValues((previous) => ({ ...previous, [key]: value }));
  const body = values.body ?? '';
  // The field being edited (an index into `fields`), or null. It starts on the first field a
  // call needs; a GET whose only field is the optional record id starts ready to send (a list).
  const first = fields.findIndex((field) => field.required || field.kind === 'body');
  const [focus, setFocus] = React.useState<number | null>(first === -1 ? null : first);
  const editing = focus !== null;
  const [problem, setProblem] = React.useState<string | null>(null);
  useCapture(editing);
  const test = useAction<EndpointTestResult>();
  const example = useRequest((signal) => (hasBody ? session.client.endpointExamples(endpoint._id, { signal }) : Promise.resolve(null)), [endpoint._id]);
  // The body is filled once, when the example arrives (its cursor goes to the end of the text).
  const [filled, setFilled] = React.useState(false);
  React.useEffect(() => {
    const sample = example.data?.examples?.[0]?.request.body;
    if (sample === undefined || filled) return;
    setValues((current) => (current.body ? current : { ...current, body: JSON.stringify(sample) }));
    setFilled(true);
  }, [example.data, filled]);

  const send = (): void => {
    const missing = fields.findIndex((field) => field.required && !(values[field.key] ?? '').trim());
    if (missing !== -1) {
      setProblem(`${fields[missing]!.label} is needed`);
      setFocus(missing);
      return;
    }
    let parsed: unknown;
    if (hasBody && body.trim()) {
      try {
        parsed = JSON.parse(body);
      } catch (error) {
        setProblem(`the body is not JSON: ${(error as Error).message}`);
        return;
      }
    }
    const params = Object.fromEntries(fields.filter((field) => field.kind === 'param').map((field) => [field.name, (values[field.key] ?? '').trim()]));
    const recordId = (values.id ?? '').trim();
    setProblem(null);
    setFocus(null);
    test.run((signal) =>
      session.client.testEndpoint(endpoint._id, { ...(Object.keys(params).length > 0 ? { params } : {}), ...(recordId ? { recordId } : {}), ...(parsed === undefined ? {} : { body: parsed }) }, { signal }),
    );
  };
  // Enter in a field goes to the next one, and sends from the last.
  const submit = (): void => (focus !== null && focus < fields.length - 1 ? setFocus(focus + 1) : send());

  useKeys(
    (input, key) => {
      if (key.escape) {
        if (test.busy) test.cancel();
        else if (editing) setFocus(null);
        else onBack();
      } else if (editing && (key.tab || key.downArrow || key.upArrow)) {
        const step = key.upArrow || (key.tab && key.shift) ? -1 : 1;
        setFocus((focus + step + fields.length) % fields.length);
      } else if (!editing && (key.return || input === 'x')) send();
      else if (!editing && input === 'e' && fields.length > 0) setFocus(Math.max(0, first));
    },
    { isActive: !session.overlay },
  );

  const result = test.result;
  const bodyLines = result ? jsonLines(result.body) : [];
  // Each answer is read from its top.
  const answerKey = React.useMemo(() => String(Math.random()), [result]);
  const room = Math.max(1, rows - 7 - Math.max(0, fields.length - 1));
  const labelWidth = Math.max(...fields.map((field) => field.label.length + 1), 0);
  const path = `${endpoint.path}${ITEM_METHODS.has(endpoint.method) ? '/:id' : ''}`;
  const names = fields.map((field) => (field.kind === 'param' ? field.label : field.kind === 'id' ? 'id' : 'body')).join(', ');
  const help = editing
    ? `Enter: ${focus === fields.length - 1 ? 'send' : 'next'}${fields.length > 1 ? '   Tab/↑↓: field' : ''}   Ctrl+U: clear   Esc: stop editing`
    : `Enter/x: send${fields.length > 0 ? `   e: edit ${fields.length === 1 && hasBody ? 'the body' : names}` : ''}   Esc: back`;
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { bold: true, wrap: 'truncate' }, safe(`Try ${endpoint.method} ${path}`), h(Text, { dimColor: true }, '  (POST /api/endpoints/:id/test, as you)')),
    ...fields.map((field, index) =>
      h(TryFieldLine, { key: field.key, field, labelWidth, value: values[field.key] ?? '', editing: focus === index, focus: !session.overlay, onChange: (next: string) => setValue(field.key, next), onSubmit: submit }),
    ),
    problem ? h(Text, { color: tone('red') }, safe(problem)) : null,
    test.busy ? h(Busy, { label: 'running' }) : null,
    test.cancelled ? h(Text, { dimColor: true }, 'cancelled') : null,
    // A problem with the form means nothing was sent: an earlier call's answer would read as this one's.
    test.error && !problem ? h(ErrorView, { error: test.error }) : null,
    result && !problem
      ? h(
          Box,
          { flexDirection: 'column' },
          h(Text, { wrap: 'truncate' }, 'Status ', h(Text, { color: statusTone(result.status), bold: true }, String(result.status)), safe(`   Time ${result.durationMs} ms   as ${result.request.clientIp}`)),
          h(TextView, { key: answerKey, lines: bodyLines, height: room + 1, active: !session.overlay && !editing, wrapAt: columns - 1 }),
        )
      : null,
    h(Text, { dimColor: true, wrap: 'truncate' }, help),
  );
}

/** One field of the try-it form: its label, then the text field while it is edited, else its value. */
function TryFieldLine(props: { field: TryField; labelWidth: number; value: string; editing: boolean; focus: boolean; onChange(value: string): void; onSubmit(): void }): React.ReactElement {
  const { field, value } = props;
  // An empty record id on GET lists the records: say so rather than "(empty)".
  const empty = field.kind === 'id' && !field.required ? '(empty: list)' : '(empty)';
  return h(
    Box,
    null,
    h(Box, { width: props.labelWidth, flexShrink: 0 }, h(Text, { color: tone('cyan') }, `${field.label}:`)),
    h(
      Box,
      { marginLeft: 1 },
      props.editing
        ? h(TextField, { focus: props.focus, value, placeholder: field.kind === 'id' && !field.required ? empty : undefined, onChange: props.onChange, onSubmit: props.onSubmit })
        : value
          ? h(Text, { wrap: 'truncate' }, safe(value))
          : h(Text, { dimColor: true }, empty),
    ),
  );
}
