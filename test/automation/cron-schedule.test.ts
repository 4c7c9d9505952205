import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextRunOf } from '../../src/model/cron-job.ts';
import { parseSchedule, runsOnDay, scheduleProblem } from '../../src/model/cron-schedule.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

// Schedules: the standard syntax and nothing else, and fire times across daylight saving as classic
// cron (Vixie cron, cronie) has them: a fixed-time job whose time the clock jumps over runs right
// after the jump, and once in a repeated hour (the first time); a job whose minute or hour is a
// wildcard runs by the wall clock. Pure functions at fixed instants, then the same over the API.

describe('schedule syntax', () => {
  it.each([
    '0 3 * * *',
    '*/15 * * * *',
    '0 9 1-5 * MON-FRI',
    '0 0 1,15 JAN,jul *',
    '0 9 ? * 1',
    '0 9 1 * ?',
    '0 0 * * 7',
    '0 0 * * 0-7',
    '0 0 * * 1-5/2',
    '0-30/10 * * * *',
    '30 0 9 * * *',
    '0 0 29 2 *',
    '0 9 30 2 MON',
    '0  3   * * *',
  ])('takes %s', (schedule) => {
    expect(scheduleProblem(schedule)).toBeNull();
  });

  it.each([
    ['0 0 L * *', /^L is an invalid expression for day of month: use numbers, \*, ranges \(1-5\), steps \(\*\/15, 1-30\/5\) and lists \(1,15\)$/],
    ['0 0 1W * *', /^1W is an invalid expression for day of month/],
    ['0 0 L-2 * *', /^L-2 is an invalid expression for day of month/],
    ['0 0 * * MON#2', /^MON#2 is an invalid expression for day of week: .*, with the names SUN–SAT$/],
    ['0 0 1,15 * 7L', /^7L is an invalid expression for day of week/],
    ['5-1 * * * *', /^5-1 is an invalid expression for minute: a range goes from low to high \(for one past the end, list two: 5-59,0-1\)$/],
    ['0 0 * * 5-2', /^5-2 is an invalid expression for day of week: a range goes from low to high \(for one past the end, list two: 5-6,0-2\)$/],
    ['0 0 * * FRI-TUE', /^FRI-TUE is an invalid expression for day of week: a range goes from low to high/],
    ['*/0 * * * *', /^\*\/0 is an invalid expression for minute: a step is a whole number of 1 or more/],
    ['5/15 * * * *', /^5\/15 is an invalid expression for minute: a step goes on \* or a range \(5-59\/15\)$/],
    ['0 0 * * monday', /^monday is an invalid expression for day of week/],
    ['0 0 JAN * *', /^JAN is an invalid expression for day of month/],
    ['0 0 * SUN *', /^SUN is an invalid expression for month: .*, with the names JAN–DEC$/],
    ['? * * * *', /^\? is an invalid expression for minute/],
    ['61 * * * *', /^61 is an invalid expression for minute: minute is 0–59$/],
    ['0 24 * * *', /^24 is an invalid expression for hour: hour is 0–23$/],
    ['0 0 1,, * *', /^\(empty\) is an invalid expression for day of month/],
    ['0 0 -5 * *', /^-5 is an invalid expression for day of month/],
    ['0 0 1-5-7 * *', /^1-5-7 is an invalid expression for day of month/],
    ['0 9 1 * 8', /^8 is an invalid expression for day of week: day of week is 0–7$/],
    ['0 9 30 2 *', /^impossible day of month: no month of the schedule has day 30/],
    ['@daily', /^expected 5 fields \(or 6 with seconds first\) but got 1$/],
    ['61 25 * * *', /^61 is an invalid expression for minute: minute is 0–59; 25 is an invalid expression for hour/],
  ])('refuses %s, saying why', (schedule, problem) => {
    expect(scheduleProblem(schedule)).toMatch(problem);
  });

  it('reads names in any case, 7 as Sunday, and steps over ranges', () => {
    const schedule = parseSchedule('0-30/10 */6 1 jan-Mar 5-7');
    expect(schedule.minutes).toEqual([0, 10, 20, 30]);
    expect(schedule.hours).toEqual([0, 6, 12, 18]);
    expect([...schedule.months]).toEqual([1, 2, 3]);
    expect([...schedule.daysOfWeek].sort()).toEqual([0, 5, 6]);
    expect(schedule.seconds).toEqual([0]);
  });

  it.each([
    ['30 2 * * *', true],
    ['0,30 1-3 * * *', true],
    ['0 0 9 * * *', true],
    ['*/15 * * * *', false],
    ['30 * * * *', false],
    ['* 2 * * *', false],
    ['*/10 * * * * *', false],
  ])('%s is a fixed-time job: %s', (schedule, fixed) => {
    expect(parseSchedule(schedule).fixedTime).toBe(fixed);
  });
});

const at = (iso: string) => Date.parse(iso);
const next = (schedule: string, timezone: string, after: string) => nextRunOf(schedule, timezone, at(after))?.toISOString();

/** The fire times after `after`, one after the other, as the scheduler plans them. */
function fires(schedule: string, timezone: string, after: string, count: number): string[] {
  const out: string[] = [];
  let from = at(after);
  for (let i = 0; i < count; i++) {
    const fire = nextRunOf(schedule, timezone, from);
    if (!fire) break;
    out.push(fire.toISOString());
    from = fire.getTime();
  }
  return out;
}

describe('fire times across daylight saving', () => {
  it.each([
    // Spring forward: 02:30 does not exist; a fixed-time job runs at 03:00, the first instant after.
    ['30 2 28 3 *', 'Europe/Berlin', '2026-11-29T12:00:00Z', '2027-03-28T01:00:00.000Z'],
    ['30 2 14 3 *', 'America/New_York', '2026-11-29T12:00:00Z', '2027-03-14T07:00:00.000Z'],
    ['30 2 * * *', 'Europe/Berlin', '2027-03-28T00:30:00Z', '2027-03-28T01:00:00.000Z'],
    ['30 2 * * *', 'Europe/Berlin', '2027-03-28T01:00:00Z', '2027-03-29T00:30:00.000Z'],
    ['0 0 * * *', 'America/Santiago', '2027-09-04T04:00:00Z', '2027-09-05T04:00:00.000Z'], // midnight skipped: 01:00
    ['15 2 * * *', 'Australia/Lord_Howe', '2027-10-02T15:00:00Z', '2027-10-02T15:30:00.000Z'], // a half-hour shift
    // Fall back: 02:30 happens twice; a fixed-time job runs at the first.
    ['30 2 31 10 *', 'Europe/Berlin', '2026-11-29T12:00:00Z', '2027-10-31T00:30:00.000Z'],
    ['30 1 7 11 *', 'America/New_York', '2026-11-29T12:00:00Z', '2027-11-07T05:30:00.000Z'],
    ['30 2 * * *', 'Europe/Berlin', '2027-10-31T00:30:00Z', '2027-11-01T01:30:00.000Z'],
    ['30 2 * * *', 'Europe/Berlin', '2027-10-31T01:10:00Z', '2027-11-01T01:30:00.000Z'], // from inside the repeated hour
    // No daylight saving: as the wall clock says.
    ['0 9 * * *', '+05:45', '2027-03-28T00:00:00Z', '2027-03-28T03:15:00.000Z'],
    ['0 9 * * *', 'UTC', '2027-03-28T09:00:00Z', '2027-03-29T09:00:00.000Z'],
  ])('%s in %s after %s → %s', (schedule, timezone, after, expected) => {
    expect(next(schedule, timezone, after)).toBe(expected);
  });

  it('runs a wildcard job by the wall clock: nothing in the skipped hour, both passes of the repeated one', () => {
    expect(fires('*/15 * * * *', 'Europe/Berlin', '2027-03-28T00:40:00Z', 3)).toEqual(['2027-03-28T00:45:00.000Z', '2027-03-28T01:00:00.000Z', '2027-03-28T01:15:00.000Z']);
    expect(fires('*/15 * * * *', 'Europe/Berlin', '2027-10-31T00:40:00Z', 3)).toEqual(['2027-10-31T00:45:00.000Z', '2027-10-31T01:00:00.000Z', '2027-10-31T01:15:00.000Z']);
    expect(fires('30 * * * *', 'Europe/Berlin', '2027-10-30T23:00:00Z', 4)).toEqual(['2027-10-30T23:30:00.000Z', '2027-10-31T00:30:00.000Z', '2027-10-31T01:30:00.000Z', '2027-10-31T02:30:00.000Z']);
  });

  it('runs a fixed-time job once per skipped or repeated time', () => {
    // 02:00 and 02:30 are skipped: both run at 03:00, with 03:00 itself, once.
    expect(fires('0,30 1-3 * * *', 'Europe/Berlin', '2027-03-27T23:59:00Z', 3)).toEqual(['2027-03-28T00:00:00.000Z', '2027-03-28T00:30:00.000Z', '2027-03-28T01:00:00.000Z']);
    expect(fires('0,30 1-3 * * *', 'Europe/Berlin', '2027-03-28T01:00:00Z', 1)).toEqual(['2027-03-28T01:30:00.000Z']);
    // 02:00 and 02:30 happen twice: each runs the first time.
    expect(fires('0,30 1-3 * * *', 'Europe/Berlin', '2027-10-30T23:50:00Z', 4)).toEqual(['2027-10-31T00:00:00.000Z', '2027-10-31T00:30:00.000Z', '2027-10-31T02:00:00.000Z', '2027-10-31T02:30:00.000Z']);
  });

  it('agrees with a minute-by-minute walk of the wall clock around each change', () => {
    const windows: [string, string][] = [
      ['Europe/Berlin', '2027-03-27T12:00:00Z'],
      ['Europe/Berlin', '2027-10-30T12:00:00Z'],
      ['America/New_York', '2027-03-13T18:00:00Z'],
      ['America/New_York', '2027-11-06T18:00:00Z'],
      ['America/Santiago', '2027-09-04T12:00:00Z'],
      ['America/Santiago', '2027-04-03T12:00:00Z'],
      ['Australia/Lord_Howe', '2027-04-03T00:00:00Z'],
      ['Australia/Lord_Howe', '2027-10-02T00:00:00Z'],
      ['UTC', '2027-03-27T12:00:00Z'],
    ];
    const schedules = ['30 2 * * *', '0,30 1-3 * * *', '59 1 * * *', '0 0 * * *', '0 3 * * *', '15 2 * * SUN', '*/15 * * * *', '30 * * * *', '*/20 2 * * *'];
    for (const [timezone, from] of windows) {
      for (const schedule of schedules) {
        const walked = referenceFires(schedule, timezone, at(from), at(from) + 36 * 3_600_000);
        const planned = fires(schedule, timezone, new Date(at(from) - 1).toISOString(), walked.length + 1).filter((fire) => at(fire) < at(from) + 36 * 3_600_000);
        expect(planned, `${schedule} in ${timezone} from ${from}`).toEqual(walked);
      }
    }
  });
});

const wallFormats = new Map<string, Intl.DateTimeFormat>();

/** The local wall-clock minute of `instant` in `timezone`, as milliseconds of a UTC date. */
function wallMinute(instant: number, timezone: string): number {
  let format = wallFormats.get(timezone);
  if (!format) wallFormats.set(timezone, (format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric' })));
  const parts = Object.fromEntries(format.formatToParts(instant).map((part) => [part.type, Number(part.value)])) as Record<string, number>;
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!);
}

/**
 * The fires of a five-field schedule from `from` to `to`, by walking the instants minute by minute
 * as classic cron does: a wildcard job fires whenever the clock shows a matching time; a
 * fixed-time job fires when the latest time the clock has shown passes matching times.
 */
function referenceFires(expression: string, timezone: string, from: number, to: number): string[] {
  const schedule = parseSchedule(expression);
  const matches = (wall: number) => {
    const date = new Date(wall);
    return schedule.minutes.includes(date.getUTCMinutes()) && schedule.hours.includes(date.getUTCHours()) && runsOnDay(schedule, date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate());
  };
  const out: string[] = [];
  let shown = wallMinute(from - 60_000, timezone);
  for (let instant = from; instant < to; instant += 60_000) {
    const wall = wallMinute(instant, timezone);
    if (!schedule.fixedTime) {
      if (matches(wall)) out.push(new Date(instant).toISOString());
      continue;
    }
    let passed = false;
    for (let minute = shown + 60_000; minute <= wall; minute += 60_000) passed ||= matches(minute);
    if (passed) out.push(new Date(instant).toISOString());
    shown = Math.max(shown, wall);
  }
  return out;
}

describe('schedules over the API', () => {
  let t: TestServer;
  let admin: string;
  let seq = 0;
  const js = { type: 'javascript', code: 'async function run() {}' };
  const create = (schedule: string, timezone = 'UTC') => t.api('POST', '/api/cron', { token: admin, body: { name: `sched-${Date.now().toString(36)}${seq++}`, schedule, timezone, action: js } });

  beforeAll(async () => {
    t = await startTestServer();
    admin = await t.adminToken();
  });
  afterAll(async () => {
    await t.close();
  });

  it.each(['0 0 L * *', '0 0 1W * *', '0 0 * * MON#2', '0 0 1,15 * 7L', '5-1 * * * *', '0 0 * * 5-2'])('refuses %s with a 400 naming schedule', async (schedule) => {
    const res = await create(schedule);
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatch(new RegExp(`^Invalid request body: schedule ".+" is not a valid cron expression: .+ is an invalid expression for (day of month|day of week|minute)`));
    expect(res.body.details).toEqual([{ field: 'schedule', message: expect.any(String) }]);
  });

  it('refuses it on update too, and keeps the schedule it had', async () => {
    const job = (await create('0 3 * * *')).body.data;
    const res = await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { schedule: '0 0 L * *' } });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ field: 'schedule', message: expect.stringMatching(/^L is an invalid expression for day of month/) }]);
    expect((await t.api('GET', `/api/cron/${job._id}`, { token: admin })).body.data.schedule).toBe('0 3 * * *');
  });

  it('keeps a job stored with a schedule from before the narrower syntax editable, but not enabled as it is', async () => {
    const job = (await create('0 0 28 * *')).body.data;
    await t.server.services.store.collection('cronjobs').updateOne({ _id: job._id }, { $set: { schedule: '0 0 L * *' } });
    expect((await t.api('GET', `/api/cron/${job._id}`, { token: admin })).body.data).toMatchObject({ enabled: true, nextRunAt: null });
    const disabled = await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { enabled: false, description: 'last day, once' } });
    expect(disabled.status, disabled.text).toBe(200);
    const enabled = await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { enabled: true } });
    expect(enabled.status).toBe(400);
    expect(enabled.body.details).toEqual([{ field: 'schedule', message: expect.stringMatching(/^L is an invalid expression for day of month/) }]);
    const fixed = await t.api('PUT', `/api/cron/${job._id}`, { token: admin, body: { enabled: true, schedule: '0 0 28-31 * *' } });
    expect(fixed.status, fixed.text).toBe(200);
    expect(fixed.body.data.nextRunAt).not.toBeNull();
  });

  it('shows as nextRunAt the fire time the scheduler plans, names and steps included', async () => {
    for (const schedule of ['0 9 * JAN-MAR mon-fri', '0-30/10 */6 * * *', '0 9 1 * 7']) {
      const res = await create(schedule, 'Europe/Berlin');
      expect(res.status, res.text).toBe(201);
      const shown = Date.parse(res.body.data.nextRunAt);
      // Planned from the moment of the answer: the same unless a fire time fell in between.
      const planned = nextRunOf(schedule, 'Europe/Berlin', Date.parse(res.body.data.createdAt) - 1);
      expect(shown).toBe(planned?.getTime());
    }
  });

  it('shows the next daylight-saving days as classic cron runs them: after the jump in spring, the first pass in autumn', async () => {
    const cases = [
      { timezone: 'Europe/Berlin', month: 3, sunday: 'last', time: '30 2', expected: (y: number, d: string) => `${y}-03-${d}T01:00:00.000Z` },
      { timezone: 'America/New_York', month: 3, sunday: 2, time: '30 2', expected: (y: number, d: string) => `${y}-03-${d}T07:00:00.000Z` },
      { timezone: 'Europe/Berlin', month: 10, sunday: 'last', time: '30 2', expected: (y: number, d: string) => `${y}-10-${d}T00:30:00.000Z` },
      { timezone: 'America/New_York', month: 11, sunday: 1, time: '30 1', expected: (y: number, d: string) => `${y}-11-${d}T05:30:00.000Z` },
    ] as const;
    for (const { timezone, month, sunday, time, expected } of cases) {
      const { year, day } = nextSundayOf(month, sunday);
      const res = await create(`${time} ${day} ${month} *`, timezone);
      expect(res.status, res.text).toBe(201);
      expect(res.body.data.nextRunAt, `${time} ${day} ${month} * in ${timezone}`).toBe(expected(year, String(day).padStart(2, '0')));
    }
  });
});

/** The next (from tomorrow on) `nth` or last Sunday of `month`: the days clocks change. */
function nextSundayOf(month: number, nth: number | 'last'): { year: number; day: number } {
  for (let year = new Date().getUTCFullYear(); ; year++) {
    const sundays: number[] = [];
    for (let day = 1; day <= 31; day++) {
      const date = new Date(Date.UTC(year, month - 1, day));
      if (date.getUTCMonth() === month - 1 && date.getUTCDay() === 0) sundays.push(day);
    }
    const day = nth === 'last' ? sundays.at(-1)! : sundays[nth - 1]!;
    if (Date.UTC(year, month - 1, day) > Date.now() + 86_400_000) return { year, day };
  }
}
