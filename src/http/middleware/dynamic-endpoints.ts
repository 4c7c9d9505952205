import type { Next } from 'koa';
import type { Engine } from '../../runtime/engine.ts';
import { JsonText } from '../../runtime/json-text.ts';
import type { DynContext } from '../state.ts';

/**
 * Hands every request outside the management roots to the engine, which answers it in the API's
 * shape — 404 when nothing serves the path, 405 with `Allow` when other methods do, 204 with
 * `Allow` for OPTIONS. Record reads come back as JsonText and are sent as they are.
 */
export function dynamicEndpoints(engine: Engine) {
  return async (ctx: DynContext, next: Next): Promise<void> => {
    if (ctx.state.managementRoute) return next();
    const response = await engine.handle({
      method: ctx.method,
      path: ctx.path,
      headers: ctx.headers as Record<string, string | undefined>,
      query: ctx.query,
      body: (ctx.request as { body?: unknown }).body,
      ip: ctx.state.clientIp,
      principal: ctx.state.principal,
      authError: ctx.state.authError,
      bodyError: ctx.state.bodyError,
      settings: ctx.state.settings,
      acceptsJsonText: true,
      source: 'http',
    });
    ctx.status = response.status;
    if (response.headers) ctx.set(response.headers);
    if (response.body instanceof JsonText) {
      ctx.set('Content-Type', 'application/json; charset=utf-8');
      ctx.body = response.body.text;
    } else if (response.body !== null) {
      ctx.body = response.body;
    }
  };
}
