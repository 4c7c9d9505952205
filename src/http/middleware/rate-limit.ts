import type { Next } from 'koa';
import { tooManyRequests } from '../../lib/errors.ts';
import type { RateLimiter } from '../../services/rate-limiter.ts';
import type { DynContext } from '../state.ts';

/** The global per-client-IP limit (settings rateLimit*); off by default. */
export function rateLimit(limiter: RateLimiter) {
  return async (ctx: DynContext, next: Next): Promise<void> => {
    const settings = ctx.state.settings;
    if (settings.rateLimitEnabled) {
      const decision = limiter.hit(ctx.state.clientIp, settings.rateLimitMax, settings.rateLimitWindowSeconds);
      ctx.set('RateLimit-Limit', String(settings.rateLimitMax));
      ctx.set('RateLimit-Remaining', String(decision.remaining));
      if (!decision.allowed) throw tooManyRequests('Too many requests; slow down', decision.retryAfterSeconds);
    }
    await next();
  };
}
