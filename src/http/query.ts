import { badRequest } from '../lib/errors.ts';
import type { DynContext } from './state.ts';

/**
 * Query parameters of list routes. Unknown parameters and repeated ones are refused (400), so
 * a typo or an operator-shaped parameter such as `search[$ne]=` never silently widens a query.
 * `limit` above the maxPageSize setting is clamped to it; `meta.limit` shows the value used.
 */
export interface ListQuery {
  page: number;
  limit: number;
  search?: string;
}

export function readQuery(ctx: DynContext, allowed: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(ctx.query)) {
    if (!allowed.includes(name)) throw badRequest(`Unknown query parameter "${name.slice(0, 64)}"`, [{ field: name.slice(0, 64), message: 'is not an allowed query parameter' }]);
    if (typeof value !== 'string') throw badRequest(`Query parameter "${name}" must be given once`, [{ field: name, message: 'must be given once' }]);
    if (value.length > 200) throw badRequest(`Query parameter "${name}" is too long`, [{ field: name, message: 'must be at most 200 characters' }]);
    out[name] = value;
  }
  return out;
}

function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1) throw badRequest(`Query parameter "${name}" must be a positive integer`, [{ field: name, message: 'must be a positive integer' }]);
  return Number(raw);
}

export function listQuery(ctx: DynContext, options: { defaultLimit?: number; extra?: readonly string[] } = {}): ListQuery & { extra: Record<string, string> } {
  const query = readQuery(ctx, ['page', 'limit', 'search', ...(options.extra ?? [])]);
  const settings = ctx.state.settings;
  const page = positiveInt('page', query.page, 1);
  const limit = Math.min(positiveInt('limit', query.limit, options.defaultLimit ?? settings.defaultPageSize), settings.maxPageSize);
  const search = query.search?.trim();
  const extra = Object.fromEntries(Object.entries(query).filter(([k]) => options.extra?.includes(k)));
  return { page, limit, ...(search ? { search } : {}), extra };
}
