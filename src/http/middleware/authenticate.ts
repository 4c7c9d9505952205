import type { Next } from 'koa';
import type { Principal } from '../../model/principal.ts';
import type { AuditLog } from '../../services/audit-log.ts';
import type { ApiKeysService } from '../../services/api-keys.ts';
import { AuthenticationError, type Authenticator } from '../../services/authenticator.ts';
import type { DynContext } from '../state.ts';

export const ACCESS_COOKIE = 'dyn_access';

export interface AuthDeps {
  authenticator: Authenticator;
  apiKeys: ApiKeysService;
  audit: AuditLog;
}

/** What a request's credentials resolve to; all absent when it carries none. */
export interface Credentials {
  principal?: Principal;
  /** Credentials were presented but rejected; reported only where auth is required. */
  authError?: string;
  authVia?: 'bearer' | 'apiKey' | 'cookie';
}

/** The parts of a request credentials are read from (header values as sent, '' when absent). */
export interface CredentialSource {
  authorization: string;
  apiKeyHeader: string;
  /** The access-token cookie, read only when no header carries credentials. */
  cookie(): string | undefined;
  ip: string;
  method: string;
  path: string;
}

const NONE: Credentials = Object.freeze({});

/**
 * Resolves credentials: `Authorization: Bearer <jwt>`, `X-API-Key: <key>` or
 * `Authorization: ApiKey <key>`, or the access-token cookie set by a login with `cookie: true`.
 * Shared by the Koa middleware below and the dynamic fast path, so both read them alike. A request
 * without credentials gets its answer without an await.
 */
export function resolveCredentials(deps: AuthDeps, source: CredentialSource): Credentials | Promise<Credentials> {
  const authorization = source.authorization;
  if (!authorization && !source.apiKeyHeader) {
    const cookie = source.cookie();
    return cookie ? fromToken(deps, cookie, 'cookie') : NONE;
  }
  const [scheme, credential] = authorization.split(/\s+/, 2);
  const apiKey = source.apiKeyHeader || (scheme?.toLowerCase() === 'apikey' ? credential : undefined);
  if (apiKey) return fromApiKey(deps, apiKey, source);
  if (scheme?.toLowerCase() === 'bearer' && credential) return fromToken(deps, credential, 'bearer');
  return { authError: 'Unsupported Authorization scheme; use Bearer or ApiKey' };
}

async function fromToken(deps: AuthDeps, token: string, via: 'bearer' | 'cookie'): Promise<Credentials> {
  try {
    return { authVia: via, principal: await deps.authenticator.fromAccessToken(token) };
  } catch (error) {
    if (!(error instanceof AuthenticationError)) throw error;
    return { authVia: via, authError: error.message };
  }
}

async function fromApiKey(deps: AuthDeps, apiKey: string, source: CredentialSource): Promise<Credentials> {
  try {
    const verified = await deps.apiKeys.verify(apiKey);
    if (!verified) return { authVia: 'apiKey', authError: 'Invalid or expired API key' };
    if (verified.auditUse) {
      deps.audit.enqueue({
        action: 'api_key_used',
        message: `API key "${verified.principal.name}" used`,
        source: 'api-key',
        ip: source.ip,
        method: source.method,
        path: source.path,
      });
    }
    return { authVia: 'apiKey', principal: verified.principal };
  } catch (error) {
    if (!(error instanceof AuthenticationError)) throw error;
    return { authVia: 'apiKey', authError: error.message };
  }
}

/**
 * Puts the request's credentials, if any, into ctx.state.principal. Rejected credentials are
 * remembered in ctx.state.authError and reported (401) by requireAuth, so public routes stay
 * reachable.
 */
export function authenticate(deps: AuthDeps) {
  return async (ctx: DynContext, next: Next): Promise<void> => {
    const credentials = await resolveCredentials(deps, {
      authorization: ctx.get('Authorization'),
      apiKeyHeader: ctx.get('X-API-Key'),
      // Parsing cookies costs something; most API calls carry none.
      cookie: () => (ctx.get('Cookie') ? ctx.cookies.get(ACCESS_COOKIE) : undefined),
      ip: ctx.state.clientIp,
      method: ctx.method,
      path: ctx.path,
    });
    if (credentials.authVia) ctx.state.authVia = credentials.authVia;
    if (credentials.principal) ctx.state.principal = credentials.principal;
    if (credentials.authError) ctx.state.authError = credentials.authError;
    await next();
  };
}
