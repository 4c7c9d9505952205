import type { DynContext } from './state.ts';

/** The success shape of every management response: `{success: true, data, meta?}`. */
export function ok(ctx: DynContext, data: unknown, options: { status?: number; meta?: Record<string, unknown> } = {}): void {
  ctx.status = options.status ?? 200;
  ctx.body = options.meta ? { success: true, data, meta: options.meta } : { success: true, data };
}

export function paged<T, U>(ctx: DynContext, page: { items: T[]; total: number }, query: { page: number; limit: number }, map: (item: T) => U): void {
  ok(ctx, page.items.map(map), { meta: { page: query.page, limit: query.limit, total: page.total } });
}
