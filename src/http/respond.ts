import { notServed } from '../runtime/error-response.ts';
import type { DynContext } from './state.ts';

/** The success shape of every management response: `{success: true, data, meta?}`. */
export function ok(ctx: DynContext, data: unknown, options: { status?: number; meta?: Record<string, unknown> } = {}): void {
  ctx.status = options.status ?? 200;
  ctx.body = options.meta ? { success: true, data, meta: options.meta } : { success: true, data };
}

export function paged<T, U>(ctx: DynContext, page: { items: T[]; total: number }, query: { page: number; limit: number }, map: (item: T) => U): void {
  ok(ctx, page.items.map(map), { meta: { page: query.page, limit: query.limit, total: page.total } });
}

/** A path's answer to a method it does not take: 405 naming `allowed` in Allow, 204 for OPTIONS. */
export function notAllowed(ctx: DynContext, allowed: readonly string[]): void {
  const answer = notServed(ctx.method, ctx.path, allowed);
  ctx.status = answer.status;
  ctx.set(answer.headers);
  ctx.body = answer.body;
}
