import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_BASE_MS, MAX_ATTEMPTS, nextAttemptAt } from '../../src/automation/webhooks/backoff.ts';

describe('webhook retry schedule', () => {
  const delays = (random: () => number) => Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => (nextAttemptAt(i + 1, DEFAULT_RETRY_BASE_MS, 0, random) as Date).getTime());

  it('triples the wait from one minute, so 8 attempts span about 18 hours', () => {
    expect(delays(() => 0.5)).toEqual([1, 3, 9, 27, 81, 243, 729].map((m) => m * 60_000));
    const total = delays(() => 0.5).reduce((a, b) => a + b, 0);
    expect(total / 3_600_000).toBeCloseTo(18.2, 1);
  });

  it('spreads each wait by at most 20 % either way', () => {
    expect(delays(() => 0)[0]).toBe(48_000);
    expect(delays(() => 1)[0]).toBe(72_000);
  });

  it('leaves no attempt after the eighth', () => {
    expect(nextAttemptAt(MAX_ATTEMPTS, DEFAULT_RETRY_BASE_MS)).toBeNull();
  });
});
