import type { FieldFilter, FieldType } from './field-type.ts';

/**
 * ISO 8601 extended format: a date (`2026-11-21`) or a date-time with minutes, optional seconds
 * and fraction, and an optional zone (`Z` or `±hh:mm`). A date-time without a zone is a local
 * time, which ISO 8601 allows. Calendar dates are checked (no `2026-02-30`); leap seconds are not accepted.
 */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))?)?$/;

export function isIsoDateTime(value: string): boolean {
  const match = ISO_8601.exec(value);
  if (!match) return false;
  const [year, month, day, hour = 0, minute = 0, second = 0, offsetHours = 0, offsetMinutes = 0] = match
    .slice(1)
    .map((part) => (part === undefined ? undefined : Number(part)));
  if (year === undefined || month === undefined || day === undefined) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysInMonth = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  return day >= 1 && day <= daysInMonth
    && hour <= 23 && minute <= 59 && second <= 59 && offsetHours <= 23 && offsetMinutes <= 59;
}

/** What a filter's value must be, as its 400 says. */
export const ISO_DATE_PROBLEM = 'an ISO 8601 date (2026-11-21) or date-time (2026-11-21T08:30:00Z)';

// Filters compare the text as written: record values are stored as the strings clients sent, so
// a value is held to the format values are written in (`Sep 1 2026` or a lower-case `t` would
// be compared as text and match the wrong records).
const DATETIME_FILTER: FieldFilter = {
  operators: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'exists'],
  read: (raw) => (isIsoDateTime(raw) ? raw : { problem: ISO_DATE_PROBLEM }),
};

export const datetimeType: FieldType = {
  name: 'datetime',
  expected: 'an ISO 8601 date or date-time string',
  options: { properties: {} },
  formats: { 'iso-date-time': isIsoDateTime },
  toJsonSchema: () => ({ type: 'string', format: 'iso-date-time' }),
  // Not `format: date-time`: that is RFC 3339 (seconds and a zone required), and values come back
  // as written, so a date (`2026-11-21`) or a local time (`2026-11-21T08:30`) would fail a client
  // validating the response. The pattern is this type's own (calendar checks aside); it reads the
  // same in OpenAPI 3.0 and 3.1.
  openApi: () => ({ type: 'string', pattern: ISO_8601.source, example: '2026-01-01T00:00:00.000Z', description: 'ISO 8601 date (2026-11-21) or date-time (2026-11-21T08:30:00Z; seconds, fraction and zone optional)' }),
  exampleValue: () => '2026-01-01T00:00:00.000Z',
  filter: () => DATETIME_FILTER,
  indexedAs: 'text',
};
