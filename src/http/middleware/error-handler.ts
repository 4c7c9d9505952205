import type { Next } from 'koa';
import { AppError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { DuplicateKeyError, InvalidFilterError, StoreError } from '../../store/types.ts';
import type { AuditLog } from '../../services/audit-log.ts';
import type { DynContext } from '../state.ts';

/**
 * The one renderer of failures: `{success: false, error, details?}`. Client errors say what is
 * wrong; anything unexpected is a 500 with a generic message, its stack only in the server log.
 */
export function errorHandler(logger: Logger, audit: AuditLog) {
  return async (ctx: DynContext, next: Next): Promise<void> => {
    try {
      await next();
    } catch (error) {
      const rendered = render(error);
      if (rendered.status >= 500) {
        logger.error('request failed', { method: ctx.method, path: ctx.path, error });
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
      for (const [name, value] of Object.entries(rendered.headers)) ctx.set(name, value);
      ctx.body = { success: false, error: rendered.message, ...(rendered.details ? { details: rendered.details } : {}) };
    }
  };
}

interface Rendered {
  status: number;
  message: string;
  details?: unknown;
  headers: Record<string, string>;
}

function render(error: unknown): Rendered {
  if (error instanceof AppError) return { status: error.status, message: error.message, details: error.details, headers: error.headers ?? {} };
  if (error instanceof DuplicateKeyError) return { status: 409, message: 'A record with these values already exists', headers: {} };
  if (error instanceof InvalidFilterError) return { status: 400, message: error.message, headers: {} };
  if (error instanceof StoreError && error.code === 'busy') return { status: 503, message: 'The database is busy; try again', headers: { 'Retry-After': '1' } };
  if (error instanceof StoreError && error.code === 'unavailable') return { status: 503, message: 'The database is unavailable', headers: { 'Retry-After': '5' } };
  const httpError = error as { status?: unknown; expose?: unknown };
  if (typeof httpError.status === 'number' && httpError.status >= 400 && httpError.status < 500) {
    return { status: httpError.status, message: httpError.expose ? String((error as Error).message) : 'Bad request', headers: {} };
  }
  return { status: 500, message: 'Internal server error', headers: {} };
}
