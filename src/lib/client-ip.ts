import { isIP } from 'node:net';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { normalizeIp, type IpMatcher } from './ip-rules.ts';

/**
 * The client address used for rate limits, lockout, audit and network rules: the first
 * X-Forwarded-For hop when the direct peer is a trusted proxy, otherwise the socket address.
 * The proxy must overwrite (not append to) a client-sent X-Forwarded-For for this to be safe.
 */
export function resolveClientIp(socketAddress: string | undefined, forwardedFor: string | undefined, trustedProxies: IpMatcher): string {
  return clientIpFrom(normalizeIp(socketAddress ?? ''), forwardedFor, trustedProxies);
}

// A connection's peer never changes, and a kept-alive connection carries many requests: its
// normalized address is worked out once (normalizing costs more than this lookup).
const peers = new WeakMap<Socket, string>();

/** resolveClientIp for a request on `socket`. */
export function clientIpOf(socket: Socket, forwardedFor: string | undefined, trustedProxies: IpMatcher): string {
  let peer = peers.get(socket);
  if (peer === undefined) {
    const address = socket.remoteAddress;
    peer = normalizeIp(address ?? '');
    if (address !== undefined) peers.set(socket, peer);
  }
  return clientIpFrom(peer, forwardedFor, trustedProxies);
}

function clientIpFrom(peer: string, forwardedFor: string | undefined, trustedProxies: IpMatcher): string {
  if (!forwardedFor || !trustedProxies.matches(peer)) return peer;
  const firstHop = normalizeIp(forwardedFor.split(',')[0] ?? '');
  return isIP(firstHop) ? firstHop : peer;
}

/**
 * Whether the request came over HTTPS: on a TLS socket, or through a trusted proxy whose
 * `X-Forwarded-Proto` (its first value) says `https`. From any other peer the header is ignored,
 * as X-Forwarded-For is.
 */
export function isHttpsRequest(socket: Socket, forwardedProto: string | undefined, trustedProxies: IpMatcher): boolean {
  if ((socket as TLSSocket).encrypted === true) return true;
  if (!forwardedProto) return false;
  const peer = peers.get(socket) ?? normalizeIp(socket.remoteAddress ?? '');
  return trustedProxies.matches(peer) && forwardedProto.split(',')[0]?.trim().toLowerCase() === 'https';
}
