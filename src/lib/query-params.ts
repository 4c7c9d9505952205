// Reading query strings, for management routes and dynamic endpoints alike. Unknown and
// repeated parameters are refused (400), so a typo or an operator-shaped parameter such as
// `search[$ne]=` never silently widens a query.
import { badRequest } from './errors.ts';

export type RawQuery = Record<string, string | string[] | undefined>;

export interface ReadQueryOptions {
  /** Accepts names beyond `allowed` (list filters named after an endpoint's fields). */
  accepts?: (name: string) => boolean;
  /** Longest value taken (default 1000 characters). */
  maxLength?: number;
}

const DEFAULTS: ReadQueryOptions = Object.freeze({});

/** The query's parameters, each given once, all of them allowed. */
export function readQuery(query: RawQuery, allowed: readonly string[], options: ReadQueryOptions = DEFAULTS): Record<string, string> {
  const out: Record<string, string> = {};
  const maxLength = options.maxLength ?? 1000;
  // for…in rather than Object.entries: no array for the common empty query (every GET by id).
  for (const name in query) {
    if (!Object.hasOwn(query, name)) continue;
    const value = query[name];
    if (value === undefined) continue;
    const shown = name.slice(0, 64);
    if (!allowed.includes(name) && !options.accepts?.(name)) throw badRequest(`Unknown query parameter "${shown}"`, [{ field: shown, message: 'is not an allowed query parameter' }]);
    if (typeof value !== 'string') throw badRequest(`Query parameter "${shown}" must be given once`, [{ field: shown, message: 'must be given once' }]);
    if (value.length > maxLength) throw badRequest(`Query parameter "${shown}" is too long`, [{ field: shown, message: `must be at most ${maxLength} characters` }]);
    // SQLite would read a bound text only up to a NUL, so `search=%00x` would match everything.
    if (value.includes('\0')) throw badRequest(`Query parameter "${shown}" must not contain NUL characters`, [{ field: shown, message: 'must not contain NUL characters' }]);
    out[name] = value;
  }
  return out;
}

/** A page number or size: 1 to 999999999; absent or empty gives `fallback`. */
export function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (/^\d{10,}$/.test(raw)) throw badRequest(`Query parameter "${name}" must be at most 999999999`, [{ field: name, message: 'must be at most 999999999' }]);
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1) throw badRequest(`Query parameter "${name}" must be a positive integer`, [{ field: name, message: 'must be a positive integer' }]);
  return Number(raw);
}
