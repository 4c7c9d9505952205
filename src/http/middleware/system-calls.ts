import type { Next } from 'koa';
import type { CallCounter } from '../../runtime/call-counter.ts';
import type { EndpointsService } from '../../services/endpoints.ts';
import { SYSTEM_ENDPOINTS } from '../../services/system-endpoints.ts';
import type { DynContext } from '../state.ts';

/**
 * Counts each call of a platform route that a system definition describes (login, refresh,
 * logout, register, health, CSRF token) in that definition's `callCount`, as the engine counts
 * the calls of dynamic endpoints: every call the route answered, failures included.
 */
export function countSystemCalls(deps: { endpoints: EndpointsService; callCounter: CallCounter }) {
  const routes = new Set(SYSTEM_ENDPOINTS.map((endpoint) => `${endpoint.method} ${endpoint.path}`));
  return async (ctx: DynContext, next: Next): Promise<void> => {
    const route = `${ctx.method} ${ctx.path}`;
    if (!routes.has(route)) return next();
    try {
      await next();
    } finally {
      // Best effort: a store that cannot say which definition it is must not fail the call (health!).
      const ids = await deps.endpoints.systemEndpointIds().catch(() => null);
      const id = ids?.get(route);
      if (id !== undefined) deps.callCounter.count(id);
    }
  };
}
