import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FireTimer } from '../../src/automation/cron/fire-timer.ts';

// A job's timer on fake time: it fires at each planned time, skips fire times it wakes for more
// than a second late (not made up later), and stops for good.
const start = Date.parse('2027-03-28T00:00:00.000Z');
/** A fire every `everyMs` from the start. */
const every = (everyMs: number) => (after: number) => start + (Math.floor((after - start) / everyMs) + 1) * everyMs;
const iso = (ms: number) => new Date(ms).toISOString();

describe('FireTimer', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    vi.setSystemTime(start);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fires at each planned time, on the dot', () => {
    const fired: string[] = [];
    const timer = new FireTimer(every(60_000), (at) => fired.push(`${at.toISOString()} at ${iso(Date.now())}`));
    timer.start();
    vi.advanceTimersByTime(3 * 60_000);
    timer.stop();
    expect(fired).toEqual(['2027-03-28T00:01:00.000Z at 2027-03-28T00:01:00.000Z', '2027-03-28T00:02:00.000Z at 2027-03-28T00:02:00.000Z', '2027-03-28T00:03:00.000Z at 2027-03-28T00:03:00.000Z']);
  });

  it('sleeps at most ten minutes at a time, and still fires a fire time days ahead', () => {
    const fired: Date[] = [];
    const timer = new FireTimer(every(3 * 86_400_000), (at) => fired.push(at));
    timer.start();
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(3 * 86_400_000);
    timer.stop();
    expect(fired.map((at) => at.toISOString())).toEqual(['2027-03-31T00:00:00.000Z']);
  });

  it('skips fire times it wakes for more than a second late, and goes on from the next', () => {
    const fired: string[] = [];
    const timer = new FireTimer(every(1000), (at) => fired.push(at.toISOString()));
    timer.start();
    // The clock jumps 5.5 s while nothing runs (a busy or suspended process).
    vi.setSystemTime(start + 5500);
    vi.advanceTimersByTime(1000);
    timer.stop();
    // Woken at 6.5 s: 1–5 s are past the tolerance and skipped, 6 s is 0.5 s late and runs.
    expect(fired).toEqual(['2027-03-28T00:00:06.000Z']);
  });

  it('fires nothing once stopped, and nothing for a plan with no fire time', () => {
    const fired: Date[] = [];
    const timer = new FireTimer(every(1000), (at) => fired.push(at));
    timer.start();
    timer.stop();
    vi.advanceTimersByTime(5000);
    expect(fired).toEqual([]);
    const never = new FireTimer(() => null, (at) => fired.push(at));
    never.start();
    expect(vi.getTimerCount()).toBe(0);
  });
});
