import type { Next } from 'koa';
import type { AuditLog } from '../../services/audit-log.ts';
import type { ApiKeysService } from '../../services/api-keys.ts';
import { AuthenticationError, type Authenticator } from '../../services/authenticator.ts';
import type { DynContext } from '../state.ts';

export const ACCESS_COOKIE = 'dyn_access';

/**
 * Resolves credentials, if any, into ctx.state.principal: `Authorization: Bearer <jwt>`,
 * `X-API-Key: <key>` or `Authorization: ApiKey <key>`, or the access-token cookie set by a
 * login with `cookie: true`. Rejected credentials are remembered in ctx.state.authError and
 * reported (401) by requireAuth, so public routes stay reachable.
 */
export function authenticate(deps: { authenticator: Authenticator; apiKeys: ApiKeysService; audit: AuditLog }) {
  return async (ctx: DynContext, next: Next): Promise<void> => {
    const authorization = ctx.get('Authorization');
    const [scheme, credential] = authorization.split(/\s+/, 2);
    const apiKey = ctx.get('X-API-Key') || (scheme?.toLowerCase() === 'apikey' ? credential : undefined);
    try {
      if (apiKey) {
        ctx.state.authVia = 'apiKey';
        const verified = await deps.apiKeys.verify(apiKey);
        if (!verified) ctx.state.authError = 'Invalid or expired API key';
        else {
          ctx.state.principal = verified.principal;
          if (verified.auditUse) {
            deps.audit.enqueue({
              action: 'api_key_used',
              message: `API key "${verified.principal.name}" used`,
              source: 'api-key',
              ip: ctx.state.clientIp,
              method: ctx.method,
              path: ctx.path,
            });
          }
        }
      } else if (scheme?.toLowerCase() === 'bearer' && credential) {
        ctx.state.authVia = 'bearer';
        ctx.state.principal = await deps.authenticator.fromAccessToken(credential);
      } else if (authorization) {
        ctx.state.authError = 'Unsupported Authorization scheme; use Bearer or ApiKey';
      } else {
        // Parsing cookies costs something; most API calls carry none.
        const cookie = ctx.get('Cookie') ? ctx.cookies.get(ACCESS_COOKIE) : undefined;
        if (cookie) {
          ctx.state.authVia = 'cookie';
          ctx.state.principal = await deps.authenticator.fromAccessToken(cookie);
        }
      }
    } catch (error) {
      if (!(error instanceof AuthenticationError)) throw error;
      ctx.state.authError = error.message;
    }
    await next();
  };
}
