import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * HTTP methods on dynamic paths: HEAD is answered like GET without a body, OPTIONS lists the
 * methods a path is served with, and a method the path is not served with is a 405 naming them.
 */
let t: TestServer;
let admin: string;
let id: string;

async function define(path: string, methods: readonly string[], extra: Record<string, unknown> = {}): Promise<void> {
  for (const method of methods) {
    const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: `${method} ${path}`, path, method, accessType: 'public', schema: { name: { type: 'string' } }, ...extra } });
    if (res.status !== 201) throw new Error(`defining ${method} ${path} failed: ${res.status} ${res.text}`);
  }
}

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  await define('/api/m/notes', ['GET', 'POST']);
  await define('/api/m/full', ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
  await define('/api/m/hooks', ['POST'], { handler: { enabled: true, code: 'async function handler(req) { return { status: 200, data: req.method }; }' } });
  id = (await t.api('POST', '/api/m/notes', { body: { name: 'first' } })).body.data._id;
});
afterAll(async () => {
  await t.close();
});

describe('HEAD', () => {
  it('answers like GET, with the same headers and no body', async () => {
    for (const path of ['/api/m/notes', `/api/m/notes/${id}`]) {
      const get = await fetch(`${t.url}${path}`);
      const head = await fetch(`${t.url}${path}`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
      expect(await head.text()).toBe('');
    }
  });

  it('is a 404 for a missing record, like GET', async () => {
    expect((await fetch(`${t.url}/api/m/notes/ffffffffffffffffffffffff`, { method: 'HEAD' })).status).toBe(404);
  });
});

describe('OPTIONS and 405', () => {
  it.each([
    ['/api/m/notes', 'GET, HEAD, POST, OPTIONS'],
    ['/api/m/notes/ffffffffffffffffffffffff', 'GET, HEAD, OPTIONS'],
    ['/api/m/full', 'GET, HEAD, POST, OPTIONS'],
    ['/api/m/full/ffffffffffffffffffffffff', 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS'],
    ['/api/m/hooks', 'POST, OPTIONS'],
    ['/api/m/hooks/anything', 'POST, OPTIONS'],
  ])('OPTIONS %s lists %s', async (path, allow) => {
    const res = await fetch(`${t.url}${path}`, { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('allow')).toBe(allow);
  });

  it('a method the path is not served with is a 405 naming the allowed ones, and changes nothing', async () => {
    const res = await t.api('DELETE', `/api/m/notes/${id}`);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(res.body).toEqual({ success: false, error: `Method DELETE is not allowed on /api/m/notes/${id}` });
    expect((await t.api('GET', `/api/m/notes/${id}`)).status).toBe(200);
    const put = await t.api('PUT', '/api/m/notes', { body: { name: 'x' } });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
  });

  it("a method the definition serves but not on this kind of path is a 405 with Allow too", async () => {
    const put = await t.api('PUT', '/api/m/full', { body: { name: 'x' } });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
    const post = await t.api('POST', '/api/m/full/ffffffffffffffffffffffff', { body: { name: 'x' } });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, PUT, PATCH, DELETE, OPTIONS');
  });

  it('a path nothing serves stays a 404, whatever the method', async () => {
    for (const method of ['GET', 'OPTIONS', 'DELETE']) expect((await fetch(`${t.url}/api/m/nothing`, { method })).status).toBe(404);
  });
});

describe('overlapping definitions', () => {
  // GET /api/zoo/animals serves the item path /api/zoo/animals/featured; POST /api/zoo/animals/featured
  // serves it as its collection path; PUT /api/zoo/:kind serves it as an item path of :kind = animals.
  beforeAll(async () => {
    await define('/api/zoo/animals', ['GET']);
    await define('/api/zoo/animals/featured', ['POST']);
    await define('/api/zoo/:kind', ['PUT']);
  });

  it('OPTIONS lists the methods of every definition that serves the path, collection or item', async () => {
    const res = await fetch(`${t.url}/api/zoo/animals/featured`, { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST, PUT, OPTIONS');
  });

  it('each method reaches its own definition: a collection match first, then the most literal', async () => {
    const created = await t.api('POST', '/api/zoo/animals/featured', { body: { name: 'okapi' } });
    expect(created.status).toBe(201);
    // GET reads item "featured" of /api/zoo/animals: no such record.
    expect((await t.api('GET', '/api/zoo/animals/featured')).status).toBe(404);
    expect((await t.api('HEAD', '/api/zoo/animals/featured')).status).toBe(404);
    // POST serves no item path: nothing serves the created record's own path.
    expect((await t.api('GET', `/api/zoo/animals/featured/${created.body.data._id as string}`)).status).toBe(404);
    const del = await t.api('DELETE', '/api/zoo/animals/featured');
    expect(del.status).toBe(405);
    expect(del.headers.get('allow')).toBe('GET, HEAD, POST, PUT, OPTIONS');
    expect((await t.api('GET', '/api/zoo/nothing/here/at/all')).status).toBe(404);
  });
});

describe('PATCH after a field left the schema', () => {
  it('keeps the stored value of the removed field as it is, changes the rest, and refuses the removed field when sent', async () => {
    const path = '/api/m/shrinking';
    const created: Record<string, string> = {};
    for (const method of ['GET', 'POST', 'PATCH']) {
      const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: `${method} ${path}`, path, method, accessType: 'public', schema: { name: { type: 'string' }, old: { type: 'string' } } } });
      expect(res.status, res.text).toBe(201);
      created[method] = res.body.data._id;
    }
    const record = (await t.api('POST', path, { body: { name: 'a', old: 'x' } })).body.data;
    const shrunk = await t.api('PUT', `/api/endpoints/${created.PATCH}`, { token: admin, body: { schema: { name: { type: 'string' } } } });
    expect(shrunk.status, shrunk.text).toBe(200);
    const patched = await t.api('PATCH', `${path}/${record._id}`, { body: { name: 'b' } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data).toMatchObject({ name: 'b', old: 'x' });
    const refused = await t.api('PATCH', `${path}/${record._id}`, { body: { old: 'y' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('Invalid record: old is not a field of this endpoint');
    expect((await t.api('GET', `${path}/${record._id}`)).body.data).toMatchObject({ name: 'b', old: 'x' });
  });
});
