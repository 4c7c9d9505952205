import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * Network rules of dynamic endpoints over real HTTP. The test server is reached from 127.0.0.1,
 * a trusted proxy by default, so `X-Forwarded-For` sets the client IP. The domain comes from
 * Origin, else Referer, else Host. Rules are checked before the access type, on dynamic
 * endpoints only.
 */
let t: TestServer;
let admin: string;

const DENIED = { success: false, error: 'Forbidden: network access denied' };

let seq = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${(seq++).toString(36)}`;

interface NetworkAccess {
  enabled?: boolean;
  allowedDomains?: string[];
  allowedIpRanges?: string[];
}

interface From {
  ip?: string;
  origin?: string;
  referer?: string;
  token?: string;
}

/** A fresh public GET endpoint with the given definition fields; returns its path and id. */
async function endpoint(fields: Record<string, unknown> = {}): Promise<{ path: string; id: string }> {
  const path = `/api/net/${unique('e')}`;
  const res = await t.api('POST', '/api/endpoints', {
    token: admin,
    body: { name: unique('net-'), path, method: 'GET', accessType: 'public', schema: {}, ...fields },
  });
  if (res.status !== 201) throw new Error(`endpoint create failed: ${res.status} ${res.text}`);
  return { path, id: res.body.data._id };
}

async function endpointGroup(networkAccess: NetworkAccess): Promise<string> {
  const res = await t.api('POST', '/api/endpoints/groups', { token: admin, body: { name: unique('netgroup-'), networkAccess } });
  if (res.status !== 201) throw new Error(`endpoint group create failed: ${res.status} ${res.text}`);
  return res.body.data._id;
}

async function call(path: string, from: From = {}) {
  const headers: Record<string, string> = {};
  if (from.ip) headers['x-forwarded-for'] = from.ip;
  if (from.origin) headers.origin = from.origin;
  if (from.referer) headers.referer = from.referer;
  return t.api('GET', path, { headers, ...(from.token ? { token: from.token } : {}) });
}

async function status(path: string, from: From = {}): Promise<number> {
  return (await call(path, from)).status;
}

/** fetch() cannot set Host; node:http can. */
function callWithHost(path: string, host: string): Promise<{ status: number; body: unknown }> {
  const url = new URL(t.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname: url.hostname, port: url.port, path, method: 'GET', headers: { host } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
});

afterAll(async () => {
  await t.close();
});

describe('blocking', () => {
  it('a blocked call is a 403 in the error shape', async () => {
    const { path } = await endpoint({ networkAccess: { enabled: true, allowedIpRanges: ['203.0.113.9'] } });
    const res = await call(path, { ip: '198.51.100.1' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(DENIED);
  });

  it('network rules are checked before the access type: anonymous and blocked is 403, not 401', async () => {
    const { path } = await endpoint({ accessType: 'authenticated', networkAccess: { enabled: true, allowedIpRanges: ['203.0.113.9'] } });
    const blocked = await call(path, { ip: '198.51.100.1' });
    expect(blocked.status).toBe(403);
    expect(blocked.body).toEqual(DENIED);
    // Even with valid credentials, the network rules still apply.
    expect((await call(path, { ip: '198.51.100.1', token: admin })).status).toBe(403);
    // From an allowed address, the access type decides.
    expect((await call(path, { ip: '203.0.113.9' })).status).toBe(401);
    expect((await call(path, { ip: '203.0.113.9', token: admin })).status).toBe(200);
  });

  it('network rules and access come before the body: a blocked or anonymous caller gets 403 / 401 whatever it sent', async () => {
    const { path } = await endpoint({ method: 'POST', accessType: 'authenticated', networkAccess: { enabled: true, allowedIpRanges: ['203.0.113.9'] } });
    const send = (ip: string, body: string, type: string, token?: string) =>
      t.api('POST', path, { rawBody: body, headers: { 'x-forwarded-for': ip, 'content-type': type, ...(token ? { authorization: `Bearer ${token}` } : {}) } });
    const bodies: Array<[string, string]> = [['{bad', 'application/json'], ['x=1', 'application/x-www-form-urlencoded'], [`{"deep":${'['.repeat(40)}${']'.repeat(40)}}`, 'application/json']];
    for (const [body, type] of bodies) {
      const blocked = await send('198.51.100.1', body, type, admin);
      expect(blocked.status, `${type} ${body}`).toBe(403);
      expect(blocked.body).toEqual(DENIED);
      expect((await send('203.0.113.9', body, type)).status).toBe(401);
    }
    // Admitted, the caller is told what is wrong with its body.
    const malformed = await send('203.0.113.9', '{bad', 'application/json', admin);
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ success: false, error: 'Malformed JSON body' });
    expect((await send('203.0.113.9', 'x=1', 'application/x-www-form-urlencoded', admin)).status).toBe(415);
    expect((await send('203.0.113.9', '{}', 'application/json', admin)).status).toBe(201);
  });

  it('management routes are not subject to network rules', async () => {
    const groupId = await endpointGroup({ enabled: true, allowedIpRanges: ['203.0.113.9'], allowedDomains: ['app.example.com'] });
    const { path, id } = await endpoint({ groupId, networkAccess: { enabled: true, allowedIpRanges: ['203.0.113.9'] } });
    expect(await status(path, { ip: '198.51.100.1', origin: 'http://evil.test' })).toBe(403);
    const headers = { 'x-forwarded-for': '198.51.100.1', origin: 'http://evil.test' };
    expect((await t.api('GET', '/api/health', { headers })).status).toBe(200);
    expect((await t.api('GET', `/api/endpoints/${id}`, { token: admin, headers })).status).toBe(200);
    expect((await t.api('GET', `/api/endpoints/groups/${groupId}`, { token: admin, headers })).status).toBe(200);
    expect((await t.api('GET', '/api/endpoints', { token: admin, headers })).status).toBe(200);
  });

  it('the /test route skips network rules unless applyNetworkAccess', async () => {
    const { id } = await endpoint({ networkAccess: { enabled: true, allowedIpRanges: ['203.0.113.9'] } });
    const skipped = await t.api('POST', `/api/endpoints/${id}/test`, { token: admin, body: { clientIp: '198.51.100.1' } });
    expect(skipped.status).toBe(200);
    expect(skipped.body.data.status).toBe(200);
    const applied = await t.api('POST', `/api/endpoints/${id}/test`, { token: admin, body: { clientIp: '198.51.100.1', applyNetworkAccess: true } });
    expect(applied.body.data.status).toBe(403);
    expect(applied.body.data.body).toEqual(DENIED);
    const allowed = await t.api('POST', `/api/endpoints/${id}/test`, { token: admin, body: { clientIp: '203.0.113.9', applyNetworkAccess: true } });
    expect(allowed.body.data.status).toBe(200);
  });

  it('invalid rules are a 400 when saved, on endpoints and endpoint groups', async () => {
    const base = { name: unique('bad-'), path: `/api/net/${unique('bad')}`, method: 'GET', accessType: 'public', schema: {} };
    for (const networkAccess of [
      { enabled: true, allowedIpRanges: ['999.1.1.1'] },
      { enabled: true, allowedIpRanges: ['10.0.0.0/33'] },
      { enabled: true, allowedIpRanges: ['2001:db8::/129'] },
      { enabled: true, allowedDomains: ['http://example.com'] },
      { enabled: true, allowedDomains: ['*.'] },
    ]) {
      const res = await t.api('POST', '/api/endpoints', { token: admin, body: { ...base, networkAccess } });
      expect(res.status, JSON.stringify(networkAccess)).toBe(400);
      expect(res.body.success).toBe(false);
      const group = await t.api('POST', '/api/endpoints/groups', { token: admin, body: { name: unique('badgroup-'), networkAccess } });
      expect(group.status, JSON.stringify(networkAccess)).toBe(400);
    }
  });
});

describe('client IP rules', () => {
  it('X-Forwarded-For from the trusted loopback peer sets the client IP', async () => {
    const { path } = await endpoint({ networkAccess: { enabled: true, allowedIpRanges: ['203.0.113.9'] } });
    expect(await status(path, { ip: '203.0.113.9' })).toBe(200);
    expect(await status(path, { ip: '203.0.113.9, 10.0.0.1' })).toBe(200); // the first hop counts
    expect(await status(path, { ip: '203.0.113.10' })).toBe(403);
    expect(await status(path)).toBe(403); // 127.0.0.1 itself
  });

  it('the socket address is the client IP without X-Forwarded-For', async () => {
    const { path } = await endpoint({ networkAccess: { enabled: true, allowedIpRanges: ['127.0.0.1'] } });
    expect(await status(path)).toBe(200);
    expect(await status(path, { ip: '203.0.113.9' })).toBe(403);
  });

  it('IPv4 CIDR ranges', async () => {
    const { path } = await endpoint({ networkAccess: { enabled: true, allowedIpRanges: ['203.0.113.0/24'] } });
    expect(await status(path, { ip: '203.0.113.1' })).toBe(200);
    expect(await status(path, { ip: '203.0.113.254' })).toBe(200);
    expect(await status(path, { ip: '203.0.114.1' })).toBe(403);
  });

  it('IPv6 addresses, in any spelling', async () => {
    const { path } = await endpoint({ networkAccess: { enabled: true, allowedIpRanges: ['2001:db8::5'] } });
    expect(await status(path, { ip: '2001:db8::5' })).toBe(200);
    expect(await status(path, { ip: '2001:DB8:0:0:0:0:0:5' })).toBe(200);
    expect(await status(path, { ip: '2001:db8::6' })).toBe(403);
  });

  it('IPv6 CIDR ranges', async () => {
    const { path } = await endpoint({ networkAccess: { enabled: true, allowedIpRanges: ['2001:db8::/32'] } });
    expect(await status(path, { ip: '2001:db8::5' })).toBe(200);
    expect(await status(path, { ip: '2001:db8:ffff::1' })).toBe(200);
    expect(await status(path, { ip: '2001:db9::1' })).toBe(403);
    expect(await status(path, { ip: '203.0.113.9' })).toBe(403);
  });

  it('an IPv4-mapped IPv6 client matches IPv4 rules', async () => {
    const { path } = await endpoint({ networkAccess: { enabled: true, allowedIpRanges: ['10.0.0.0/8'] } });
    expect(await status(path, { ip: '::ffff:10.0.0.1' })).toBe(200);
    expect(await status(path, { ip: '10.200.0.1' })).toBe(200);
    expect(await status(path, { ip: '::ffff:11.0.0.1' })).toBe(403);
  });

  it('an IPv4 client matches an IPv4-mapped rule', async () => {
    const { path } = await endpoint({ networkAccess: { enabled: true, allowedIpRanges: ['::ffff:10.0.0.0/104'] } });
    expect(await status(path, { ip: '10.1.2.3' })).toBe(200);
    expect(await status(path, { ip: '::ffff:10.1.2.3' })).toBe(200);
    expect(await status(path, { ip: '11.1.2.3' })).toBe(403);
  });

  it('a garbage X-Forwarded-For falls back to the peer address', async () => {
    const { path } = await endpoint({ networkAccess: { enabled: true, allowedIpRanges: ['203.0.113.9'] } });
    expect(await status(path, { ip: 'not-an-ip' })).toBe(403);
  });
});

describe('domain rules', () => {
  it('matches the Origin exactly', async () => {
    const { path } = await endpoint({ networkAccess: { enabled: true, allowedDomains: ['app.example.com'] } });
    expect(await status(path, { origin: 'https://app.example.com' })).toBe(200);
    expect(await status(path, { origin: 'http://APP.example.com:8080' })).toBe(200);
    expect(await status(path, { origin: 'https://other.example.com' })).toBe(403);
    expect(await status(path, { origin: 'https://app.example.com.evil.test' })).toBe(403);
    expect(await status(path, { origin: 'https://example.com' })).toBe(403);
  });

  it('Origin first, then Referer, then Host', async () => {
    const { path } = await endpoint({ networkAccess: { enabled: true, allowedDomains: ['app.example.com'] } });
    // Referer when there is no Origin.
    expect(await status(path, { referer: 'https://app.example.com/some/page?x=1' })).toBe(200);
    expect(await status(path, { referer: 'https://evil.test/page' })).toBe(403);
    // Origin wins over Referer, both ways.
    expect(await status(path, { origin: 'https://evil.test', referer: 'https://app.example.com/page' })).toBe(403);
    expect(await status(path, { origin: 'https://app.example.com', referer: 'https://evil.test/page' })).toBe(200);
    // Host when neither is sent (the test server's own Host is 127.0.0.1:port).
    expect(await status(path)).toBe(403);
    expect((await callWithHost(path, 'app.example.com')).status).toBe(200);
    expect((await callWithHost(path, 'app.example.com:8443')).status).toBe(200);
    const blocked = await callWithHost(path, 'evil.test');
    expect(blocked.status).toBe(403);
    expect(blocked.body).toEqual(DENIED);
  });

  it('*.example.com matches any subdomain, not the bare domain', async () => {
    const { path } = await endpoint({ networkAccess: { enabled: true, allowedDomains: ['*.example.com'] } });
    expect(await status(path, { origin: 'https://a.example.com' })).toBe(200);
    expect(await status(path, { origin: 'https://x.y.example.com' })).toBe(200);
    expect(await status(path, { origin: 'https://example.com' })).toBe(403);
    expect(await status(path, { origin: 'https://badexample.com' })).toBe(403);
    expect(await status(path, { origin: 'https://a.example.com.evil.test' })).toBe(403);
  });

  it('localhost works', async () => {
    const { path } = await endpoint({ networkAccess: { enabled: true, allowedDomains: ['localhost'] } });
    expect(await status(path, { origin: 'http://localhost:3000' })).toBe(200);
    expect(await status(path, { origin: 'http://localhost' })).toBe(200);
    expect(await status(path)).toBe(403); // Host 127.0.0.1:port is not localhost
    expect((await callWithHost(path, 'localhost:3000')).status).toBe(200);
  });
});

describe('combining domains and IPs', () => {
  it('domains only: the domain must match, whatever the IP', async () => {
    const { path } = await endpoint({ networkAccess: { enabled: true, allowedDomains: ['app.example.com'], allowedIpRanges: [] } });
    expect(await status(path, { origin: 'https://app.example.com', ip: '198.51.100.1' })).toBe(200);
    expect(await status(path, { origin: 'https://evil.test', ip: '203.0.113.9' })).toBe(403);
  });

  it('IPs only: the IP must match, whatever the domain', async () => {
    const { path } = await endpoint({ networkAccess: { enabled: true, allowedDomains: [], allowedIpRanges: ['203.0.113.9'] } });
    expect(await status(path, { origin: 'https://evil.test', ip: '203.0.113.9' })).toBe(200);
    expect(await status(path, { origin: 'https://app.example.com', ip: '198.51.100.1' })).toBe(403);
  });

  it('both: either may match', async () => {
    const { path } = await endpoint({ networkAccess: { enabled: true, allowedDomains: ['app.example.com'], allowedIpRanges: ['203.0.113.9'] } });
    expect(await status(path, { origin: 'https://app.example.com', ip: '198.51.100.1' })).toBe(200);
    expect(await status(path, { origin: 'https://evil.test', ip: '203.0.113.9' })).toBe(200);
    expect(await status(path, { origin: 'https://app.example.com', ip: '203.0.113.9' })).toBe(200);
    expect(await status(path, { origin: 'https://evil.test', ip: '198.51.100.1' })).toBe(403);
  });

  it('enabled with both lists empty: no filter', async () => {
    const { path } = await endpoint({ networkAccess: { enabled: true, allowedDomains: [], allowedIpRanges: [] } });
    expect(await status(path, { origin: 'https://evil.test', ip: '198.51.100.1' })).toBe(200);
    expect(await status(path)).toBe(200);
  });

  it('disabled rules filter nothing, whatever their lists hold', async () => {
    const { path } = await endpoint({ networkAccess: { enabled: false, allowedDomains: ['app.example.com'], allowedIpRanges: ['203.0.113.9'] } });
    expect(await status(path, { origin: 'https://evil.test', ip: '198.51.100.1' })).toBe(200);
  });

  it('a rule change applies on the next request', async () => {
    const { path, id } = await endpoint({ networkAccess: { enabled: true, allowedIpRanges: ['203.0.113.9'] } });
    expect(await status(path, { ip: '198.51.100.1' })).toBe(403);
    const put = await t.api('PUT', `/api/endpoints/${id}`, { token: admin, body: { networkAccess: { allowedIpRanges: ['198.51.100.0/24'] } } });
    expect(put.status).toBe(200);
    expect(put.body.data.networkAccess).toEqual({ enabled: true, allowedDomains: [], allowedIpRanges: ['198.51.100.0/24'] });
    expect(await status(path, { ip: '198.51.100.1' })).toBe(200);
    expect(await status(path, { ip: '203.0.113.9' })).toBe(403);
    expect((await t.api('PUT', `/api/endpoints/${id}`, { token: admin, body: { networkAccess: { enabled: false } } })).status).toBe(200);
    expect(await status(path, { ip: '203.0.113.9' })).toBe(200);
  });
});

/**
 * The inheritance table, row by row. GROUP_IP is allowed only by the endpoint group's rules,
 * OWN_IP only by the endpoint's own rules, OTHER_IP by neither. Rules that are "off" still hold
 * lists, to show that off means ignored.
 */
describe('inheritance from the endpoint group', () => {
  const GROUP_IP = '203.0.113.9';
  const OWN_IP = '198.51.100.7';
  const OTHER_IP = '192.0.2.1';
  const groupOn = { enabled: true, allowedDomains: [], allowedIpRanges: [GROUP_IP] };
  const groupOff = { enabled: false, allowedDomains: [], allowedIpRanges: [GROUP_IP] };
  const own = (enabled: boolean) => ({ enabled, allowedDomains: [], allowedIpRanges: [OWN_IP] });

  async function allowed(path: string): Promise<Record<'group' | 'own' | 'other', boolean>> {
    const [g, o, x] = await Promise.all([status(path, { ip: GROUP_IP }), status(path, { ip: OWN_IP }), status(path, { ip: OTHER_IP })]);
    for (const s of [g, o, x]) expect([200, 403]).toContain(s);
    return { group: g === 200, own: o === 200, other: x === 200 };
  }

  it('endpoint off + inherit + group on → the group’s rules', async () => {
    const groupId = await endpointGroup(groupOn);
    const { path } = await endpoint({ groupId, networkAccess: own(false), inheritGroupNetworkAccess: true });
    expect(await allowed(path)).toEqual({ group: true, own: false, other: false });
  });

  it('endpoint on + inherit + group on → both (union of the lists)', async () => {
    const groupId = await endpointGroup(groupOn);
    const { path } = await endpoint({ groupId, networkAccess: own(true), inheritGroupNetworkAccess: true });
    expect(await allowed(path)).toEqual({ group: true, own: true, other: false });
  });

  it('endpoint on + inherit + group on, domains from the group and IPs from the endpoint → either matches', async () => {
    const groupId = await endpointGroup({ enabled: true, allowedDomains: ['app.example.com'], allowedIpRanges: [] });
    const { path } = await endpoint({ groupId, networkAccess: own(true) });
    expect(await status(path, { origin: 'https://app.example.com', ip: OTHER_IP })).toBe(200);
    expect(await status(path, { origin: 'https://evil.test', ip: OWN_IP })).toBe(200);
    expect(await status(path, { origin: 'https://evil.test', ip: OTHER_IP })).toBe(403);
  });

  it('endpoint on + inherit + group off → the endpoint’s rules', async () => {
    const groupId = await endpointGroup(groupOff);
    const { path } = await endpoint({ groupId, networkAccess: own(true), inheritGroupNetworkAccess: true });
    expect(await allowed(path)).toEqual({ group: false, own: true, other: false });
  });

  it('endpoint on + inherit + no group → the endpoint’s rules', async () => {
    const { path } = await endpoint({ networkAccess: own(true), inheritGroupNetworkAccess: true });
    expect(await allowed(path)).toEqual({ group: false, own: true, other: false });
  });

  it('endpoint on + no inherit + group on → the endpoint’s rules only', async () => {
    const groupId = await endpointGroup(groupOn);
    const { path } = await endpoint({ groupId, networkAccess: own(true), inheritGroupNetworkAccess: false });
    expect(await allowed(path)).toEqual({ group: false, own: true, other: false });
  });

  it('endpoint on + no inherit + group off → the endpoint’s rules only', async () => {
    const groupId = await endpointGroup(groupOff);
    const { path } = await endpoint({ groupId, networkAccess: own(true), inheritGroupNetworkAccess: false });
    expect(await allowed(path)).toEqual({ group: false, own: true, other: false });
  });

  it('endpoint off + no inherit + group on → none', async () => {
    const groupId = await endpointGroup(groupOn);
    const { path } = await endpoint({ groupId, networkAccess: own(false), inheritGroupNetworkAccess: false });
    expect(await allowed(path)).toEqual({ group: true, own: true, other: true });
  });

  it('endpoint off + inherit + group off → none', async () => {
    const groupId = await endpointGroup(groupOff);
    const { path } = await endpoint({ groupId, networkAccess: own(false), inheritGroupNetworkAccess: true });
    expect(await allowed(path)).toEqual({ group: true, own: true, other: true });
  });

  it('endpoint off + inherit + no group → none', async () => {
    const { path } = await endpoint({ networkAccess: own(false), inheritGroupNetworkAccess: true });
    expect(await allowed(path)).toEqual({ group: true, own: true, other: true });
  });

  it('inheritGroupNetworkAccess defaults to true', async () => {
    const groupId = await endpointGroup(groupOn);
    const { path, id } = await endpoint({ groupId });
    expect((await t.api('GET', `/api/endpoints/${id}`, { token: admin })).body.data.inheritGroupNetworkAccess).toBe(true);
    expect(await allowed(path)).toEqual({ group: true, own: false, other: false });
  });

  it('changing the group’s rules applies on the next request', async () => {
    const groupId = await endpointGroup(groupOn);
    const { path } = await endpoint({ groupId });
    expect(await allowed(path)).toEqual({ group: true, own: false, other: false });

    const moved = await t.api('PUT', `/api/endpoints/groups/${groupId}`, { token: admin, body: { networkAccess: { allowedIpRanges: [OTHER_IP] } } });
    expect(moved.status).toBe(200);
    expect(await allowed(path)).toEqual({ group: false, own: false, other: true });

    expect((await t.api('PUT', `/api/endpoints/groups/${groupId}`, { token: admin, body: { networkAccess: { enabled: false } } })).status).toBe(200);
    expect(await allowed(path)).toEqual({ group: true, own: true, other: true });

    expect((await t.api('PUT', `/api/endpoints/groups/${groupId}`, { token: admin, body: { networkAccess: { enabled: true } } })).status).toBe(200);
    expect(await allowed(path)).toEqual({ group: false, own: false, other: true });
  });

  it('moving an endpoint into or out of a group applies on the next request', async () => {
    const groupId = await endpointGroup(groupOn);
    const { path, id } = await endpoint({});
    expect(await allowed(path)).toEqual({ group: true, own: true, other: true });
    expect((await t.api('PUT', `/api/endpoints/${id}`, { token: admin, body: { groupId } })).status).toBe(200);
    expect(await allowed(path)).toEqual({ group: true, own: false, other: false });
    expect((await t.api('PUT', `/api/endpoints/${id}`, { token: admin, body: { groupId: null } })).status).toBe(200);
    expect(await allowed(path)).toEqual({ group: true, own: true, other: true });
  });
});

// Last: it changes a server-wide setting.
describe('trustedProxies', () => {
  it('with trustedProxies [] X-Forwarded-For is ignored and the socket address counts', async () => {
    const byForwarded = await endpoint({ networkAccess: { enabled: true, allowedIpRanges: ['203.0.113.9'] } });
    const bySocket = await endpoint({ networkAccess: { enabled: true, allowedIpRanges: ['127.0.0.1'] } });
    expect(await status(byForwarded.path, { ip: '203.0.113.9' })).toBe(200);
    expect(await status(bySocket.path, { ip: '203.0.113.9' })).toBe(403);

    const put = await t.api('PUT', '/api/settings', { token: admin, body: { trustedProxies: [] } });
    expect(put.status).toBe(200);
    try {
      expect(await status(byForwarded.path, { ip: '203.0.113.9' })).toBe(403);
      expect(await status(bySocket.path, { ip: '203.0.113.9' })).toBe(200);
    } finally {
      const restore = await t.api('PUT', '/api/settings', { token: admin, body: { trustedProxies: ['127.0.0.0/8', '::1'] } });
      expect(restore.status).toBe(200);
    }
    expect(await status(byForwarded.path, { ip: '203.0.113.9' })).toBe(200);
  });
});
