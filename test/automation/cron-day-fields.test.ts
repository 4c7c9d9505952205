import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { nextRunOf, scheduleProblem } from '../../src/model/cron-job.ts';
import { parseSchedule, runsOnDay } from '../../src/model/cron-schedule.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

// Day of month and day of week as crontab reads them: both restricted, either day runs
// (`0 9 1 * MON` = the 1st of every month and every Monday); one of them `*`, both must match.
// The scheduler fires at the times nextRunAt shows (one function gives both). The day logic is
// tested as pure functions at fixed instants (no waiting for days); the scheduler on the real
// clock with every-second schedules.

const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

/** The local calendar day of `date` in `timezone`: year, month, day of month, weekday (0 = Sunday). */
function localDay(date: Date, timezone: string) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: timezone, year: 'numeric', month: 'numeric', day: 'numeric', weekday: 'short' })
      .formatToParts(date)
      .map((part) => [part.type, part.value]),
  );
  return { year: Number(parts.year), month: Number(parts.month), day: Number(parts.day), weekday: WEEKDAYS.indexOf(String(parts.weekday).toUpperCase()) };
}

/** Whether the schedule runs on the day `date` falls on in `timezone`, by its day fields. */
function matchesDayFields(schedule: string, date: Date, timezone: string): boolean {
  const day = localDay(date, timezone);
  return runsOnDay(parseSchedule(schedule), day.year, day.month, day.day);
}

/** The local hour and minute of `date` in `timezone`. */
function localTime(date: Date, timezone: string) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: timezone, hour: 'numeric', minute: 'numeric', hourCycle: 'h23' })
      .formatToParts(date)
      .map((part) => [part.type, part.value]),
  );
  return { hour: Number(parts.hour), minute: Number(parts.minute) };
}

/**
 * A reference next run, independent of cron-schedule.ts, for `minute hour dom-list * dow-list` with plain
 * numbers: walk the minutes after `from` and take the first whose local time and day fit, the days
 * by crontab's rule.
 */
function referenceNextRun(schedule: string, timezone: string, from: Date): Date {
  const [minute, hour, dom, month, dow] = schedule.split(' ') as [string, string, string, string, string];
  expect(month).toBe('*');
  const doms = dom === '*' ? null : dom.split(',').map(Number);
  const dows = dow === '*' ? null : dow.split(',').map((d) => Number(d) % 7);
  let at = Math.floor(from.getTime() / 60_000) * 60_000 + 60_000;
  for (let i = 0; i < 60 * 24 * 400; i++, at += 60_000) {
    const date = new Date(at);
    const time = localTime(date, timezone);
    if (time.minute !== Number(minute) || time.hour !== Number(hour)) continue;
    const day = localDay(date, timezone);
    const onDom = doms?.includes(day.day);
    const onDow = dows?.includes(day.weekday);
    if (doms && dows ? onDom || onDow : (onDom ?? true) && (onDow ?? true)) return date;
  }
  throw new Error(`no run of ${schedule} within 400 days`);
}

describe('which schedules take the days either way', () => {
  it.each([
    ['0 9 1 * 1', true],
    ['0 9 1 * MON', true],
    ['0 0 9 1 * MON', true], // six fields, seconds first
    ['0 9 1-7 * MON-FRI', true],
    ['0 9 1,15 JAN sat,sun', true],
    ['0 9 1 * 7', true],
    ['0 9 * * 1', false],
    ['0 9 1 * *', false],
    ['0 9 ? * 1', false],
    ['0 9 1 * ?', false],
    ['0 9 */2 * 1', false], // a field starting with * counts as unrestricted, as in Vixie cron
    ['0 9 1 * */2', false],
    ['* * * * *', false],
  ])('%s → %s', (schedule, either) => {
    expect(parseSchedule(schedule).daysEitherWay).toBe(either);
  });
});

describe('matchesDayFields', () => {
  const at = (iso: string) => new Date(iso);
  it.each([
    // both restricted: either day
    ['0 9 1 * 1', '2026-01-01T09:00:00Z', 'UTC', true], // Thursday the 1st
    ['0 9 1 * 1', '2026-01-05T09:00:00Z', 'UTC', true], // Monday the 5th
    ['0 9 1 * 1', '2026-06-01T09:00:00Z', 'UTC', true], // Monday the 1st
    ['0 9 1 * 1', '2026-01-06T09:00:00Z', 'UTC', false], // Tuesday the 6th
    ['0 0 9 1 * MON', '2026-01-05T09:00:00Z', 'UTC', true],
    ['0 9 1 * mon', '2026-01-07T09:00:00Z', 'UTC', false],
    ['0 9 1 * 7', '2026-02-15T09:00:00Z', 'UTC', true], // 7 is Sunday
    ['0 9 1 * SUN', '2026-02-15T09:00:00Z', 'UTC', true],
    ['0 9 10-20/5 * SAT,SUN', '2026-02-15T09:00:00Z', 'UTC', true], // the 15th, and a Sunday
    ['0 9 10-20/5 * SAT,SUN', '2026-02-10T09:00:00Z', 'UTC', true], // the 10th, a Tuesday
    ['0 9 10-20/5 * SAT,SUN', '2026-02-28T09:00:00Z', 'UTC', true], // a Saturday
    ['0 9 10-20/5 * SAT,SUN', '2026-02-12T09:00:00Z', 'UTC', false], // the 12th, a Thursday
    ['0 9 2 * MON-FRI', '2026-02-27T09:00:00Z', 'UTC', true], // a Friday
    ['0 9 2 * MON-FRI', '2026-02-28T09:00:00Z', 'UTC', false],
    // read in the job's time zone: 2026-03-31T20:00Z is Wednesday 1 April 09:00 in Auckland (+13)
    ['0 9 1 * MON', '2026-03-31T20:00:00Z', 'Pacific/Auckland', true],
    ['0 9 1 * MON', '2026-03-31T20:00:00Z', 'UTC', false], // Tuesday 31 March in UTC
    ['0 9 2 * TUE', '2026-03-31T20:00:00Z', 'Pacific/Auckland', false], // Wednesday the 1st there
    ['0 9 2 * TUE', '2026-03-31T20:00:00Z', 'UTC', true],
    ['0 9 1 * MON', '2026-03-31T20:00:00Z', '+05:30', true], // 1 April 01:30
    ['0 9 1 * MON', '2026-03-31T20:00:00Z', '-05:00', false], // 31 March 15:00, a Tuesday
    ['0 9 31 * MON', '2026-04-01T02:00:00Z', 'America/New_York', true], // 31 March 22:00 (EDT)
    // one of them unrestricted: both must match
    ['0 9 * * 1', '2026-01-05T09:00:00Z', 'UTC', true],
    ['0 9 * * 1', '2026-01-01T09:00:00Z', 'UTC', false],
    ['0 9 1 * *', '2026-01-01T09:00:00Z', 'UTC', true],
    ['0 9 1 * ?', '2026-01-05T09:00:00Z', 'UTC', false],
    ['0 9 */2 * 1', '2026-01-05T09:00:00Z', 'UTC', true], // the 5th (odd) and a Monday
    ['0 9 */2 * 1', '2026-01-12T09:00:00Z', 'UTC', false], // a Monday, the 12th (even)
    ['0 9 */2 * 1', '2026-01-01T09:00:00Z', 'UTC', false], // the 1st (odd), a Thursday
  ])('%s at %s in %s → %s', (schedule, iso, timezone, expected) => {
    expect(matchesDayFields(schedule, at(iso), timezone)).toBe(expected);
  });

  it('agrees with a reference reading of the days over two months, in several time zones', () => {
    const schedules = ['0 9 1,15 * 1', '0 9 13 * 5', '0 9 31 * 0,6', '0 9 * * 3', '0 9 20 * *', '0 9 28,29 * 2,4'];
    for (const timezone of ['UTC', 'Pacific/Kiritimati', 'America/Los_Angeles', '+05:45']) {
      for (let hour = 0; hour < 24 * 61; hour += 5) {
        const date = new Date(Date.UTC(2026, 0, 25) + hour * 3_600_000);
        const day = localDay(date, timezone);
        for (const schedule of schedules) {
          const [, , dom, , dow] = schedule.split(' ') as [string, string, string, string, string];
          const onDom = dom === '*' || dom.split(',').map(Number).includes(day.day);
          const onDow = dow === '*' || dow.split(',').map(Number).includes(day.weekday);
          const expected = dom !== '*' && dow !== '*' ? onDom || onDow : onDom && onDow;
          expect(matchesDayFields(schedule, date, timezone), `${schedule} at ${date.toISOString()} in ${timezone}`).toBe(expected);
        }
      }
    }
  });
});

describe('nextRunOf (nextRunAt)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });
  const now = (iso: string) => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(iso));
  };

  it.each([
    ['0 9 1 * 1', 'UTC', '2026-01-01T00:00:00Z', '2026-01-01T09:00:00.000Z'], // the 1st, a Thursday
    ['0 9 1 * 1', 'UTC', '2026-01-01T09:00:00Z', '2026-01-05T09:00:00.000Z'], // then the next Monday
    ['0 9 1 * MON', 'UTC', '2026-01-26T10:00:00Z', '2026-02-01T09:00:00.000Z'], // the 1st before Monday the 2nd
    ['0 0 9 1 * MON', 'UTC', '2026-01-26T10:00:00Z', '2026-02-01T09:00:00.000Z'],
    ['0 9 1 * MON', 'Pacific/Auckland', '2026-03-30T21:00:00Z', '2026-03-31T20:00:00.000Z'], // Wed 1 April 09:00 NZDT
    ['0 9 1 * MON', 'America/New_York', '2026-03-02T15:00:00Z', '2026-03-09T13:00:00.000Z'], // Monday, after DST began
    ['0 9 30 2 MON', 'UTC', '2026-03-01T00:00:00Z', '2027-02-01T09:00:00.000Z'], // no 30 February: Mondays in February
    ['0 9 * * 1', 'UTC', '2026-01-01T00:00:00Z', '2026-01-05T09:00:00.000Z'], // one unrestricted: as before
    ['0 9 */2 * 1', 'UTC', '2026-01-06T00:00:00Z', '2026-01-19T09:00:00.000Z'], // odd Mondays (AND)
  ])('%s in %s, at %s → %s', (schedule, timezone, from, expected) => {
    now(from);
    expect(nextRunOf(schedule, timezone)?.toISOString()).toBe(expected);
  });

  it('agrees with a reference walk over the minutes', () => {
    const cases: [string, string, string][] = [
      ['0 9 1 * 1', 'UTC', '2026-11-29T06:00:00Z'],
      ['30 23 15 * 3', 'Pacific/Kiritimati', '2026-02-10T00:00:00Z'],
      ['0 1 31 * 6', 'America/Los_Angeles', '2026-04-01T00:00:00Z'],
      ['15 6 29 * 0', 'Europe/Berlin', '2026-02-01T00:00:00Z'],
      ['0 12 13 * 5', '+05:45', '2026-06-14T00:00:00Z'],
    ];
    for (const [schedule, timezone, from] of cases) {
      now(from);
      expect(nextRunOf(schedule, timezone)?.toISOString(), `${schedule} in ${timezone} from ${from}`).toBe(referenceNextRun(schedule, timezone, new Date(from)).toISOString());
    }
  });

  it('a day of month no month has is allowed when the day of week still runs, and refused alone', () => {
    expect(scheduleProblem('0 9 30 2 MON')).toBeNull();
    expect(scheduleProblem('0 9 30 2 *')).toMatch(/impossible day of month/);
    expect(scheduleProblem('0 9 32 * MON')).toMatch(/32 is an invalid expression for day of month/);
    expect(scheduleProblem('0 9 1 * 8')).toMatch(/8 is an invalid expression for day of week/);
    expect(nextRunOf('0 9 32 * MON', 'UTC')).toBeNull();
  });
});

describe('the scheduler, over the real API', () => {
  let t: TestServer;
  let admin: string;
  // Kiritimati is UTC+14: its day differs from UTC's for most of the UTC day.
  const timezone = 'Pacific/Kiritimati';

  beforeAll(async () => {
    t = await startTestServer();
    admin = await t.adminToken();
  });
  afterAll(async () => {
    await t.close();
  });

  /**
   * Today and tomorrow in `timezone` (a test may cross midnight), and a day of month and a day of
   * week that are neither: the day after tomorrow's day of month, and the weekday of the day after
   * that (so taking both days would run later than taking either).
   */
  function days() {
    const inDays = (n: number) => localDay(new Date(Date.now() + n * 86_400_000), timezone);
    return { today: inDays(0), tomorrow: inDays(1), otherDom: inDays(2).day, otherDow: inDays(3).weekday };
  }
  const js = { type: 'javascript', code: 'async function run() {}' };
  let seq = 0;
  async function createJob(schedule: string) {
    const res = await t.api('POST', '/api/cron', { token: admin, body: { name: `days-${Date.now().toString(36)}${seq++}`, schedule, timezone, action: js } });
    expect(res.status, res.text).toBe(201);
    return res.body.data;
  }
  const runsOf = async (id: string) => (await t.api('GET', `/api/cron/${id}/runs?limit=100`, { token: admin })).body;

  it('a job runs on a day its day of month names though its day of week does not, once per fire', async () => {
    const { today, tomorrow, otherDow } = days();
    const job = await createJob(`* * * ${today.day},${tomorrow.day} * ${WEEKDAYS[otherDow]}`);
    const started = Date.now();
    let body;
    for (;;) {
      body = await runsOf(job._id);
      if (body.meta.total >= 2) break;
      if (Date.now() - started > 10_000) throw new Error(`no runs within 10 s: ${JSON.stringify(body)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await t.api('DELETE', `/api/cron/${job._id}`, { token: admin });
    const fires = body.data.map((run: { scheduledAt: string }) => run.scheduledAt);
    expect(new Set(fires).size).toBe(fires.length);
  });

  it('a job runs on a day its day of week names though its day of month does not', async () => {
    const { today, tomorrow, otherDom } = days();
    const job = await createJob(`* * * ${otherDom} * ${WEEKDAYS[today.weekday]},${WEEKDAYS[tomorrow.weekday]}`);
    const started = Date.now();
    while ((await runsOf(job._id)).meta.total < 1) {
      if (Date.now() - started > 10_000) throw new Error('no runs within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await t.api('DELETE', `/api/cron/${job._id}`, { token: admin });
  });

  it('a job whose days both name neither today nor tomorrow does not run, and shows the next run it will make', async () => {
    const { otherDom, otherDow } = days();
    const schedule = `0 9 ${otherDom} * ${otherDow}`;
    const job = await createJob(`* * * ${otherDom} * ${otherDow}`);
    const shown = await createJob(schedule);
    const expected = referenceNextRun(schedule, timezone, new Date());
    expect(shown.nextRunAt).toBe(expected.toISOString());
    expect(localDay(expected, timezone).day).toBe(otherDom); // in two days, not when both days fall together
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect((await runsOf(job._id)).meta.total).toBe(0);
    await t.api('DELETE', `/api/cron/${job._id}`, { token: admin });
    await t.api('DELETE', `/api/cron/${shown._id}`, { token: admin });
  });

  it('saves a day of month no month has when the day of week runs, and refuses it alone', async () => {
    const ok = await createJob('0 9 30 2 MON');
    const next = localDay(new Date(ok.nextRunAt), timezone);
    expect([next.month, next.weekday]).toEqual([2, 1]); // a Monday in February
    await t.api('DELETE', `/api/cron/${ok._id}`, { token: admin });
    const refused = await t.api('POST', '/api/cron', { token: admin, body: { name: `days-${Date.now().toString(36)}x`, schedule: '0 9 30 2 *', action: js } });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/impossible day of month/);
  });
});
