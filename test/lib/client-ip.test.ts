import { once } from 'node:events';
import { createConnection, createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { clientIpOf, resolveClientIp } from '../../src/lib/client-ip.ts';
import { compileIpRules, PRIVATE_AND_LOOPBACK_RANGES } from '../../src/lib/ip-rules.ts';

const trusted = compileIpRules(PRIVATE_AND_LOOPBACK_RANGES);

describe('resolveClientIp', () => {
  it.each([
    ['a trusted IPv4 peer', '127.0.0.1', '203.0.113.5', '203.0.113.5'],
    ['a trusted peer, several hops: only the first counts', '10.0.0.2', '203.0.113.5, 198.51.100.1, 10.0.0.1', '203.0.113.5'],
    ['a trusted IPv6 peer', '::1', '2001:db8::7', '2001:db8::7'],
    ['a trusted peer seen as IPv4-mapped IPv6', '::ffff:192.168.1.1', '203.0.113.5', '203.0.113.5'],
    ['a first hop with spaces', '127.0.0.1', '  198.51.100.7  , 10.0.0.1', '198.51.100.7'],
    ['a first hop written IPv4-mapped', '127.0.0.1', '::ffff:198.51.100.7', '198.51.100.7'],
  ])('uses the first X-Forwarded-For hop from %s', (_name, peer, forwardedFor, expected) => {
    expect(resolveClientIp(peer, forwardedFor, trusted)).toBe(expected);
  });

  it.each([
    ['an untrusted IPv4 peer', '203.0.113.9', '198.51.100.1'],
    ['an untrusted IPv6 peer', '2001:db8::9', '198.51.100.1'],
    ['an untrusted peer claiming a private address', '8.8.8.8', '10.0.0.1'],
  ])('ignores X-Forwarded-For from %s and uses the socket address', (_name, peer, forwardedFor) => {
    expect(resolveClientIp(peer, forwardedFor, trusted)).toBe(peer);
  });

  it.each(['garbage', '', ' , 203.0.113.5', '203.0.113.5:443', '[2001:db8::1]', 'unknown', '999.1.1.1', '<script>'])(
    'ignores the unusable first hop %j from a trusted peer and uses the socket address',
    (forwardedFor) => {
      expect(resolveClientIp('127.0.0.1', forwardedFor, trusted)).toBe('127.0.0.1');
    },
  );

  it('uses the socket address when there is no X-Forwarded-For', () => {
    expect(resolveClientIp('127.0.0.1', undefined, trusted)).toBe('127.0.0.1');
    expect(resolveClientIp('203.0.113.9', undefined, trusted)).toBe('203.0.113.9');
  });

  it('reports an IPv4-mapped socket address as plain IPv4', () => {
    expect(resolveClientIp('::ffff:203.0.113.9', undefined, trusted)).toBe('203.0.113.9');
  });

  it('trusts nobody when the trusted-proxy list is empty', () => {
    expect(resolveClientIp('127.0.0.1', '203.0.113.5', compileIpRules([]))).toBe('127.0.0.1');
  });

  it('an unknown socket address stays empty rather than trusting the header', () => {
    expect(resolveClientIp(undefined, '203.0.113.5', trusted)).toBe('');
  });
});

// clientIpOf keeps a connection's peer address from its first request; the header and the
// trusted-proxy list are still read on every request of the connection.
describe('clientIpOf', () => {
  it('reads X-Forwarded-For and the trusted proxies anew on each request of one connection', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const client = createConnection(port, '127.0.0.1');
    const [socket] = await accepted;
    try {
      expect(clientIpOf(socket, undefined, trusted)).toBe('127.0.0.1');
      expect(clientIpOf(socket, '203.0.113.5', trusted)).toBe('203.0.113.5');
      expect(clientIpOf(socket, '203.0.113.5', compileIpRules([]))).toBe('127.0.0.1');
      expect(clientIpOf(socket, 'garbage', trusted)).toBe('127.0.0.1');
      expect(clientIpOf(socket, undefined, trusted)).toBe('127.0.0.1');
    } finally {
      client.destroy();
      socket.destroy();
      server.close();
    }
  });
});
