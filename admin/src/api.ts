// The admin's one HTTP client: every call goes to the public management API with the session
// cookie (login with `cookie: true`) and the CSRF token (double submit, X-CSRF-Token). An expired
// session is refreshed once; when that fails too, the call waits until the user signs in again
// in the overlay (the page and its forms stay mounted), then is retried — nothing is lost.
import { createStore } from './store.ts';

export interface Detail {
  field: string;
  message: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly details: Detail[];
  constructor(status: number, message: string, details: Detail[] = []) {
    super(message);
    this.status = status;
    this.details = details;
  }
}

export interface Me {
  _id: string;
  login: string;
  name?: string;
  permissions: string[];
}

export interface SessionState {
  /** loading: first check; out: no session (sign-in page); in: signed in; expired: overlay over the page. */
  phase: 'loading' | 'out' | 'in' | 'expired';
  me: Me | null;
}

export const session = createStore<SessionState>({ phase: 'loading', me: null });

const CSRF_COOKIE = 'dyn_csrf';
const csrfFromCookie = (): string | null => {
  const match = document.cookie.match(new RegExp(`(?:^|; )${CSRF_COOKIE}=([^;]+)`));
  return match ? decodeURIComponent(match[1]!) : null;
};

async function csrfToken(): Promise<string> {
  const existing = csrfFromCookie();
  if (existing) return existing;
  const res = await fetch('/api/csrf-token', { credentials: 'same-origin' });
  const body = await res.json();
  return body.data.csrfToken as string;
}

export interface Result<T> {
  data: T;
  meta?: { page: number; limit: number; total: number };
  status: number;
}

interface Options {
  body?: unknown;
  /** Raw text body (YAML import) with its content type. */
  text?: { body: string; type: string };
  /** Return the response text instead of the JSON envelope (exports). */
  raw?: boolean;
  /** No refresh / re-sign-in on 401 (sign-in itself). */
  noRetry?: boolean;
}

async function send(method: string, path: string, options: Options): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET' && method !== 'HEAD') headers['x-csrf-token'] = await csrfToken();
  let body: string | undefined;
  if (options.text) {
    headers['content-type'] = options.text.type;
    body = options.text.body;
  } else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  return fetch(path, { method, headers, body, credentials: 'same-origin' });
}

/** One API call; throws ApiError with the API's `error` and `details` on failure. */
export async function api<T = any>(method: string, path: string, options: Options = {}): Promise<Result<T>> {
  let res = await send(method, path, options);
  if (res.status === 401 && !options.noRetry && session.get().phase === 'in') {
    if (!(await refresh())) await signInAgain();
    res = await send(method, path, options);
  }
  if (options.raw && res.ok) return { data: (await res.text()) as T, status: res.status };
  const text = await res.text();
  let parsed: any;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!res.ok || (parsed && parsed.success === false)) {
    throw new ApiError(res.status, parsed?.error ?? `${res.status} ${res.statusText}`, parsed?.details ?? []);
  }
  return { data: parsed?.data as T, meta: parsed?.meta, status: res.status };
}

export const get = <T = any>(path: string) => api<T>('GET', path);

let refreshTimer: ReturnType<typeof setTimeout> | undefined;
let refreshing: Promise<boolean> | null = null;

/** Schedules the next refresh a minute before the access token expires. */
function scheduleRefresh(expiresAt: string): void {
  clearTimeout(refreshTimer);
  const wait = Math.max(5_000, new Date(expiresAt).getTime() - Date.now() - 60_000);
  refreshTimer = setTimeout(() => void refresh(), wait);
}

/** Rotates the session cookies; false when the session is gone. One refresh at a time. */
export function refresh(): Promise<boolean> {
  refreshing ??= (async () => {
    try {
      const res = await send('POST', '/api/auth/refresh', {});
      if (!res.ok) return false;
      const body = await res.json();
      scheduleRefresh(body.data.accessTokenExpiresAt);
      return true;
    } catch {
      return false;
    } finally {
      refreshing = null;
    }
  })();
  return refreshing;
}

let waiting: Array<() => void> = [];
function signInAgain(): Promise<void> {
  session.set({ ...session.get(), phase: 'expired' });
  return new Promise((resolve) => waiting.push(resolve));
}

async function loadMe(): Promise<Me> {
  const res = await send('GET', '/api/profile', {});
  if (!res.ok) throw new ApiError(res.status, 'not signed in');
  return (await res.json()).data as Me;
}

/** First load: an existing cookie session is refreshed (which also tells when it expires). */
// A hint (not a secret) that this browser signed in, so a first visit goes straight to the sign-in
// form without a refresh call that can only fail (the session cookies are httpOnly, unreadable here).
const HINT = 'dyn-signed-in';

export async function boot(): Promise<void> {
  const ok = localStorage.getItem(HINT) === '1' && (await refresh());
  if (!ok) return session.set({ phase: 'out', me: null });
  try {
    session.set({ phase: 'in', me: await loadMe() });
  } catch {
    session.set({ phase: 'out', me: null });
  }
}

export async function signIn(login: string, password: string): Promise<void> {
  const res = await api<{ accessTokenExpiresAt: string }>('POST', '/api/auth/login', { body: { login, password, cookie: true }, noRetry: true });
  scheduleRefresh(res.data.accessTokenExpiresAt);
  localStorage.setItem(HINT, '1');
  const me = await loadMe();
  const previous = session.get();
  // Signing in again as someone else drops the kept page: it was someone else's work.
  if (previous.phase === 'expired' && previous.me && previous.me._id !== me._id) {
    waiting = [];
    location.reload();
    return;
  }
  session.set({ phase: 'in', me });
  const resume = waiting;
  waiting = [];
  for (const fn of resume) fn();
}

export async function signOut(): Promise<void> {
  clearTimeout(refreshTimer);
  localStorage.removeItem(HINT);
  try {
    await api('POST', '/api/auth/logout', { body: {}, noRetry: true });
  } finally {
    session.set({ phase: 'out', me: null });
  }
}

/** True when the signed-in user holds one of the permissions. */
export function can(...permissions: string[]): boolean {
  const me = session.get().me;
  return !!me && permissions.some((p) => me.permissions.includes(p));
}

/** A query string from the defined, non-empty values. */
export function qs(params: Record<string, string | number | boolean | undefined | null>): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}
