import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { giveLegacyPath, startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * GET /api/openapi.json is planned, written piece by piece and kept gzipped (OpenApiDocs): what a
 * client receives must still be the one JSON text of the whole document, gzipped or not.
 */
let t: TestServer;

async function fetchDoc(query: string, encoding?: string): Promise<{ text: string; headers: Headers }> {
  const response = await fetch(`${t.url}/api/openapi.json${query}`, encoding ? { headers: { 'accept-encoding': encoding } } : {});
  expect(response.status).toBe(200);
  return { text: await response.text(), headers: response.headers };
}

beforeAll(async () => {
  t = await startTestServer();
  const token = await t.adminToken();
  const group = await t.api('POST', '/api/endpoints/groups', { token, body: { name: 'Shop', description: 'The shop', icon: 'cart', color: '#336699' } });
  const define = async (body: Record<string, unknown>) => {
    const res = await t.api('POST', '/api/endpoints', { token, body: { name: `${body.method} ${body.path}`, accessType: 'public', schema: {}, ...body } });
    expect(res.status, res.text).toBe(201);
  };
  for (const method of ['GET', 'POST']) await define({ method, path: '/api/shop/categories', groupId: group.body.data._id, schema: { name: { type: 'string' } } });
  for (const method of ['GET', 'POST', 'PATCH', 'DELETE']) {
    await define({ method, path: '/api/shop/products', apiVersion: 'v1', description: 'Products ü €', schema: { title: { type: 'string', unique: true }, category: { type: 'reference', ref: '/api/shop/categories' }, size: { type: 'object', children: { w: { type: 'number' } } } } });
  }
  await define({ method: 'GET', path: '/api/shops/:shopId/items', accessType: 'authenticated', schema: { label: { type: 'string' } } });
  // Refused today (409: the same requests as the one above); a store may hold it from before.
  await define({ method: 'GET', path: '/api/shops-other/:other/items', schema: {} });
  const other = (await t.api('GET', '/api/endpoints?search=shops-other', { token })).body.data[0];
  await giveLegacyPath(t, other._id, '/api/shops/:other/items');
  await define({ method: 'POST', path: '/api/hooks/echo', schema: { a: { type: 'string' } }, handler: { enabled: true, code: 'async function handler(req) { return { status: 200, data: req.body }; }' } });
});

afterAll(async () => {
  await t.close();
});

describe('the OpenAPI document as sent', () => {
  it('is gzipped for clients that take gzip, plain for the others, and the same JSON text either way', async () => {
    for (const query of ['', '?version=3.1']) {
      const zipped = await fetchDoc(query, 'gzip, deflate');
      expect(zipped.headers.get('content-encoding')).toBe('gzip');
      expect(zipped.headers.get('vary')).toMatch(/accept-encoding/i);
      const plain = await fetchDoc(query, 'identity');
      expect(plain.headers.get('content-encoding')).toBeNull();
      expect(plain.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(plain.text).toBe(zipped.text);
    }
  });

  it('is exactly the text one JSON.stringify of the whole document gives (as when it was built in one piece)', async () => {
    const { text } = await fetchDoc('');
    const doc = JSON.parse(text);
    expect(text).toBe(JSON.stringify(doc));
    expect(Object.keys(doc)).toEqual(['openapi', 'info', 'tags', 'paths', 'components']);
    expect(Object.keys(doc.paths)).toEqual([...Object.keys(doc.paths)].sort());
    // Populated shapes come before the record schema that links to them; every $ref resolves.
    const schemas = Object.keys(doc.components.schemas);
    const record = schemas.findIndex((name) => name.endsWith('_record') && doc.components.schemas[name].properties?.category);
    expect(record).toBeGreaterThan(schemas.findIndex((name) => name.endsWith('_populated')));
    for (const [, target] of text.matchAll(/"\$ref":"#\/components\/((?:schemas|responses|parameters)\/[^"]+)"/g)) {
      const [kind, name] = (target as string).split('/') as [string, string];
      expect(doc.components[kind][name], target).toBeDefined();
    }
    expect(text).toContain('Products ü €');
  });

  it('answers requests that arrive together with the same document', async () => {
    const token = await t.adminToken();
    // A change makes a new route table: the next requests build a new document, together.
    await t.api('POST', '/api/endpoints', { token, body: { name: 'GET /api/late', path: '/api/late', method: 'GET', accessType: 'public', schema: {} } });
    const texts = await Promise.all([fetchDoc(''), fetchDoc(''), fetchDoc('', 'identity')]);
    expect(texts[0]?.text).toContain('/api/late');
    expect(new Set(texts.map((r) => r.text)).size).toBe(1);
  });
});
