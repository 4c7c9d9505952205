import { forbidden, unauthorized } from '../lib/errors.ts';
import type { EndpointDoc } from '../model/endpoint.ts';
import type { Principal } from '../model/principal.ts';

/**
 * Access types: `public` needs nothing; `authenticated` needs a valid JWT or API key; `group`
 * needs a signed-in user in one of allowedGroupIds (an API key is not a member of any group).
 */
export function accessDenial(doc: Pick<EndpointDoc, 'accessType' | 'allowedGroupIds'>, principal: Principal | undefined, authError?: string): Error | null {
  if (doc.accessType === 'public') return null;
  if (!principal) return unauthorized(authError ?? 'Authentication required');
  if (doc.accessType === 'authenticated') return null;
  if (principal.kind !== 'user') return forbidden('Forbidden: this endpoint is for members of specific groups');
  return principal.groupIds.some((id) => doc.allowedGroupIds.includes(id)) ? null : forbidden('Forbidden: this endpoint is for members of specific groups');
}
