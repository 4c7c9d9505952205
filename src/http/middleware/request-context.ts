import type { Next } from 'koa';
import { clientIpOf } from '../../lib/client-ip.ts';
import type { SettingsService } from '../../services/settings.ts';
import type { DynContext } from '../state.ts';

/** Loads the current settings once per request and resolves the client IP from them. */
export function requestContext(settings: SettingsService) {
  return async (ctx: DynContext, next: Next): Promise<void> => {
    ctx.state.clientIp = ctx.req.socket.remoteAddress ?? '';
    ctx.state.settings = settings.peek() ?? (await settings.get());
    ctx.state.clientIp = clientIpOf(ctx.req.socket, ctx.get('X-Forwarded-For') || undefined, ctx.state.settings.trustedProxyMatcher);
    await next();
  };
}
