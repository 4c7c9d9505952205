import { splitPath, type PathPattern } from '../lib/paths.ts';

/**
 * Route roots the service serves itself. A dynamic endpoint may not use a path that would shadow
 * one of them, in its plain or versioned (`/api/v1/...`) form. test/http/reserved-paths.test.ts
 * checks that every management route is covered by this table.
 */
export const RESERVED_API_ROOTS = [
  'auth',
  'health',
  'csrf-token',
  'users',
  'groups',
  'profile',
  'api-keys',
  'settings',
  'dashboard',
  'endpoints',
  'project',
  'collections',
  'cron',
  'webhooks',
  'mcp',
  'openapi',
  'openapi.json',
  'docs',
] as const;
export const RESERVED_TOP_LEVEL = ['admin'] as const;

const VERSION = /^v\d+$/;

/** The reserved route a pattern would shadow, or null. A parameter can match anything. */
export function shadowedRoute(pattern: PathPattern): string | null {
  const first = pattern.segments[0];
  if (!first) return null;
  if ('param' in first) return '/admin and /api';
  if ((RESERVED_TOP_LEVEL as readonly string[]).includes(first.literal)) return `/${first.literal}`;
  if (first.literal !== 'api') return null;
  let index = 1;
  const second = pattern.segments[1];
  if (second && 'literal' in second && VERSION.test(second.literal)) index = 2;
  const root = pattern.segments[index];
  if (!root) return null;
  const prefix = index === 2 ? `/api/${(second as { literal: string }).literal}` : '/api';
  if ('param' in root) return `the management routes under ${prefix}`;
  if ((RESERVED_API_ROOTS as readonly string[]).includes(root.literal)) return `${prefix}/${root.literal}`;
  return null;
}

export function isReservedConcretePath(path: string): boolean {
  const parts = splitPath(path);
  if (parts[0] && (RESERVED_TOP_LEVEL as readonly string[]).includes(parts[0])) return true;
  if (parts[0] !== 'api') return false;
  const root = parts[1] && VERSION.test(parts[1]) ? parts[2] : parts[1];
  return root !== undefined && (RESERVED_API_ROOTS as readonly string[]).includes(root);
}
