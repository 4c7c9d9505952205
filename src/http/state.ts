import type { ParameterizedContext } from 'koa';
import type { Principal } from '../model/principal.ts';
import type { RequestInfo } from '../services/auth.ts';
import type { ActiveSettings } from '../services/settings.ts';

/** What the middleware chain puts on ctx.state for the routes. */
export interface DynState {
  clientIp: string;
  settings: ActiveSettings;
  principal?: Principal;
  /** Set when credentials were presented but rejected; reported only where auth is required. */
  authError?: string;
  authVia?: 'bearer' | 'apiKey' | 'cookie';
  /** The path is under one of the service's own route roots (decided once per request). */
  managementRoute?: boolean;
  /** A dynamic endpoint's body that could not be read: the engine refuses it after network and access checks. */
  bodyError?: unknown;
}

export type DynContext = ParameterizedContext<DynState>;

export function requestInfo(ctx: DynContext): RequestInfo {
  return { ip: ctx.state.clientIp, method: ctx.method, path: ctx.path };
}
