import { isDeepStrictEqual } from 'node:util';
import { badRequest } from '../lib/errors.ts';

/**
 * Members a resource is shown with that are not input: those the service keeps (`createdAt`,
 * `callCount`...) are dropped, and those that name or classify the resource (`_id`, `isSystem`)
 * are set aside for the caller to check against the resource they name. So the object a GET
 * returned can be sent back as it is, changed where the client changed it.
 */
export function setShownFieldsAside<F extends string>(input: unknown, named: readonly F[], kept: readonly string[]): { rest: unknown; shown: Partial<Record<F, unknown>> } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return { rest: input, shown: {} };
  const rest: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  const shown: Partial<Record<F, unknown>> = {};
  for (const field of named) {
    if (Object.hasOwn(rest, field)) shown[field] = rest[field];
    delete rest[field];
  }
  for (const field of kept) delete rest[field];
  return { rest, shown };
}

/** A 400 when a set-aside member differs from the resource's own value (it cannot be changed). */
export function assertShownUnchanged<F extends string>(shown: Partial<Record<F, unknown>>, current: Record<F, unknown>): void {
  for (const field of Object.keys(shown) as F[]) {
    if (!isDeepStrictEqual(shown[field], current[field])) throw badRequest(`Invalid request body: ${field} cannot be changed`, [{ field, message: 'cannot be changed' }]);
  }
}

/** A 400 for an `_id` given on create: the service assigns it. */
export function assertNoIdOnCreate(shown: { _id?: unknown }): void {
  if (shown._id !== undefined) throw badRequest('Invalid request body: _id is assigned by the service', [{ field: '_id', message: 'is assigned by the service' }]);
}
