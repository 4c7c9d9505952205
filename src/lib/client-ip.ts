import { isIP } from 'node:net';
import { normalizeIp, type IpMatcher } from './ip-rules.ts';

/**
 * The client address used for rate limits, lockout, audit and network rules: the first
 * X-Forwarded-For hop when the direct peer is a trusted proxy, otherwise the socket address.
 * The proxy must overwrite (not append to) a client-sent X-Forwarded-For for this to be safe.
 */
export function resolveClientIp(socketAddress: string | undefined, forwardedFor: string | undefined, trustedProxies: IpMatcher): string {
  const peer = normalizeIp(socketAddress ?? '');
  if (!forwardedFor || !trustedProxies.matches(peer)) return peer;
  const firstHop = normalizeIp(forwardedFor.split(',')[0] ?? '');
  return isIP(firstHop) ? firstHop : peer;
}
