import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserWith, startTestServer, type RequestOptions, type TestServer } from '../helpers/test-server.ts';

/**
 * Endpoint groups (`/api/endpoints/groups`): organise endpoints and carry network rules their
 * endpoints inherit. Reads need `view` or `manage_api`, writes `manage_api`.
 */
let t: TestServer;
let admin: string;
let adminId: string;

let seq = 0;
const unique = (prefix = 'g') => `${prefix}${Date.now().toString(36)}${(seq++).toString(36)}`;

async function createGroup(fields: Record<string, unknown> = {}): Promise<any> {
  const res = await t.api('POST', '/api/endpoints/groups', { token: admin, body: { name: unique('group-'), ...fields } });
  if (res.status !== 201) throw new Error(`endpoint group create failed: ${res.text}`);
  return res.body.data;
}

async function createEndpoint(fields: Record<string, unknown> = {}): Promise<any> {
  const body = { name: 'Items', path: `/api/${unique('t')}/items`, method: 'GET', accessType: 'public', schema: {}, ...fields };
  const res = await t.api('POST', '/api/endpoints', { token: admin, body });
  if (res.status !== 201) throw new Error(`endpoint create failed: ${res.text}`);
  return res.body.data;
}

beforeAll(async () => {
  t = await startTestServer();
  const session = await t.login();
  admin = session.accessToken;
  adminId = session.user._id;
});
afterAll(async () => {
  await t.close();
});

describe('the endpoint groups API', () => {
  it('creates a group with its defaults', async () => {
    const name = unique('Shop ');
    const res = await t.api('POST', '/api/endpoints/groups', { token: admin, body: { name } });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      success: true,
      data: {
        _id: expect.stringMatching(/^[0-9a-f]{24}$/),
        name,
        description: '',
        icon: '',
        color: '#6b7280',
        order: 0,
        networkAccess: { enabled: false, allowedDomains: [], allowedIpRanges: [] },
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
    const read = await t.api('GET', `/api/endpoints/groups/${res.body.data._id}`, { token: admin });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
  });

  it('saves every field given', async () => {
    const fields = {
      name: unique('Full '),
      description: 'All shop endpoints',
      icon: 'cart',
      color: '#A1b2C3',
      order: -5,
      networkAccess: { enabled: true, allowedDomains: ['*.example.com'], allowedIpRanges: ['10.0.0.0/8'] },
    };
    expect(await createGroup(fields)).toMatchObject(fields);
  });

  it('lists groups paged by order then name, with search', async () => {
    const marker = unique('listed-');
    await createGroup({ name: `${marker} b`, order: 2 });
    await createGroup({ name: `${marker} c`, order: 1 });
    await createGroup({ name: `${marker} a`, order: 2 });
    const res = await t.api('GET', `/api/endpoints/groups?search=${marker}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data.map((g: { name: string }) => g.name)).toEqual([`${marker} c`, `${marker} a`, `${marker} b`]);
    expect(res.body.meta).toEqual({ page: 1, limit: 20, total: 3 });
    const page = await t.api('GET', `/api/endpoints/groups?search=${marker}&limit=2&page=2`, { token: admin });
    expect(page.body.meta).toEqual({ page: 2, limit: 2, total: 3 });
    expect(page.body.data.map((g: { name: string }) => g.name)).toEqual([`${marker} b`]);
  });

  it('a name is unique, also after trimming: 409 on create and on rename', async () => {
    const name = unique('Unique ');
    const first = await createGroup({ name });
    for (const spelling of [name, `  ${name} `]) {
      const res = await t.api('POST', '/api/endpoints/groups', { token: admin, body: { name: spelling } });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ success: false, error: 'An endpoint group with this name already exists' });
    }
    const other = await createGroup();
    const rename = await t.api('PUT', `/api/endpoints/groups/${other._id}`, { token: admin, body: { name } });
    expect(rename.status).toBe(409);
    expect((await t.api('GET', `/api/endpoints/groups/${other._id}`, { token: admin })).body.data.name).toBe(other.name);
    expect((await t.api('GET', `/api/endpoints/groups/${first._id}`, { token: admin })).body.data.name).toBe(name);
  });

  it.each(['#abc', '#ABCDEF', '#09afAF'])('the color %s is accepted', async (color) => {
    expect((await createGroup({ color })).color).toBe(color);
  });

  it.each(['red', 'abc', '#abcd', '#ggg', '#1234567', ''])('the color "%s" is a 400 on create and update', async (color) => {
    const created = await t.api('POST', '/api/endpoints/groups', { token: admin, body: { name: unique(), color } });
    expect(created.status).toBe(400);
    expect(created.body.error).toMatch(/^Invalid request body: color /);
    const group = await createGroup();
    const updated = await t.api('PUT', `/api/endpoints/groups/${group._id}`, { token: admin, body: { color } });
    expect(updated.status).toBe(400);
    expect((await t.api('GET', `/api/endpoints/groups/${group._id}`, { token: admin })).body.data.color).toBe('#6b7280');
  });

  it.each([
    { name: 'a missing name', body: {}, error: 'Invalid request body: name is required' },
    { name: 'a blank name', body: { name: '  ' }, error: expect.stringMatching(/^Invalid request body: name /) },
    { name: 'an unknown field', body: { name: 'x', colour: '#fff' }, error: 'Invalid request body: colour is not an allowed field' },
    { name: 'an _id', body: { name: 'x', _id: '000000000000000000000000' }, error: 'Invalid request body: _id is assigned by the service' },
    { name: 'a fractional order', body: { name: 'x', order: 1.5 }, error: expect.stringMatching(/^Invalid request body: order /) },
    { name: 'an unknown network option', body: { name: 'x', networkAccess: { on: true } }, error: 'Invalid request body: networkAccess.on is not an allowed field' },
    {
      name: 'an invalid IP rule',
      body: { name: 'x', networkAccess: { enabled: true, allowedIpRanges: ['10.0.0.0/33'] } },
      error: 'Invalid networkAccess.allowedIpRanges: invalid IP address or CIDR range: "10.0.0.0/33"',
    },
    {
      name: 'an invalid domain rule',
      body: { name: 'x', networkAccess: { enabled: true, allowedDomains: ['not a domain'] } },
      error: expect.stringContaining('Invalid networkAccess.allowedDomains: invalid domain rule: "not a domain"'),
    },
  ])('$name is a 400', async ({ body, error }) => {
    const res = await t.api('POST', '/api/endpoints/groups', { token: admin, body });
    expect(res.status, res.text).toBe(400);
    expect(res.body).toMatchObject({ success: false, error });
  });

  it('PUT changes only the fields given; networkAccess is merged', async () => {
    const group = await createGroup({ description: 'd', color: '#123', networkAccess: { enabled: false, allowedIpRanges: ['10.0.0.1'] } });
    const res = await t.api('PUT', `/api/endpoints/groups/${group._id}`, { token: admin, body: { order: 7, networkAccess: { enabled: true } } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      ...group,
      order: 7,
      networkAccess: { enabled: true, allowedDomains: [], allowedIpRanges: ['10.0.0.1'] },
      updatedAt: expect.any(String),
    });
    const invalid = await t.api('PUT', `/api/endpoints/groups/${group._id}`, { token: admin, body: { networkAccess: { allowedIpRanges: ['nope'] } } });
    expect(invalid.status).toBe(400);
    expect((await t.api('GET', `/api/endpoints/groups/${group._id}`, { token: admin })).body.data).toEqual(res.body.data);
  });

  it.each([
    { method: 'GET', body: undefined },
    { method: 'PUT', body: { description: 'x' } },
    { method: 'DELETE', body: undefined },
  ])('$method of an unknown or malformed id is a 404', async ({ method, body }) => {
    for (const id of ['000000000000000000000000', 'nope']) {
      const res = await t.api(method, `/api/endpoints/groups/${id}`, { token: admin, ...(body ? { body } : {}) });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: 'Endpoint group not found' });
    }
  });

  it('takes back the object a GET returned; its _id cannot be changed', async () => {
    const group = await createGroup({ description: 'before' });
    const read = (await t.api('GET', `/api/endpoints/groups/${group._id}`, { token: admin })).body.data;
    const back = await t.api('PUT', `/api/endpoints/groups/${group._id}`, { token: admin, body: { ...read, description: 'after', createdAt: '2000-01-01T00:00:00.000Z' } });
    expect(back.status, back.text).toBe(200);
    expect(back.body.data).toMatchObject({ _id: group._id, description: 'after', createdAt: read.createdAt });
    const moved = await t.api('PUT', `/api/endpoints/groups/${group._id}`, { token: admin, body: { ...read, _id: 'ffffffffffffffffffffffff' } });
    expect(moved.status).toBe(400);
    expect(moved.body).toMatchObject({ success: false, error: 'Invalid request body: _id cannot be changed' });
  });

  it('/api/endpoints/groups is not mistaken for /api/endpoints/:id', async () => {
    const group = await createGroup();
    const list = await t.api('GET', '/api/endpoints/groups?limit=100', { token: admin });
    expect(list.status).toBe(200);
    expect(list.body.data.map((g: { _id: string }) => g._id)).toContain(group._id);
    expect(list.body.data.every((g: Record<string, unknown>) => !('path' in g))).toBe(true);
    // A group id is not an endpoint id, and the other way round.
    expect((await t.api('GET', `/api/endpoints/${group._id}`, { token: admin })).status).toBe(404);
    const endpoint = await createEndpoint();
    expect((await t.api('GET', `/api/endpoints/groups/${endpoint._id}`, { token: admin })).status).toBe(404);
    // The list takes GET and POST: other methods are a 405 naming them, not an endpoint's 404.
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const res = await t.api(method, '/api/endpoints/groups', { token: admin, ...(method === 'DELETE' ? {} : { body: { name: 'x' } }) });
      expect(res.status, `${method}: ${res.text}`).toBe(405);
      expect(res.body).toEqual({ success: false, error: `Method ${method} is not allowed on /api/endpoints/groups` });
      expect(res.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
    }
    const options = await t.api('OPTIONS', '/api/endpoints/groups', { token: admin });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
    expect((await t.api('HEAD', '/api/endpoints/groups', { token: admin })).status).toBe(200);
  });
});

describe('deleting a group', () => {
  it('an unused group is deleted and returned', async () => {
    const group = await createGroup();
    const res = await t.api('DELETE', `/api/endpoints/groups/${group._id}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ _id: group._id, name: group.name });
    expect((await t.api('GET', `/api/endpoints/groups/${group._id}`, { token: admin })).status).toBe(404);
  });

  it('a group endpoints still use is refused (409) and nothing changes; after moving them it works', async () => {
    const group = await createGroup({ networkAccess: { enabled: true, allowedIpRanges: ['10.0.0.0/8'] } });
    const first = await createEndpoint({ groupId: group._id });
    const second = await createEndpoint({ groupId: group._id });

    const refused = await t.api('DELETE', `/api/endpoints/groups/${group._id}`, { token: admin });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ success: false, error: `Endpoint group "${group.name}" is used by 2 endpoints; move them to another group first` });
    expect((await t.api('GET', `/api/endpoints/groups/${group._id}`, { token: admin })).body.data).toEqual(group);
    for (const endpoint of [first, second]) {
      expect((await t.api('GET', `/api/endpoints/${endpoint._id}`, { token: admin })).body.data).toEqual(endpoint);
    }

    expect((await t.api('PUT', `/api/endpoints/${first._id}`, { token: admin, body: { groupId: null } })).status).toBe(200);
    const stillUsed = await t.api('DELETE', `/api/endpoints/groups/${group._id}`, { token: admin });
    expect(stillUsed.status).toBe(409);
    expect(stillUsed.body.error).toBe(`Endpoint group "${group.name}" is used by 1 endpoint; move them to another group first`);

    expect((await t.api('DELETE', `/api/endpoints/${second._id}`, { token: admin })).status).toBe(200);
    expect((await t.api('DELETE', `/api/endpoints/groups/${group._id}`, { token: admin })).status).toBe(200);
  });
});

describe('network rules inherited from the group', () => {
  it('a change to the group applies to its endpoints on the next request', async () => {
    // Requests in these tests come from 127.0.0.1.
    const group = await createGroup({ networkAccess: { enabled: true, allowedIpRanges: ['10.9.9.9'] } });
    const endpoint = await createEndpoint({ groupId: group._id });
    const blocked = await t.api('GET', endpoint.path);
    expect(blocked.status).toBe(403);
    expect(blocked.body).toEqual({ success: false, error: 'Forbidden: network access denied' });

    expect((await t.api('PUT', `/api/endpoints/groups/${group._id}`, { token: admin, body: { networkAccess: { allowedIpRanges: ['10.9.9.9', '127.0.0.1'] } } })).status).toBe(200);
    expect((await t.api('GET', endpoint.path)).status).toBe(200);

    expect((await t.api('PUT', `/api/endpoints/groups/${group._id}`, { token: admin, body: { networkAccess: { allowedIpRanges: ['10.9.9.9'] } } })).status).toBe(200);
    expect((await t.api('GET', endpoint.path)).status).toBe(403);

    expect((await t.api('PUT', `/api/endpoints/${endpoint._id}`, { token: admin, body: { inheritGroupNetworkAccess: false } })).status).toBe(200);
    expect((await t.api('GET', endpoint.path)).status).toBe(200);
  });
});

describe('who may read and write endpoint groups', () => {
  type Who = 'nobody' | 'viewer' | 'api manager' | 'user manager' | 'key with manage_api' | 'key with view';
  const credentials = {} as Record<Who, RequestOptions>;
  let existing: string;

  beforeAll(async () => {
    existing = (await createGroup())._id;
    const key = async (permissions: string[]) => {
      const res = await t.api('POST', '/api/api-keys', { token: admin, body: { name: unique('key-'), permissions } });
      if (res.status !== 201) throw new Error(res.text);
      return res.body.data.key as string;
    };
    Object.assign(credentials, {
      nobody: {},
      viewer: { token: (await createUserWith(t, ['view'])).token },
      'api manager': { token: (await createUserWith(t, ['manage_api'])).token },
      'user manager': { token: (await createUserWith(t, ['manage_users'])).token },
      'key with manage_api': { apiKey: await key(['manage_api']) },
      'key with view': { apiKey: await key(['view']) },
    } satisfies Record<Who, RequestOptions>);
  });

  function routes(who: Who, read: number, write: number, created = write) {
    return [
      { who, method: 'GET', url: '/api/endpoints/groups', status: read },
      { who, method: 'GET', url: '/api/endpoints/groups/:existing', status: read },
      { who, method: 'POST', url: '/api/endpoints/groups', body: true, status: created },
      { who, method: 'PUT', url: '/api/endpoints/groups/:new', body: true, status: write },
      { who, method: 'DELETE', url: '/api/endpoints/groups/:new', status: write },
    ];
  }

  it.each([
    ...routes('nobody', 401, 401),
    ...routes('user manager', 403, 403),
    ...routes('viewer', 200, 403),
    ...routes('key with view', 200, 403),
    ...routes('api manager', 200, 200, 201),
    ...routes('key with manage_api', 200, 200, 201),
  ])('$who: $method $url → $status', async ({ who, method, url, body, status }) => {
    let path = url.replace(':existing', existing);
    if (path.includes(':new')) path = path.replace(':new', (await createGroup())._id);
    const payload = method === 'POST' ? { name: unique('perm-') } : { description: 'changed' };
    const res = await t.api(method, path, { ...credentials[who], ...(body ? { body: payload } : {}) });
    expect(res.status, res.text).toBe(status);
    if (status >= 400) expect(res.body).toEqual({ success: false, error: expect.any(String) });
    else expect(res.body.success).toBe(true);
  });

  it('a refused write changes nothing', async () => {
    const before = (await t.api('GET', `/api/endpoints/groups/${existing}`, { token: admin })).body.data;
    for (const who of ['nobody', 'viewer', 'key with view', 'user manager'] as const) {
      await t.api('PUT', `/api/endpoints/groups/${existing}`, { ...credentials[who], body: { name: 'Hijacked' } });
      await t.api('DELETE', `/api/endpoints/groups/${existing}`, credentials[who]);
    }
    expect((await t.api('GET', `/api/endpoints/groups/${existing}`, { token: admin })).body.data).toEqual(before);
  });
});

describe('audit', () => {
  it('records endpoint_group_created, endpoint_group_updated and endpoint_group_deleted', async () => {
    const group = await createGroup();
    expect((await t.api('PUT', `/api/endpoints/groups/${group._id}`, { token: admin, body: { description: 'audited' } })).status).toBe(200);
    expect((await t.api('DELETE', `/api/endpoints/groups/${group._id}`, { token: admin })).status).toBe(200);
    for (const [action, verb, method, status, path] of [
      ['endpoint_group_created', 'created', 'POST', 201, '/api/endpoints/groups'],
      ['endpoint_group_updated', 'updated', 'PUT', 200, `/api/endpoints/groups/${group._id}`],
      ['endpoint_group_deleted', 'deleted', 'DELETE', 200, `/api/endpoints/groups/${group._id}`],
    ] as const) {
      const res = await t.api('GET', `/api/dashboard/logs?action=${action}&limit=100`, { token: admin });
      expect(res.status).toBe(200);
      const entry = res.body.data.find((e: { message: string }) => e.message === `Endpoint group ${group.name} ${verb}`);
      expect(entry, action).toMatchObject({ action, source: 'endpoints', userId: adminId, ip: '127.0.0.1', method, path, statusCode: status });
    }
  });

  it('a refused delete is not recorded', async () => {
    const group = await createGroup();
    await createEndpoint({ groupId: group._id });
    expect((await t.api('DELETE', `/api/endpoints/groups/${group._id}`, { token: admin })).status).toBe(409);
    const res = await t.api('GET', `/api/dashboard/logs?action=endpoint_group_deleted&limit=100`, { token: admin });
    expect(res.body.data.some((e: { message: string }) => e.message.includes(group.name))).toBe(false);
  });
});
