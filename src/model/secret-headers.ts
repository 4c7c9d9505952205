// Header values that are credentials for the target — a webhook's or a cron HTTP action's
// `Authorization`, `X-Api-Key`, `Cookie` — are stored as given and sent with every request, but
// never shown again: API responses, plans, exports and files written back show SECRET_MASK in
// their place. A write that sends SECRET_MASK back for such a header keeps the value stored for
// it, so a form (or a file) that shows what it was given can be saved as it is.
import { badRequest } from '../lib/errors.ts';

export const SECRET_MASK = '(secret)';

/**
 * A credential's header, by name (any letter case): Authorization and Proxy-Authorization,
 * Cookie, and every name with `auth`, `token`, `secret`, `key`, `passw`, `signature`,
 * `credential` or `session` in it. Masking a name that is not one (an `Idempotency-Key`) costs
 * only its display; showing one that is would give the credential away.
 */
const SECRET_NAME = /auth|token|secret|key|passw|signature|credential|session|cookie/i;

export function isSecretHeader(name: string): boolean {
  return SECRET_NAME.test(name);
}

/**
 * The headers as they may be shown: each secret header's value replaced by SECRET_MASK, except
 * values `shown` lets through (a project's `${env:…}` placeholder names a secret, it is not one).
 * The same object when nothing is masked.
 */
export function maskSecretHeaders(headers: Readonly<Record<string, string>>, shown: (value: string) => boolean = () => false): Record<string, string> {
  let masked: Record<string, string> | null = null;
  for (const [name, value] of Object.entries(headers)) {
    if (!isSecretHeader(name) || value === SECRET_MASK || shown(value)) continue;
    masked ??= { ...headers };
    masked[name] = SECRET_MASK;
  }
  return masked ?? (headers as Record<string, string>);
}

/** The value stored for a header of this name, letter case ignored (as HTTP does). */
function storedValueOf(stored: Readonly<Record<string, string>> | undefined, name: string): string | undefined {
  if (!stored) return undefined;
  const wanted = name.toLowerCase();
  for (const [storedName, value] of Object.entries(stored)) if (storedName.toLowerCase() === wanted) return value;
  return undefined;
}

/** Each secret header sent as SECRET_MASK given the value stored for it, read from `current`'s. */
export function withStoredSecrets(headers: Readonly<Record<string, string>>, current: Readonly<Record<string, string>> | undefined): Record<string, string> {
  let kept: Record<string, string> | null = null;
  for (const [name, value] of Object.entries(headers)) {
    if (value !== SECRET_MASK || !isSecretHeader(name)) continue;
    const stored = storedValueOf(current, name);
    if (stored === undefined) continue;
    kept ??= { ...headers };
    kept[name] = stored;
  }
  return kept ?? (headers as Record<string, string>);
}

/** Why a `(secret)` with nothing stored behind it is refused (what to send instead). */
export const NOTHING_TO_KEEP = `${SECRET_MASK} keeps the value stored for this header, and none is stored: send the value (in a project, a placeholder such as \${env:DYN_TOKEN})`;

/** The secret headers whose value is SECRET_MASK, by name. */
export function maskedSecretHeaders(headers: Readonly<Record<string, string>>): string[] {
  return Object.entries(headers)
    .filter(([name, value]) => value === SECRET_MASK && isSecretHeader(name))
    .map(([name]) => name);
}

/**
 * The headers a write stores: a secret header sent as SECRET_MASK keeps the value stored for it;
 * one with nothing stored to keep is a 400 naming it (`field` is where the headers are, e.g.
 * `action.headers`), as a mask must never be sent to a target as if it were the credential.
 */
export function keepSecretHeaders(headers: Readonly<Record<string, string>>, current: Readonly<Record<string, string>> | undefined, field: string): Record<string, string> {
  const kept = withStoredSecrets(headers, current);
  const [name] = maskedSecretHeaders(kept);
  if (name !== undefined) throw badRequest(`Invalid request body: ${field}.${name}: ${NOTHING_TO_KEEP}`, [{ field: `${field}.${name}`, message: NOTHING_TO_KEEP }]);
  return kept;
}
