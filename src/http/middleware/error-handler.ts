import type { Next } from 'koa';
import type { Logger } from '../../lib/logger.ts';
import { isReservedConcretePath } from '../../model/reserved-paths.ts';
import type { Engine } from '../../runtime/engine.ts';
import { errorResponse } from '../../runtime/error-response.ts';
import type { AuditLog } from '../../services/audit-log.ts';
import type { DynContext } from '../state.ts';

/**
 * Renders a failure of a management route as `{success: false, error, details?}` through the
 * shared mapping (runtime/error-response.ts, which the engine uses for dynamic calls too).
 * Client errors say what is wrong; anything unexpected is a 500 with a generic message, its
 * stack only in the server log. A dynamic call refused before the engine saw it (its body, CSRF)
 * is recorded as a failed call of its definition (Engine.recordRefused).
 */
export function errorHandler(logger: Logger, audit: AuditLog, engine: Pick<Engine, 'recordRefused'>) {
  return async (ctx: DynContext, next: Next): Promise<void> => {
    try {
      await next();
    } catch (error) {
      const rendered = errorResponse(error);
      if (rendered.status >= 500) logger.error('request failed', { method: ctx.method, path: ctx.path, error });
      const call = { method: ctx.method, path: ctx.path, ip: ctx.state.clientIp ?? ctx.ip, principal: ctx.state.principal, settings: ctx.state.settings };
      const recorded = !isReservedConcretePath(ctx.path) && (await engine.recordRefused(call, rendered.status, rendered.body).catch((failure: unknown) => {
        logger.warn('recording a refused call failed', { error: failure });
        return false;
      }));
      // A failure the engine recorded is audited already, as a failed call of its definition.
      if (rendered.status >= 500 && !recorded) {
        audit.enqueue({
          action: 'error',
          message: `${ctx.method} ${ctx.path} failed with ${rendered.status}`,
          source: 'http',
          ip: ctx.state.clientIp ?? null,
          userId: ctx.state.principal?.kind === 'user' ? ctx.state.principal.userId : null,
          method: ctx.method,
          path: ctx.path,
          statusCode: rendered.status,
        });
      }
      ctx.status = rendered.status;
      ctx.set(rendered.headers);
      ctx.body = rendered.body;
    }
  };
}
