import { readFileSync } from 'node:fs';
import { InvalidArgumentError } from 'commander';
import { isPermission, PERMISSIONS } from '../model/permissions.ts';

/**
 * Flag values checked where commander parses them: a bad value is a usage error (exit 2) with
 * the flag named, before anything is sent to the server.
 */

/** `view,manage_api` → ['view', 'manage_api']; every name must be a known permission. */
export function parsePermissions(value: string): string[] {
  const names = [...new Set(value.split(',').map((name) => name.trim()).filter(Boolean))];
  const unknown = names.filter((name) => !isPermission(name));
  if (unknown.length > 0) throw new InvalidArgumentError(`unknown permission ${unknown.map((n) => `"${n}"`).join(', ')} (known: ${PERMISSIONS.join(', ')})`);
  return names;
}

const UNITS_MS: Record<string, number> = { h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `30d`, `12h`, `2w` from now, or an ISO 8601 date / date-time; must lie in the future. */
export function parseExpiry(value: string, now = Date.now()): string {
  const relative = /^(\d{1,5})([hdw])$/.exec(value.trim());
  let at: number;
  if (relative) at = now + Number(relative[1]) * (UNITS_MS[relative[2] as string] as number);
  else if (/^\d{4}-\d\d-\d\d([T ][\d:.]+(Z|[+-]\d\d:?\d\d)?)?$/.test(value.trim())) at = Date.parse(value.trim());
  else throw new InvalidArgumentError('use an ISO date (2027-01-31, 2027-01-31T12:00:00Z) or a duration (12h, 30d, 2w)');
  if (!Number.isFinite(at)) throw new InvalidArgumentError(`"${value}" is not a valid date`);
  if (at <= now) throw new InvalidArgumentError(`"${value}" is not in the future`);
  return new Date(at).toISOString();
}

export function parsePositiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 1_000_000) throw new InvalidArgumentError('must be a positive integer');
  return Number(value);
}

/** `--header k:v`, repeatable: collects into an object (later values win). */
export function collectHeader(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const colon = value.indexOf(':');
  const name = colon > 0 ? value.slice(0, colon).trim() : '';
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new InvalidArgumentError(`"${value}" is not "Name: value"`);
  return { ...previous, [name.toLowerCase()]: value.slice(colon + 1).trim() };
}

/**
 * `--data`: inline JSON, `@file` or `@-` (stdin, read by the caller). Returns the JSON text,
 * checked to parse so that a typo is caught here and not reported by the server as a 400.
 */
export function parseData(value: string): string {
  let text = value;
  if (value.startsWith('@') && value !== '@-') {
    try {
      text = readFileSync(value.slice(1), 'utf8');
    } catch (error) {
      throw new InvalidArgumentError(`cannot read ${value.slice(1)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }
  if (value === '@-') return value;
  return checkJson(text, value.startsWith('@') ? value.slice(1) : 'the value');
}

export function checkJson(text: string, source: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    throw new InvalidArgumentError(`${source} is not valid JSON: ${(error as Error).message}`);
  }
  return text;
}

/** What `dynctl call` sends; the server's parser answers any other method with an empty 400. */
export const CALL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

/** An HTTP method of CALL_METHODS, in any letter case; upper-cased. */
export function parseMethod(value: string): string {
  const method = value.toUpperCase();
  if (!(CALL_METHODS as readonly string[]).includes(method)) {
    throw new InvalidArgumentError(`"${value}" is not an HTTP method dynctl can send (use ${CALL_METHODS.slice(0, -1).join(', ')} or ${CALL_METHODS.at(-1)})`);
  }
  return method;
}
