// Shared pieces of every page: links, loading helpers, server-side paging, forms that show the
// API's `details` next to their fields, confirmation dialogs, toasts and small formatters.
import type { ComponentChildren, TargetedEvent } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, can, qs, type Detail } from './api.ts';
import { BASE, onLinkClick, setQuery, useRoute } from './router.ts';
import { createStore, useStore } from './store.ts';

export function Link(props: { to: string; children: ComponentChildren; class?: string; title?: string; current?: boolean }) {
  return (
    <a href={`${BASE}${props.to === '/' ? '' : props.to}`} onClick={onLinkClick} class={props.class} title={props.title} aria-current={props.current ? 'page' : undefined}>
      {props.children}
    </a>
  );
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change (and on reload); keeps the last data while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error) => live && setState((s) => ({ data: s.data, error, loading: false })),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export interface Meta {
  page: number;
  limit: number;
  total: number;
}

/** A server-side paged list: `page` and `search` (and `filters`) live in the address bar. */
export function usePaged<T>(path: string, filters: Record<string, string | undefined> = {}, limit = 20) {
  const { query } = useRoute();
  const page = Number(query.get('page') ?? 1) || 1;
  const search = query.get('search') ?? '';
  const key = JSON.stringify(filters);
  const loaded = useLoad(async () => {
    const res = await api<T[]>('GET', `${path}${qs({ page, limit, search, ...filters })}`);
    return { items: res.data, meta: res.meta ?? { page, limit, total: res.data.length } };
  }, [path, page, search, key]);
  return { ...loaded, page, search, items: loaded.data?.items ?? [], meta: loaded.data?.meta };
}

/** The row a paged table shows when a loaded page holds nothing. */
export function EmptyRow(props: { list: { loading: boolean; items: unknown[] }; colSpan: number; children: ComponentChildren }) {
  if (props.list.loading || props.list.items.length > 0) return null;
  return (
    <tr>
      <td colSpan={props.colSpan} class="muted">
        {props.children}
      </td>
    </tr>
  );
}

export function Pager(props: { meta: Meta | undefined }) {
  const meta = props.meta;
  if (!meta) return null;
  const pages = Math.max(1, Math.ceil(meta.total / meta.limit));
  const go = (page: number) => setQuery({ page });
  return (
    <div class="pager" aria-label="Pages">
      <span class="muted small">
        {meta.total} total · page {meta.page} of {pages}
      </span>
      <button disabled={meta.page <= 1} onClick={() => go(meta.page - 1)} aria-label="Previous page">
        ‹ Prev
      </button>
      <button disabled={meta.page >= pages} onClick={() => go(meta.page + 1)} aria-label="Next page">
        Next ›
      </button>
    </div>
  );
}

/** A search box bound to `?search=` (debounced; resets to page 1). */
export function SearchBox(props: { placeholder?: string }) {
  const { query } = useRoute();
  const [value, setValue] = useState(query.get('search') ?? '');
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const onInput = (event: TargetedEvent<HTMLInputElement>) => {
    const next = event.currentTarget.value;
    setValue(next);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setQuery({ search: next, page: 1 }), 250);
  };
  return <input type="search" placeholder={props.placeholder ?? 'Search'} aria-label="Search" value={value} onInput={onInput} />;
}

export function errorText(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** The API's error and every detail; fields shown next to their inputs are listed here too. */
export function ErrorBox(props: { error: unknown }) {
  if (!props.error) return null;
  const details = props.error instanceof ApiError ? props.error.details : [];
  return (
    <div class="error-box" role="alert">
      <strong>{errorText(props.error)}</strong>
      {details.length > 1 && (
        <ul>
          {details.map((d) => (
            <li>
              <code>{d.field}</code> {d.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Under a headers field: how credential headers are shown and kept (src/model/secret-headers.ts). */
export const SECRET_HEADERS_HINT = 'Credentials (Authorization, Cookie, names with key, token, secret, auth…) show as "(secret)": leave "(secret)" to keep the stored value, or type a new one.';

export const detailsOf = (error: unknown): Detail[] => (error instanceof ApiError ? error.details : []);

/** The messages for `name`: the field itself and anything under it (`schema.0.name` under `schema`). */
export function messagesFor(details: Detail[], name: string): string[] {
  return details.filter((d) => d.field === name || d.field.startsWith(`${name}.`) || d.field.startsWith(`${name}[`)).map((d) => (d.field === name ? d.message : `${d.field}: ${d.message}`));
}

let groupSeq = 0;

/**
 * A labelled field. With `group`, for a list of checkboxes: a group named by its heading, not a
 * `<label>`, which would make the heading a label of the first box (a click on "Groups" ticking
 * Administrators) and read the whole list as that box's name.
 */
export function Field(props: { label: string; name?: string; details?: Detail[]; hint?: ComponentChildren; group?: boolean; children: ComponentChildren }) {
  const messages = props.name && props.details ? messagesFor(props.details, props.name) : [];
  const [headingId] = useState(() => `field-group-${++groupSeq}`);
  const body = (
    <>
      <span id={props.group ? headingId : undefined}>{props.label}</span>
      {props.children}
      {props.hint && <div class="hint">{props.hint}</div>}
      {messages.map((m) => (
        <div class="field-error">{m}</div>
      ))}
    </>
  );
  return props.group ? (
    <div class="field" role="group" aria-labelledby={headingId}>
      {body}
    </div>
  ) : (
    <label class="field">{body}</label>
  );
}

/** The draft of a form: `set('name')` gives an input handler. */
export function useDraft<T extends Record<string, any>>(initial: T) {
  const [draft, setDraft] = useState<T>(initial);
  const set =
    <K extends keyof T>(key: K, read: (el: any) => T[K] = (el) => el.value) =>
    (event: TargetedEvent<any>) =>
      setDraft((d) => ({ ...d, [key]: read(event.currentTarget) }));
  const put = (patch: Partial<T>) => setDraft((d) => ({ ...d, ...patch }));
  return { draft, setDraft, set, put };
}

export const checked = (el: HTMLInputElement) => el.checked;
export const lines = (el: HTMLTextAreaElement) =>
  el.value
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);

interface Ask {
  message: string;
  action: string;
  resolve: (ok: boolean) => void;
}
const asking = createStore<Ask | null>(null);

/** Asks before a destructive action. */
export function confirmAsk(message: string, action = 'Delete'): Promise<boolean> {
  return new Promise((resolve) => asking.set({ message, action, resolve }));
}

export function ConfirmHost() {
  const ask = useStore(asking);
  if (!ask) return null;
  const answer = (ok: boolean) => {
    asking.set(null);
    ask.resolve(ok);
  };
  return (
    <Modal title="Are you sure?" onClose={() => answer(false)}>
      <p>{ask.message}</p>
      <div class="row end">
        <button onClick={() => answer(false)}>Cancel</button>
        <button class="danger" autoFocus onClick={() => answer(true)}>
          {ask.action}
        </button>
      </div>
    </Modal>
  );
}

const toasts = createStore<string | null>(null);
let toastTimer: ReturnType<typeof setTimeout> | undefined;
export function toast(message: string): void {
  toasts.set(message);
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => toasts.set(null), 2500);
}
export function ToastHost() {
  const message = useStore(toasts);
  return message ? (
    <div class="toast" role="status">
      {message}
    </div>
  ) : null;
}

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [contenteditable="true"], [tabindex]:not([tabindex="-1"])';

/**
 * Tab and Shift+Tab go round the dialog's own controls: the page behind it is not reachable
 * (a link there would leave the page and lose what the dialog holds).
 */
function keepFocusIn(box: HTMLElement, event: KeyboardEvent): void {
  const focusable = [...box.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => el.getClientRects().length > 0);
  const first = focusable[0];
  const last = focusable[focusable.length - 1];
  if (!first || !last) return;
  const active = document.activeElement;
  const inside = active instanceof Node && box.contains(active);
  if (event.shiftKey ? !inside || active === first : !inside || active === last) {
    event.preventDefault();
    (event.shiftKey ? last : first).focus();
  }
}

export function Modal(props: { title: string; onClose: () => void; wide?: boolean; children: ComponentChildren }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const previous = document.activeElement as HTMLElement | null;
    const first = box.current?.querySelector<HTMLElement>('[autofocus], input, select, textarea, button');
    first?.focus();
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') props.onClose();
      else if (event.key === 'Tab' && box.current) keepFocusIn(box.current, event);
    };
    addEventListener('keydown', onKey);
    return () => {
      removeEventListener('keydown', onKey);
      previous?.focus?.();
    };
  }, []);
  return (
    <div class="modal-back" onClick={(e) => e.target === e.currentTarget && props.onClose()}>
      <div class={`modal${props.wide ? ' wide' : ''}`} role="dialog" aria-modal="true" aria-label={props.title} ref={box}>
        <h2 style={{ marginTop: 0 }}>{props.title}</h2>
        {props.children}
      </div>
    </div>
  );
}

export function Page(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  useEffect(() => {
    document.title = `${props.title} · dyn admin`;
  }, [props.title]);
  return (
    <section>
      <div class="spread">
        <h1>{props.title}</h1>
        {props.actions && <div class="row">{props.actions}</div>}
      </div>
      {props.children}
    </section>
  );
}

/** Shown instead of a page the user lacks the permission for. */
export function Forbidden(props: { needs: string[] }) {
  return (
    <div class="notice" role="alert">
      You do not have permission to see this page: it needs <strong>{props.needs.join(' or ')}</strong>.
    </div>
  );
}

/** Renders children only for users holding one of the permissions (write buttons). */
export function IfCan(props: { any: string[]; children: ComponentChildren }) {
  return can(...props.any) ? <>{props.children}</> : null;
}

export const Method = (props: { method: string }) => <span class={`badge m-${props.method}`}>{props.method}</span>;
export const Badge = (props: { kind?: 'ok' | 'bad' | 'muted'; children: ComponentChildren }) => <span class={`badge b-${props.kind ?? 'muted'}`}>{props.children}</span>;
export const Loading = () => <p class="muted">Loading…</p>;
export const Json = (props: { value: unknown }) => <pre>{typeof props.value === 'string' ? props.value : JSON.stringify(props.value, null, 2)}</pre>;

export function fmtDate(value: unknown): string {
  if (!value) return '—';
  const date = new Date(String(value));
  return Number.isNaN(date.getTime()) ? String(value) : date.toLocaleString();
}

export function fmtAgo(value: unknown): string {
  if (!value) return 'never';
  const seconds = Math.round((Date.now() - new Date(String(value)).getTime()) / 1000);
  const future = seconds < 0;
  const s = Math.abs(seconds);
  const text = s < 60 ? `${s}s` : s < 3600 ? `${Math.round(s / 60)}m` : s < 86400 ? `${Math.round(s / 3600)}h` : `${Math.round(s / 86400)}d`;
  return future ? `in ${text}` : `${text} ago`;
}

export function fmtBytes(bytes: number | undefined | null): string {
  if (bytes === undefined || bytes === null) return '—';
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit ? 1 : 0)} ${units[unit]}`;
}

/** Copies text, with a toast either way. */
export async function copy(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    toast('Copied');
  } catch {
    toast('Copy failed: select the text and copy it');
  }
}

/** Runs a write; returns its error (shown by the form) instead of throwing. */
export async function attempt<T>(run: () => Promise<T>, done?: string): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  try {
    const value = await run();
    if (done) toast(done);
    return { ok: true, value };
  } catch (error) {
    return { ok: false, error };
  }
}

export const PERMISSIONS = ['view', 'manage_users', 'manage_api', 'view_logs'];

/** Permission checkboxes (groups, API keys). */
export function PermissionChecks(props: { value: string[]; onChange: (value: string[]) => void; disabled?: boolean }) {
  return (
    <div>
      {PERMISSIONS.map((p) => (
        <label class="check">
          <input
            type="checkbox"
            name={`perm-${p}`}
            disabled={props.disabled}
            checked={props.value.includes(p)}
            onChange={(e) => props.onChange(e.currentTarget.checked ? [...props.value, p] : props.value.filter((x) => x !== p))}
          />
          {p}
        </label>
      ))}
    </div>
  );
}
