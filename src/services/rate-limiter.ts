/**
 * Fixed-window request counting per client IP. Kept in process memory on purpose: a shared
 * counter would cost a store write per request. With N instances the effective limit is up to
 * N × max; the README says so and points production users at their proxy's limiter.
 */
export interface RateDecision {
  allowed: boolean;
  retryAfterSeconds: number;
  remaining: number;
}

export class RateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private lastPrune = 0;

  hit(key: string, max: number, windowSeconds: number, now = Date.now()): RateDecision {
    this.prune(now);
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowSeconds * 1000 };
      this.windows.set(key, window);
    }
    window.count += 1;
    const retryAfterSeconds = Math.max(1, Math.ceil((window.resetAt - now) / 1000));
    return { allowed: window.count <= max, retryAfterSeconds, remaining: Math.max(0, max - window.count) };
  }

  private prune(now: number): void {
    if (now - this.lastPrune < 10_000) return;
    this.lastPrune = now;
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}
