import type { Next } from 'koa';
import { forbidden, unauthorized } from '../../lib/errors.ts';
import type { CallerActor } from '../../model/actor.ts';
import { hasAnyPermission, type Principal } from '../../model/principal.ts';
import type { Permission } from '../../model/permissions.ts';
import { requestInfo, type DynContext } from '../state.ts';

/** No valid credentials: 401. Valid but lacking every listed permission: 403. */
export function requirePrincipal(ctx: DynContext): Principal {
  const principal = ctx.state.principal;
  if (!principal) throw unauthorized(ctx.state.authError ?? 'Authentication required');
  return principal;
}

/** The caller as the services take it: who (for permission checks and the audit log) and the request. */
export function requireActor(ctx: DynContext): CallerActor {
  return { principal: requirePrincipal(ctx), request: requestInfo(ctx) };
}

export function requireAuth() {
  return async (ctx: DynContext, next: Next): Promise<void> => {
    requirePrincipal(ctx);
    await next();
  };
}

export function requireAny(...permissions: Permission[]) {
  return async (ctx: DynContext, next: Next): Promise<void> => {
    const principal = requirePrincipal(ctx);
    if (!hasAnyPermission(principal, permissions)) throw forbidden(`Forbidden: requires ${permissions.join(' or ')}`);
    await next();
  };
}

export function requireUser(ctx: DynContext): Principal & { kind: 'user' } {
  const principal = requirePrincipal(ctx);
  if (principal.kind !== 'user') throw forbidden('This route needs a signed-in user, not an API key');
  return principal;
}
