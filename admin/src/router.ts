// Client-side routes under /admin: the path after /admin and the query, kept in a store and
// in the browser history (so back/forward and deep links work).
import type { TargetedMouseEvent } from 'preact';
import { createStore, useStore } from './store.ts';

export const BASE = '/admin';

export interface Location {
  path: string;
  query: URLSearchParams;
}

const read = (): Location => {
  const rest = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return { path: rest.replace(/\/+$/, '') || '/', query: new URLSearchParams(location.search) };
};

export const route = createStore<Location>(read());
addEventListener('popstate', () => route.set(read()));

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = `${BASE}${to === '/' ? '' : to}`;
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  route.set(read());
  if (!options.replace) scrollTo(0, 0);
}

/** Replaces the query string (filters, page) without a new history entry. */
export function setQuery(params: Record<string, string | number | undefined>): void {
  const query = new URLSearchParams(location.search);
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === '' || (key === 'page' && Number(value) === 1)) query.delete(key);
    else query.set(key, String(value));
  }
  const search = query.toString();
  history.replaceState(null, '', `${location.pathname}${search ? `?${search}` : ''}`);
  route.set(read());
}

export const useRoute = (): Location => useStore(route);

/** A link inside the admin: plain <a> (so it works with the keyboard and middle-click), routed in place. */
export function onLinkClick(event: TargetedMouseEvent<HTMLAnchorElement>): void {
  const href = event.currentTarget.getAttribute('href') ?? '';
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || !href.startsWith(BASE)) return;
  event.preventDefault();
  navigate(href.slice(BASE.length) || '/');
}
