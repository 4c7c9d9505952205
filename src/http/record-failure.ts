import type { Logger } from '../lib/logger.ts';
import { isReservedConcretePath } from '../model/reserved-paths.ts';
import type { Engine, EngineRequest } from '../runtime/engine.ts';
import type { ErrorResponse } from '../runtime/error-response.ts';
import type { AuditLog } from '../services/audit-log.ts';

export interface FailureDeps {
  engine: Pick<Engine, 'recordRefused'>;
  audit: Pick<AuditLog, 'enqueue'>;
  logger: Logger;
}

/**
 * What the HTTP layer does with a failure it rendered itself (Koa's error handler, the dynamic
 * fast path): a 5xx is logged at once; a call of a dynamic path is recorded as a failed call of
 * its definition (Engine.recordRefused); a 5xx that no definition recorded gets an `error` audit
 * entry of its own. Never rejects.
 */
export async function recordFailure(deps: FailureDeps, call: Pick<EngineRequest, 'method' | 'path' | 'ip' | 'principal' | 'settings'>, rendered: ErrorResponse, error: unknown): Promise<void> {
  const { method, path, ip, principal } = call;
  if (rendered.status >= 500) deps.logger.error('request failed', { method, path, error });
  let recorded = false;
  if (!isReservedConcretePath(path)) {
    try {
      recorded = await deps.engine.recordRefused(call, rendered.status, rendered.body);
    } catch (failure) {
      deps.logger.warn('recording a refused call failed', { error: failure });
    }
  }
  // A failure the engine recorded is audited already, as a failed call of its definition.
  if (rendered.status < 500 || recorded) return;
  deps.audit.enqueue({
    action: 'error',
    message: `${method} ${path} failed with ${rendered.status}`,
    source: 'http',
    ip: ip || null,
    userId: principal?.kind === 'user' ? principal.userId : null,
    method,
    path,
    statusCode: rendered.status,
  });
}
