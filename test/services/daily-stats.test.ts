import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DailyStats, lastDays, utcDay } from '../../src/services/daily-stats.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/types.ts';

/** The per-day counters over a real embedded store, with a clock the test moves. */
let dir: string;
let store: Store;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'dyn-daily-'));
  store = openSqliteStore({ dataDir: dir });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const DAY = 86_400_000;
const NOON = Date.parse('2026-03-10T12:00:00Z');

describe('days', () => {
  it('lastDays gives the UTC days ending today, oldest first, across a month end', () => {
    expect(lastDays(3, Date.parse('2026-03-01T00:30:00Z'))).toEqual(['2026-02-27', '2026-02-28', '2026-03-01']);
    expect(utcDay(Date.parse('2026-03-01T23:59:59.999Z'))).toBe('2026-03-01');
  });
});

describe('DailyStats', () => {
  it('counts per day and metric, zero-fills the days without counts, and reads unflushed counts at once', async () => {
    let now = NOON - 2 * DAY;
    const stats = new DailyStats(store, (error) => { throw error; }, () => now);
    stats.countRequest('http', 200);
    stats.countRequest('test', 404);
    await stats.flush();
    now = NOON;
    stats.bump('logins', 3);
    stats.countRequest('mcp', 500);

    const { days, values } = await stats.series(['requests', 'errors', 'logins', 'source.http', 'source.mcp', 'cronRuns'], 7);
    expect(days).toEqual(['2026-03-04', '2026-03-05', '2026-03-06', '2026-03-07', '2026-03-08', '2026-03-09', '2026-03-10']);
    expect(values.requests).toEqual([0, 0, 0, 0, 2, 0, 1]);
    expect(values.errors).toEqual([0, 0, 0, 0, 1, 0, 1]);
    expect(values.logins).toEqual([0, 0, 0, 0, 0, 0, 3]);
    expect(values['source.http']).toEqual([0, 0, 0, 0, 1, 0, 0]);
    expect(values['source.mcp']).toEqual([0, 0, 0, 0, 0, 0, 1]);
    expect(values.cronRuns).toEqual([0, 0, 0, 0, 0, 0, 0]);
  });

  it('counts requests on the day they were served, also when midnight passes between two flushes', async () => {
    let now = Date.parse('2026-03-09T23:59:59.999Z');
    const stats = new DailyStats(store, (error) => { throw error; }, () => now);
    stats.countRequest('http', 200);
    stats.countRequest('http', 503);
    now += 1;
    stats.countRequest('cron', 200);
    expect((await stats.series(['requests', 'errors', 'source.http', 'source.cron'], 2)).values).toEqual({
      requests: [2, 1],
      errors: [1, 0],
      'source.http': [2, 0],
      'source.cron': [0, 1],
    });
    await stats.flush();
    now += DAY;
    stats.countRequest('http', 200);
    await stats.flush();
    const docs = await store.collection('dailystats').find({ metric: 'requests' }, { sort: { day: 1 } });
    expect(docs.map((d) => [d.day, d.count])).toEqual([['2026-03-09', 2], ['2026-03-10', 1], ['2026-03-11', 1]]);
  });

  it('writes one document per day and metric, adding to it on later flushes and from a second counter', async () => {
    const first = new DailyStats(store, (error) => { throw error; }, () => NOON);
    const second = new DailyStats(store, (error) => { throw error; }, () => NOON);
    for (let i = 0; i < 50; i++) first.bump('cronRuns');
    await first.flush();
    second.bump('cronRuns', 7);
    first.bump('cronRuns', 2);
    await Promise.all([first.flush(), second.flush()]);
    const docs = await store.collection('dailystats').find({ metric: 'cronRuns' });
    expect(docs).toHaveLength(1);
    expect(docs[0]).toMatchObject({ day: '2026-03-10', metric: 'cronRuns', count: 59 });
  });

  it('counts older than the window are left out', async () => {
    let now = NOON - 7 * DAY;
    const stats = new DailyStats(store, (error) => { throw error; }, () => now);
    stats.bump('webhookDeliveries', 5);
    await stats.flush();
    now = NOON;
    expect((await stats.series(['webhookDeliveries'], 7)).values.webhookDeliveries).toEqual([0, 0, 0, 0, 0, 0, 0]);
  });
});

describe('retention', () => {
  it('removes the counters of days before the kept period, never the last seven days', async () => {
    let now = NOON - 40 * DAY;
    const stats = new DailyStats(store, (error) => { throw error; }, () => now);
    stats.bump('requests', 5);
    await stats.flush();
    now = NOON - 3 * DAY;
    stats.bump('requests', 2);
    await stats.flush();
    now = NOON;

    expect(await stats.purgeOlderThan(30)).toBe(1);
    expect((await store.collection('dailystats').find({})).map((doc) => doc.day)).toEqual(['2026-03-07']);
    // A retention shorter than the dashboard's week keeps the week.
    expect(await stats.purgeOlderThan(1)).toBe(0);
  });
});
