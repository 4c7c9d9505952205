import type { Next } from 'koa';
import { AppError } from '../../lib/errors.ts';
import type { Engine } from '../../runtime/engine.ts';
import { JsonText } from '../../runtime/json-text.ts';
import type { DynContext } from '../state.ts';

/**
 * Hands every request that no management route answered to the engine. The engine's response
 * is already in the API's shape; a path no enabled definition matches falls through to 404.
 */
export function dynamicEndpoints(engine: Engine) {
  return async (ctx: DynContext, next: Next): Promise<void> => {
    if (ctx.body !== undefined && ctx.body !== null) return next();
    if (ctx.status !== 404) return next();
    const response = await engine.dispatch({
      method: ctx.method,
      path: ctx.path,
      headers: ctx.headers as Record<string, string | undefined>,
      query: ctx.query,
      body: (ctx.request as { body?: unknown }).body,
      ip: ctx.state.clientIp,
      principal: ctx.state.principal,
      authError: ctx.state.authError,
      settings: ctx.state.settings,
      acceptsJsonText: true,
    });
    if (!response) {
      // A path served with other methods: OPTIONS lists them, anything else is a 405 naming them.
      const allowed = await engine.allowedMethods(ctx.path);
      if (allowed.length === 0) return next();
      ctx.set('Allow', allowed.join(', '));
      if (ctx.method === 'OPTIONS') {
        ctx.status = 204;
        return;
      }
      throw new AppError(405, `Method ${ctx.method} is not allowed on ${ctx.path}`, { headers: { Allow: allowed.join(', ') } });
    }
    ctx.status = response.status;
    if (response.headers) ctx.set(response.headers);
    if (response.body instanceof JsonText) {
      ctx.set('Content-Type', 'application/json; charset=utf-8');
      ctx.body = response.body.text;
    } else {
      ctx.body = response.body;
    }
  };
}
