import type { Next } from 'koa';
import type { Logger } from '../../lib/logger.ts';
import type { Engine } from '../../runtime/engine.ts';
import { errorResponse } from '../../runtime/error-response.ts';
import type { AuditLog } from '../../services/audit-log.ts';
import { recordFailure } from '../record-failure.ts';
import type { DynContext } from '../state.ts';

/**
 * Renders a failure of a management route as `{success: false, error, details?}` through the
 * shared mapping (runtime/error-response.ts, which the engine uses for dynamic calls too).
 * Client errors say what is wrong; anything unexpected is a 500 with a generic message, its
 * stack only in the server log. A dynamic call refused before the engine saw it (its body, CSRF)
 * is recorded as a failed call of its definition (recordFailure).
 */
export function errorHandler(logger: Logger, audit: AuditLog, engine: Pick<Engine, 'recordRefused'>) {
  return async (ctx: DynContext, next: Next): Promise<void> => {
    try {
      await next();
    } catch (error) {
      const rendered = errorResponse(error);
      const call = { method: ctx.method, path: ctx.path, ip: ctx.state.clientIp ?? ctx.ip, principal: ctx.state.principal, settings: ctx.state.settings };
      await recordFailure({ engine, audit, logger }, call, rendered, error);
      ctx.status = rendered.status;
      ctx.set(rendered.headers);
      ctx.body = rendered.body;
    }
  };
}
