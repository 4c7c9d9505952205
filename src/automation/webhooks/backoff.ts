// The retry schedule: attempt n+1 waits base·3^(n-1), ±20 % jitter so that deliveries failing
// together do not retry together. With the default base (60 s) the 8 attempts span about 18 hours:
// 1 min, 3 min, 9 min, 27 min, 81 min, 4 h, 12 h.
export const MAX_ATTEMPTS = 8;
export const DEFAULT_RETRY_BASE_MS = 60_000;

/** When to try again after `attempts` failed attempts; null when none is left. */
export function nextAttemptAt(attempts: number, baseMs: number, now = Date.now(), random = Math.random): Date | null {
  if (attempts >= MAX_ATTEMPTS) return null;
  const delay = baseMs * 3 ** (attempts - 1) * (0.8 + 0.4 * random());
  return new Date(now + Math.round(delay));
}
