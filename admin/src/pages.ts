// The admin's pages: the spec's routes under /admin, what each needs, and where its code is
// (each page is its own chunk, loaded when first visited).
import type { ComponentType } from 'preact';
import { can } from './api.ts';

export interface PageProps {
  /** Path segments after the page's own (`/endpoints/abc` → `['abc']`). */
  rest: string[];
}

export interface PageEntry {
  path: string;
  title: string;
  /** Any one of these permissions opens the page; empty: any signed-in user. */
  needs: string[];
  load: () => Promise<{ default: ComponentType<PageProps> }>;
}

export const PAGES: PageEntry[] = [
  { path: '/', title: 'Dashboard', needs: ['view'], load: () => import('./pages/dashboard.tsx') },
  { path: '/endpoints', title: 'Endpoints', needs: ['view', 'manage_api'], load: () => import('./pages/endpoints.tsx') },
  { path: '/endpoint-groups', title: 'Endpoint groups', needs: ['view', 'manage_api'], load: () => import('./pages/endpoint-groups.tsx') },
  { path: '/api-schema', title: 'API schema', needs: ['view', 'manage_api'], load: () => import('./pages/api-schema.tsx') },
  { path: '/api-docs', title: 'API docs', needs: [], load: () => import('./pages/api-docs.tsx') },
  { path: '/cron', title: 'Cron jobs', needs: ['manage_api'], load: () => import('./pages/cron.tsx') },
  { path: '/webhooks', title: 'Webhooks', needs: ['manage_api'], load: () => import('./pages/webhooks.tsx') },
  { path: '/api-keys', title: 'API keys', needs: ['manage_api'], load: () => import('./pages/api-keys.tsx') },
  { path: '/mcp', title: 'MCP', needs: ['manage_api'], load: () => import('./pages/mcp.tsx') },
  { path: '/users', title: 'Users', needs: ['view', 'manage_users'], load: () => import('./pages/users.tsx') },
  { path: '/groups', title: 'Groups', needs: ['view', 'manage_users'], load: () => import('./pages/groups.tsx') },
  { path: '/logs', title: 'Audit log', needs: ['view_logs'], load: () => import('./pages/logs.tsx') },
  { path: '/database', title: 'Database', needs: ['manage_users'], load: () => import('./pages/database.tsx') },
  { path: '/system', title: 'System', needs: ['view'], load: () => import('./pages/system.tsx') },
  { path: '/settings', title: 'Settings', needs: ['manage_users', 'manage_api'], load: () => import('./pages/settings.tsx') },
];

/** The page for a path and the segments after it; undefined for an unknown path. */
export function match(path: string): { page: PageEntry; rest: string[] } | undefined {
  if (path === '/' || path === '') return { page: PAGES[0]!, rest: [] };
  const segments = path.split('/').filter(Boolean);
  const page = PAGES.find((p) => p.path === `/${segments[0]}`);
  return page ? { page, rest: segments.slice(1).map(decodeURIComponent) } : undefined;
}

/** Whether the signed-in user may open the page. */
export const allows = (page: PageEntry): boolean => page.needs.length === 0 || can(...page.needs);

/** Whether the signed-in user may open the admin path `to` (query allowed): links to a page they may not open are not offered. */
export function mayOpen(to: string): boolean {
  const found = match(to.split('?')[0]!);
  return !!found && allows(found.page);
}
