import { badRequest } from '../lib/errors.ts';
import { positiveInt, readQuery as readParams } from '../lib/query-params.ts';
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

/** The request's query parameters, each given once, all of them allowed (values up to 200 characters). */
export function readQuery(ctx: DynContext, allowed: readonly string[]): Record<string, string> {
  return readParams(ctx.query, allowed, { maxLength: 200 });
}

/**
 * For routes that take no query parameters where one could be mistaken for a scope: a
 * `DELETE /api/settings/logs?before=…` must not clear the whole log as if `before` applied.
 */
export async function noQuery(ctx: DynContext, next: () => Promise<unknown>): Promise<void> {
  readQuery(ctx, []);
  await next();
}

/**
 * For actions that take no input (`POST /api/users/:id/unlock`, `/cron/:id/run`, …): no query
 * parameters, and no body but an empty object, so a field sent in the belief that it does
 * something (`{"force": true}`) is a 400 rather than silently ignored.
 */
export async function noInput(ctx: DynContext, next: () => Promise<unknown>): Promise<void> {
  readQuery(ctx, []);
  const body = (ctx.request as { body?: unknown }).body;
  if (body !== undefined && body !== null && !(typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0)) {
    const fields = typeof body === 'object' && !Array.isArray(body) ? Object.keys(body).slice(0, 20) : [''];
    throw badRequest(
      fields[0] ? `Invalid request body: ${fields[0]} is not an allowed field (this route takes no body)` : 'Invalid request body: this route takes no body',
      fields.map((field) => ({ field, message: field ? 'is not an allowed field' : 'must be empty' })),
    );
  }
  await next();
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
