// Cron schedules: the expression read field by field, and the fire times it gives in a time zone,
// daylight saving included. Pure: no timers (the scheduler, src/automation/cron, owns those).
//
// Syntax, what crontab takes and nothing more: five fields (`minute hour day-of-month month
// day-of-week`), or six with seconds first. A field is `*`, a number, a name (JAN–DEC, SUN–SAT, any
// case), a range `low-high` with low ≤ high, a step `/n` (n ≥ 1) on `*` or a range, or a comma list
// of those; `?` alone is `*` in either day field; day of week 0–7, 0 and 7 both Sunday. Anything
// else (`L`, `W`, `#`, `5-1`, `*/0`, `5/15`, full names) is refused with the reason.
//
// Days, as crontab reads them: when both day fields are restricted a day matching either runs
// (`0 9 1 * MON`: the 1st and every Monday); when either starts with `*` or is `?`, a day must
// match both (`0 9 */2 * MON`: odd-numbered Mondays).
//
// Daylight saving, as classic cron (Vixie cron, cronie) handles it:
//
//   | job                                               | local time skipped (spring)     | local time repeated (autumn) |
//   |---------------------------------------------------|---------------------------------|------------------------------|
//   | fixed time: neither minute nor hour starts with * | runs at the first instant after | runs once, the first time    |
//   |   (`30 2 * * *`, `0 1-3 * * *`)                   |   the jump (03:00 for 02:30)    |                              |
//   | wildcard: minute or hour starts with *            | does not run (that time is not  | runs both times (by the wall |
//   |   (`*/15 * * * *`, `30 * * * *`)                  |   on the clock)                 |   clock)                     |
//
// A fixed-time job follows the latest local time the clock has shown so far, which never goes
// back, and fires when it reaches a time of the schedule; a wildcard job fires whenever the
// clock shows one.

export interface CronSchedule {
  /** Sorted ascending; `[0]` for a five-field expression. */
  readonly seconds: readonly number[];
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly daysOfMonth: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  /** 0 (Sunday) to 6. */
  readonly daysOfWeek: ReadonlySet<number>;
  /** Both day fields restricted: a day matching either runs. */
  readonly daysEitherWay: boolean;
  /** Neither minute nor hour starts with `*`: daylight saving as in the table above. */
  readonly fixedTime: boolean;
}

export class ScheduleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScheduleError';
  }
}

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  /** What `*` spans up to, when not max. */
  starMax?: number;
  /** Names standing for min, min + 1, …; absent: numbers only. */
  names?: readonly string[];
  /** Where `?` may stand for `*` (the day fields). */
  question?: boolean;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const SECOND: FieldSpec = { name: 'second', min: 0, max: 59 };
const MINUTE: FieldSpec = { name: 'minute', min: 0, max: 59 };
const HOUR: FieldSpec = { name: 'hour', min: 0, max: 23 };
const DAY_OF_MONTH: FieldSpec = { name: 'day of month', min: 1, max: 31, question: true };
const MONTH: FieldSpec = { name: 'month', min: 1, max: 12, names: MONTHS };
// 7 is Sunday too (folded to 0 once read), so `*` spans 0–6.
const DAY_OF_WEEK: FieldSpec = { name: 'day of week', min: 0, max: 7, starMax: 6, names: WEEKDAYS, question: true };
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const SYNTAX = 'use numbers, *, ranges (1-5), steps (*/15, 1-30/5) and lists (1,15)';

/** The schedule read, or a ScheduleError saying what is wrong with each field that is. */
export function parseSchedule(expression: string): CronSchedule {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) throw new ScheduleError(`expected 5 fields (or 6 with seconds first) but got ${fields.length}`);
  const [second, minute, hour, dayOfMonth, month, dayOfWeek] = fields.length === 6 ? fields : ['0', ...fields];
  const problems: string[] = [];
  const read = (text: string, spec: FieldSpec): number[] => {
    try {
      return readField(text, spec);
    } catch (error) {
      if (!(error instanceof ScheduleError)) throw error;
      problems.push(error.message);
      return [];
    }
  };
  const unrestricted = (text: string) => text.startsWith('*') || text === '?';
  const schedule: CronSchedule = {
    seconds: read(second!, SECOND),
    minutes: read(minute!, MINUTE),
    hours: read(hour!, HOUR),
    daysOfMonth: new Set(read(dayOfMonth!, DAY_OF_MONTH)),
    months: new Set(read(month!, MONTH)),
    daysOfWeek: new Set(read(dayOfWeek!, DAY_OF_WEEK).map((day) => day % 7)),
    daysEitherWay: !unrestricted(dayOfMonth!) && !unrestricted(dayOfWeek!),
    fixedTime: !minute!.startsWith('*') && !hour!.startsWith('*'),
  };
  if (problems.length === 0 && !schedule.daysEitherWay && !someMonthHasADay(schedule)) {
    problems.push(`impossible day of month: no month of the schedule has day ${dayOfMonth} (with a day of week as well, either runs)`);
  }
  if (problems.length > 0) throw new ScheduleError(problems.join('; '));
  return schedule;
}

/** Why `expression` is not a schedule, or null. */
export function scheduleProblem(expression: string): string | null {
  try {
    parseSchedule(expression);
    return null;
  } catch (error) {
    if (error instanceof ScheduleError) return error.message;
    throw error;
  }
}

/** The values a field names, sorted, or a ScheduleError naming the part that is wrong. */
function readField(text: string, spec: FieldSpec): number[] {
  if (text === '?' && spec.question) return span(spec.min, wildcardMax(spec), 1);
  const values = new Set<number>();
  for (const part of text.split(',')) for (const value of readPart(part, spec)) values.add(value);
  return [...values].sort((a, b) => a - b);
}

/** `*`, `*` with a step, a value, a range, or a range with a step. */
function readPart(part: string, spec: FieldSpec): number[] {
  const invalid = (why: string) => new ScheduleError(`${part || '(empty)'} is an invalid expression for ${spec.name}: ${why}`);
  const match = /^([^/]+)(?:\/(.*))?$/.exec(part);
  if (!match) throw invalid(SYNTAX);
  const [, base, stepText] = match as unknown as [string, string, string | undefined];
  let step = 1;
  if (stepText !== undefined) {
    if (!/^\d{1,4}$/.test(stepText) || Number(stepText) < 1) throw invalid('a step is a whole number of 1 or more (*/15)');
    step = Number(stepText);
  }
  if (base === '*') return span(spec.min, wildcardMax(spec), step);
  const range = /^([^-]+)-([^-]+)$/.exec(base);
  if (!range) {
    if (stepText !== undefined) throw invalid(`a step goes on * or a range (${base}-${wildcardMax(spec)}/${step})`);
    return [valueOf(base, spec, invalid)];
  }
  const low = valueOf(range[1]!, spec, invalid);
  const high = valueOf(range[2]!, spec, invalid);
  if (low > high) throw invalid(`a range goes from low to high (for one past the end, list two: ${range[1]}-${wildcardMax(spec)},${spec.min}-${range[2]})`);
  return span(low, high, step);
}

function valueOf(text: string, spec: FieldSpec, invalid: (why: string) => ScheduleError): number {
  const named = spec.names?.indexOf(text.toUpperCase()) ?? -1;
  if (named >= 0) return spec.min + named;
  if (!/^\d{1,4}$/.test(text)) throw invalid(spec.names ? `${SYNTAX}, with the names ${spec.names[0]}–${spec.names.at(-1)}` : SYNTAX);
  const value = Number(text);
  if (value < spec.min || value > spec.max) throw invalid(`${spec.name} is ${spec.min}–${spec.max}`);
  return value;
}

const wildcardMax = (spec: FieldSpec): number => spec.starMax ?? spec.max;

function span(low: number, high: number, step: number): number[] {
  const values: number[] = [];
  for (let value = low; value <= high; value += step) values.push(value);
  return values;
}

/** Whether some month of the schedule has one of its days of month (29 February counts). */
function someMonthHasADay(schedule: CronSchedule): boolean {
  return [...schedule.months].some((month) => [...schedule.daysOfMonth].some((day) => day <= DAYS_IN_MONTH[month - 1]!));
}

/** Whether the schedule runs on this calendar day (month 1–12), by its month and day fields. */
export function runsOnDay(schedule: CronSchedule, year: number, month: number, day: number): boolean {
  if (!schedule.months.has(month)) return false;
  const onDayOfMonth = schedule.daysOfMonth.has(day);
  const onDayOfWeek = schedule.daysOfWeek.has(new Date(Date.UTC(year, month - 1, day)).getUTCDay());
  return schedule.daysEitherWay ? onDayOfMonth || onDayOfWeek : onDayOfMonth && onDayOfWeek;
}

// ---- Fire times ----------------------------------------------------------------------------------
// Local times are kept as "wall clock" milliseconds: the local date and time read as if in UTC.
// An instant's local time is the instant plus the zone's offset then.

const DAY_MS = 86_400_000;
/** How far ahead a schedule is followed: a job that does not run within it shows no next run. */
const HORIZON_DAYS = 50 * 366;
/**
 * Longer than any daylight-saving shift (2 h at most, Antarctica/Troll) and shorter than the time
 * between two shifts: a window this long holds one change of offset at most.
 */
const WINDOW_MS = 3 * 3_600_000;

/**
 * The first fire time after `after` (epoch milliseconds), by the table at the top; null when
 * there is none within the horizon. Each turn looks for the next matching local time with the
 * offset in force at `t`; a change of offset before that time moves the search to the change.
 */
export function nextFireAfter(schedule: CronSchedule, timezone: string, after: number): number | null {
  let t = Math.floor(after / 1000) * 1000 + 1000;
  for (let turn = 0; turn < 8; turn++) {
    const offset = offsetAt(timezone, t);
    const from = schedule.fixedTime ? firstLocalNotShown(timezone, t) : t + offset;
    const local = nextLocalMatch(schedule, from);
    if (local === null) return null;
    const at = local - offset;
    // Only a fixed-time job gets here: a time the clock jumped over before t runs at t.
    if (at < t) return t;
    const resume = offsetChangeBefore(timezone, t, at, offset);
    if (resume === null) return at;
    t = resume;
  }
  return null;
}

/**
 * Where to look again when the offset is not `offset` all the way from t to at, else null. A change
 * near t or near at is found to the second (times around it are skipped or repeated). One in
 * between only moves `at`: no time of the schedule falls between t and it (`at` was the first),
 * so the search goes on from a window before `at`.
 */
function offsetChangeBefore(timezone: string, t: number, at: number, offset: number): number | null {
  const nearT = Math.min(at, t + WINDOW_MS);
  if (offsetAt(timezone, nearT) !== offset) return firstChange(timezone, t, nearT);
  if (nearT === at) return null;
  const nearAt = Math.max(nearT, at - WINDOW_MS);
  if (offsetAt(timezone, nearAt) !== offset) return nearAt;
  return offsetAt(timezone, at) === offset ? null : firstChange(timezone, nearAt, at);
}

/**
 * The first local second a fixed-time job has not yet passed at instant t: one after the latest
 * the clock showed before t. Right after the clock went back that is where it was before.
 */
function firstLocalNotShown(timezone: string, t: number): number {
  const before = t - 1000;
  const offsetBefore = offsetAt(timezone, before);
  const shown = before + offsetBefore;
  const earlierOffset = offsetAt(timezone, t - WINDOW_MS);
  if (earlierOffset <= offsetBefore) return shown + 1000;
  const change = firstChange(timezone, t - WINDOW_MS, before);
  return Math.max(shown, change - 1000 + earlierOffset) + 1000;
}

/** The first whole second in (low, high] whose offset differs from low's (there is one). */
function firstChange(timezone: string, low: number, high: number): number {
  const offset = offsetAt(timezone, low);
  while (high - low > 1000) {
    const middle = low + Math.floor((high - low) / 2000) * 1000;
    if (offsetAt(timezone, middle) === offset) low = middle;
    else high = middle;
  }
  return high;
}

/** The first local time at or after `from` that the schedule names, within the horizon. */
function nextLocalMatch(schedule: CronSchedule, from: number): number | null {
  let day = Math.floor(from / DAY_MS) * DAY_MS;
  let fromSecond = Math.floor((from - day) / 1000);
  for (let days = 0; days < HORIZON_DAYS; days++, day += DAY_MS, fromSecond = 0) {
    const date = new Date(day);
    if (!runsOnDay(schedule, date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate())) continue;
    const second = firstTimeOfDay(schedule, fromSecond);
    if (second !== null) return day + second * 1000;
  }
  return null;
}

/** The first second of the day at or after `from` (a second of the day) the schedule names. */
function firstTimeOfDay(schedule: CronSchedule, from: number): number | null {
  const fromHour = Math.floor(from / 3600);
  const fromMinute = Math.floor(from / 60) % 60;
  for (const hour of schedule.hours) {
    if (hour < fromHour) continue;
    for (const minute of schedule.minutes) {
      if (hour === fromHour && minute < fromMinute) continue;
      const fromSecond = hour === fromHour && minute === fromMinute ? from % 60 : 0;
      const second = schedule.seconds.find((value) => value >= fromSecond);
      if (second !== undefined) return hour * 3600 + minute * 60 + second;
    }
  }
  return null;
}

const partsFormatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at the instant, in milliseconds (its local time minus UTC). */
export function offsetAt(timezone: string, instant: number): number {
  let format = partsFormatters.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    partsFormatters.set(timezone, format);
  }
  const parts: Record<string, number> = {};
  for (const part of format.formatToParts(instant)) if (part.type !== 'literal') parts[part.type] = Number(part.value);
  const local = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  return local - Math.floor(instant / 1000) * 1000;
}
