import { forbidden } from '../lib/errors.ts';
import type { Permission } from './permissions.ts';

/**
 * Who is calling: a signed-in user or an API key, each with the permissions it acts with. A
 * user's `sessionId` is the session their access token belongs to (what logout ends).
 */
export type Principal =
  | { kind: 'user'; userId: string; login: string; groupIds: string[]; permissions: ReadonlySet<Permission>; sessionId?: string }
  | { kind: 'apiKey'; keyId: string; name: string; permissions: ReadonlySet<Permission>; /** ISO 8601; null or absent: it never expires. */ expiresAt?: string | null };

export function hasAnyPermission(principal: Principal, wanted: readonly Permission[]): boolean {
  return wanted.some((p) => principal.permissions.has(p));
}

/** A caller cannot hand out (to a key, a group or a user) permissions it does not hold itself. */
export function missingPermissions(principal: Principal, wanted: readonly string[]): string[] {
  return [...new Set(wanted.filter((p) => !principal.permissions.has(p as Permission)))];
}

/**
 * 403 when the caller lacks any of `permissions`: what it would grant, or what the user, group
 * or key it would change or remove holds. `what` completes "You cannot … permissions you do not
 * have", e.g. "grant" or "change a group holding".
 */
export function assertHolds(principal: Principal, permissions: readonly string[], what: string): void {
  const missing = missingPermissions(principal, permissions);
  if (missing.length > 0) throw forbidden(`You cannot ${what} permissions you do not have: ${missing.join(', ')}`);
}

export function principalUserId(principal: Principal | null | undefined): string | null {
  return principal?.kind === 'user' ? principal.userId : null;
}
