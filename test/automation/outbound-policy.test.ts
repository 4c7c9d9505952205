import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { blockedReason } from '../../src/automation/blocked-addresses.ts';
import { OutboundPolicy, OutboundRefusedError, OutboundRequestError } from '../../src/automation/outbound-policy.ts';
import { compileHostPortRules, InvalidHostPortRuleError } from '../../src/lib/host-port-rules.ts';

// Every connection these tests make goes to a listener on 127.0.0.1; refused targets must get none.
let server: Server;
let port: number;
let connections = 0;
let requests: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (req.url === '/big') return res.end('x'.repeat(10_000));
    if (req.url === '/to-blocked') {
      res.writeHead(302, { location: `http://0x7f000001:${port}/landed` });
      return res.end();
    }
    if (req.url === '/to-self') {
      res.writeHead(303, { location: '/landed' });
      return res.end();
    }
    if (req.url === '/slow') return setTimeout(() => res.end('late'), 3000);
    res.setHeader('content-type', 'text/plain');
    res.end(`hello ${req.method}`);
  });
  server.on('connection', () => connections++);
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  connections = 0;
  requests = [];
});

const blockedSpellings = (p: number) => [
  `http://127.0.0.1:${p}/`,
  `http://2130706433:${p}/`,
  `http://0x7f000001:${p}/`,
  `http://0177.0.0.1:${p}/`,
  `http://127.1:${p}/`,
  `http://[::ffff:127.0.0.1]:${p}/`,
  `http://[::ffff:7f00:1]:${p}/`,
  `http://[::1]:${p}/`,
  `http://0:${p}/`,
  `http://localhost:${p}/`,
  `http://LOCALHOST.:${p}/`,
  `http://api.localhost:${p}/`,
  `http://user@127.0.0.1:${p}/`,
  `http://user@127.0.0.1@evil.invalid:${p}/`,
  `http://user:pw@example.com:${p}/`,
];

describe('the outbound policy', () => {
  const policy = new OutboundPolicy([]);

  it.each(blockedSpellings(1))('refuses %s at save time', async (url) => {
    await expect(policy.checkUrl(url)).rejects.toThrow(OutboundRefusedError);
  });

  it.each(['ftp://example.com/', 'file:///etc/passwd', 'gopher://example.com/', 'not a url', 'http://'])('refuses %s (only http and https)', async (url) => {
    await expect(policy.checkUrl(url)).rejects.toThrow(OutboundRefusedError);
  });

  it.each(['http://*:8080/', 'https://*.example.com/', 'http://a$b.example/'])('refuses %s: not a host name a lookup could find', async (url) => {
    await expect(policy.checkUrl(url)).rejects.toThrow(/is not a host name or an IP address/);
  });

  it('accepts public addresses', async () => {
    await expect(policy.checkUrl('https://93.184.215.14/hook')).resolves.toBeUndefined();
    await expect(policy.checkUrl('http://[2606:4700::1111]/')).resolves.toBeUndefined();
  });

  it('names the reason and how to allow the target', async () => {
    await expect(policy.checkUrl('http://2130706433:8080/x')).rejects.toThrow(
      'http://127.0.0.1:8080 is refused: 127.0.0.1 is a loopback address (add "127.0.0.1:8080" to outboundAllowList to allow it)',
    );
  });

  it.each(blockedSpellings(0))('sends nothing to a refused target: %s', async (template) => {
    const url = template.replace(':0/', `:${port}/`);
    await expect(policy.request({ url, method: 'GET', timeoutMs: 2000, maxBodyBytes: 100 })).rejects.toThrow(OutboundRefusedError);
    expect(connections).toBe(0);
  });

  it('reaches an allow-listed loopback target and keeps its status and body', async () => {
    const allowed = new OutboundPolicy([`127.0.0.1:${port}`]);
    await expect(allowed.checkUrl(`http://127.0.0.1:${port}/x`)).resolves.toBeUndefined();
    const response = await allowed.request({ url: `http://127.0.0.1:${port}/x`, method: 'POST', body: '{}', timeoutMs: 2000, maxBodyBytes: 100 });
    expect(response).toMatchObject({ status: 200, body: 'hello POST', truncated: false });
  });

  it('an allow-listed address also allows the other spellings of it', async () => {
    const allowed = new OutboundPolicy([`127.0.0.1:${port}`]);
    expect((await allowed.request({ url: `http://2130706433:${port}/`, method: 'GET', timeoutMs: 2000, maxBodyBytes: 100 })).status).toBe(200);
  });

  it('an allow-list entry is for its port only', async () => {
    const allowed = new OutboundPolicy([`127.0.0.1:${port + 1 > 65535 ? port - 1 : port + 1}`]);
    await expect(allowed.request({ url: `http://127.0.0.1:${port}/`, method: 'GET', timeoutMs: 2000, maxBodyBytes: 100 })).rejects.toThrow(OutboundRefusedError);
    expect(connections).toBe(0);
  });

  it('an origin entry allows that scheme only', async () => {
    const allowed = new OutboundPolicy([`https://127.0.0.1:${port}`]);
    await expect(allowed.checkUrl(`http://127.0.0.1:${port}/`)).rejects.toThrow(OutboundRefusedError);
    await expect(allowed.checkUrl(`https://127.0.0.1:${port}/`)).resolves.toBeUndefined();
  });

  it('does not follow a redirect to a refused target', async () => {
    // The first hop is allowed by its name (localhost:port) only; the redirect names the same server by a blocked address.
    const allowed = new OutboundPolicy([`localhost:${port}`]);
    await expect(allowed.request({ url: `http://localhost:${port}/to-blocked`, method: 'GET', timeoutMs: 2000, maxBodyBytes: 100 })).rejects.toThrow(
      /0x7f000001|127\.0\.0\.1.*refused/,
    );
    expect(requests).toEqual(['GET /to-blocked']);
  });

  it('follows a redirect to an allowed target, a 303 as a GET', async () => {
    const allowed = new OutboundPolicy([`127.0.0.1:${port}`]);
    const response = await allowed.request({ url: `http://127.0.0.1:${port}/to-self`, method: 'POST', body: 'x', timeoutMs: 2000, maxBodyBytes: 100 });
    expect(response).toMatchObject({ status: 200, body: 'hello GET', url: `http://127.0.0.1:${port}/landed` });
    expect(requests).toEqual(['POST /to-self', 'GET /landed']);
  });

  it('keeps at most maxBodyBytes of the response', async () => {
    const allowed = new OutboundPolicy([`127.0.0.1:${port}`]);
    const response = await allowed.request({ url: `http://127.0.0.1:${port}/big`, method: 'GET', timeoutMs: 2000, maxBodyBytes: 4096 });
    expect(response.body.length).toBe(4096);
    expect(response.truncated).toBe(true);
  });

  it('gives up after timeoutMs', async () => {
    const allowed = new OutboundPolicy([`127.0.0.1:${port}`]);
    const started = Date.now();
    await expect(allowed.request({ url: `http://127.0.0.1:${port}/slow`, method: 'GET', timeoutMs: 300, maxBodyBytes: 100 })).rejects.toThrow(
      new OutboundRequestError('Timed out after 300 ms'),
    );
    expect(Date.now() - started).toBeLessThan(2500);
  });
});

describe('blocked addresses', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['10.1.2.3', 'a private address'],
    ['172.31.255.255', 'a private address'],
    ['192.168.0.1', 'a private address'],
    ['100.100.100.200', 'a carrier-grade NAT address'],
    ['169.254.169.254', 'a link-local (cloud metadata) address'],
    ['0.0.0.0', 'an unspecified ("this network") address'],
    ['::1', 'a loopback address'],
    ['::', 'an unspecified address'],
    ['::ffff:169.254.169.254', 'a link-local (cloud metadata) address'],
    ['::ffff:a9fe:a9fe', 'a link-local (cloud metadata) address'],
    ['64:ff9b::7f00:1', 'a loopback address'],
    ['2002:7f00:1::', 'a loopback address'],
    ['fd00:ec2::254', 'a private (unique local) address'],
    ['fe80::1', 'a link-local address'],
  ])('%s is %s', (address, reason) => {
    expect(blockedReason(address)).toBe(reason);
  });

  it.each(['93.184.215.14', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8'])('%s is public', (address) => {
    expect(blockedReason(address)).toBeNull();
  });
});

describe('outbound allow-list entries', () => {
  it('reads host:port and origins with the URL parser', () => {
    const rules = compileHostPortRules(['2130706433:80', 'https://hooks.example.com', 'http://[::1]:8080']);
    expect(rules.matches({ protocol: 'https:', hostname: '127.0.0.1', port: 80 })).toBe(true);
    expect(rules.matches({ protocol: 'https:', hostname: 'hooks.example.com', port: 443 })).toBe(true);
    expect(rules.matches({ protocol: 'http:', hostname: 'hooks.example.com', port: 443 })).toBe(false);
    expect(rules.matches({ protocol: 'http:', hostname: '[::1]', port: 8080 })).toBe(true);
  });

  it.each(['localhost', 'http://host/path', 'ftp://host:21', 'user@host:80', 'host:99999', '', '*:8080', '*.example.com:443', 'https://*'])('refuses %j', (entry) => {
    expect(() => compileHostPortRules([entry])).toThrow(InvalidHostPortRuleError);
  });
});
