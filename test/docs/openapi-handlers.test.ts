import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validate } from '@readme/openapi-parser';
import { Ajv } from 'ajv';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type ApiResponse, type TestServer } from '../helpers/test-server.ts';

/**
 * A JavaScript handler answers the status it chooses (any from 200 to 599). The OpenAPI document
 * must describe what a client then receives: read here as a client that validates responses does
 * (explicit code, else its `2XX`-style range, else `default`), against real answers over HTTP.
 * The server runs the sample project (a copy of project/), whose `POST /api/shop/orders` handler
 * answers 201.
 */
let t: TestServer;
let projectDir: string;

/** Statuses a handler answers on `GET /api/h/status?status=N` (the fast path) and `POST` (Koa). */
const STATUS_HANDLER = `async function handler(req) {
  const status = Number(req.query.status);
  if (status === 404) return { status, data: 'no such thing' };
  if (status >= 400) return { status, data: { error: 'refused by the handler', hint: 'tea' } };
  if (req.query.empty) return { status };
  return { status, data: { status, id: req.params.id ?? null } };
}`;

beforeAll(async () => {
  projectDir = join(mkdtempSync(join(tmpdir(), 'dyn-openapi-handlers-')), 'project');
  cpSync(join(import.meta.dirname, '..', '..', 'project'), projectDir, { recursive: true });
  t = await startTestServer({ PROJECT_WATCH: 'on', PROJECT_DIR: projectDir }); // loaded at start (files → store)
  const admin = await t.adminToken();
  for (const [method, accessType] of [['GET', 'public'], ['POST', 'authenticated']] as const) {
    const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: `${method} statuses`, path: '/api/h/status', method, accessType, schema: {}, handler: { enabled: true, code: STATUS_HANDLER } } });
    expect(res.status, res.text).toBe(201);
  }
});

afterAll(async () => {
  await t?.close();
  if (projectDir) rmSync(join(projectDir, '..'), { recursive: true, force: true });
});

async function openapi(query = ''): Promise<any> {
  const res = await t.api('GET', `/api/openapi.json${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/**
 * The response a client picks for a status — the explicit code, else its range (`2XX`), else
 * `default` — and whether a real answer matches it: its body against the schema (validated in
 * the document, `$ref`s resolved there), or no body where none is documented.
 */
function check(doc: any, path: string, method: string, answer: ApiResponse): { key: string; valid: boolean; errors?: unknown } {
  const responses = doc.paths[path][method].responses;
  const key = [String(answer.status), `${String(answer.status)[0]}XX`, 'default'].find((k) => k in responses) as string;
  const escape = (segment: string) => encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'));
  let pointer = `/paths/${escape(path)}/${method}/responses/${key}`;
  let response = responses[key];
  if (response.$ref) {
    pointer = (response.$ref as string).slice(1);
    response = doc.components.responses[pointer.split('/').pop() as string];
  }
  if (!response.content) return { key, valid: answer.text === '' && answer.headers.get('content-type') === null };
  expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addSchema(doc, 'openapi.json');
  const validator = ajv.compile({ $ref: `openapi.json#${pointer}/content/application~1json/schema` });
  return { key, valid: validator(answer.body) as boolean, errors: validator.errors };
}

describe('an endpoint served by a JavaScript handler', () => {
  it('is described with 2XX and 3XX success ranges (bodyless 204, 205, 304 apart) and a handler failure as default, in a valid 3.0 and 3.1 document', async () => {
    for (const [query, version] of [['', '3.0.3'], ['?version=3.1', '3.1.0']]) {
      const doc = await openapi(query);
      expect(doc.openapi).toBe(version);
      const result = await validate(structuredClone(doc));
      expect(result.valid ? [] : result.errors, JSON.stringify(result)).toEqual([]);
      for (const path of ['/api/shop/orders', '/api/shop/orders/{id}']) {
        const responses = doc.paths[path].post.responses;
        expect(Object.keys(responses).sort()).toEqual(['204', '205', '2XX', '304', '3XX', '400', '403', 'default']);
        expect(responses['2XX']).toEqual({ $ref: '#/components/responses/HandlerSuccess' });
        expect(responses['204']).toEqual({ $ref: '#/components/responses/HandlerNoContent' });
        expect(responses.default).toEqual({ $ref: '#/components/responses/HandlerFailure' });
      }
      expect(doc.paths['/api/h/status'].post.responses['401']).toEqual({ $ref: '#/components/responses/Unauthorized' });
      expect(doc.components.responses.HandlerSuccess.content['application/json'].schema).toMatchObject({
        type: 'object', properties: { success: { type: 'boolean', enum: [true] } }, required: ['success', 'data'],
      });
      expect(doc.components.responses.HandlerNoContent.content).toBeUndefined();
      // A handler without fields reads any JSON object or array, as HTTP takes it (a scalar is a 400).
      const anyBody = doc.paths['/api/h/status'].post.requestBody.content['application/json'].schema;
      expect(anyBody.oneOf.map((s: { type: string }) => s.type)).toEqual(['object', 'array']);
      expect((await t.api('POST', '/api/h/status?status=200', { token: await t.adminToken(), body: 5 })).status).toBe(400);
      // Plain CRUD operations keep their fixed status and the engine's 404.
      expect(Object.keys(doc.paths['/api/shop/products'].post.responses)).toContain('201');
      expect(Object.keys(doc.paths['/api/shop/categories/{id}'].get.responses)).toEqual(expect.arrayContaining(['200', '404']));
    }
  });

  it('the sample project\'s POST /api/shop/orders answers 201, and the body validates against the documented success response', async () => {
    const placed = await t.api('POST', '/api/shop/orders', { body: { productId: 'a'.repeat(24), quantity: 2 } });
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body).toMatchObject({ success: true, data: { order: { productId: 'a'.repeat(24), quantity: 2 }, openOrders: 1 } });
    const refused = await t.api('POST', '/api/shop/orders', { body: { productId: 'nope' } });
    expect(refused.status).toBe(400);
    const invalid = await t.api('POST', '/api/shop/orders', { body: { quantity: 1 } }); // the schema's 400, before the handler
    expect(invalid.status).toBe(400);
    for (const query of ['', '?version=3.1']) {
      const doc = await openapi(query);
      expect(check(doc, '/api/shop/orders', 'post', placed)).toMatchObject({ key: '2XX', valid: true });
      expect(check(doc, '/api/shop/orders', 'post', refused)).toMatchObject({ key: '400', valid: true });
      expect(check(doc, '/api/shop/orders', 'post', invalid)).toMatchObject({ key: '400', valid: true });
      // Read as the failure shape, the 201 would not validate: the bug this description fixes.
      const failure = new Ajv({ strict: false }).addSchema(doc, 'openapi.json').compile({ $ref: 'openapi.json#/components/schemas/Failure' });
      expect(failure(placed.body)).toBe(false);
    }
  });

  it.each([
    ['GET', ''],
    ['GET', '/abc'],
    ['POST', ''],
    ['POST', '/abc'],
  ])('every status a handler answers on %s /api/h/status%s matches what the document says for it', async (method, item) => {
    const token = method === 'POST' ? await t.adminToken() : undefined;
    const answers: Array<[string, ApiResponse]> = [];
    for (const status of [200, 201, 202, 204, 205, 206, 301, 302, 304, 400, 404, 409, 418, 500, 503]) {
      const answer = await t.api(method, `/api/h/status${item}?status=${status}`, token ? { token } : {});
      expect(answer.status, answer.text).toBe(status);
      answers.push([String(status), answer]);
    }
    const empty = await t.api(method, `/api/h/status${item}?status=201&empty=1`, token ? { token } : {});
    expect(empty.body).toEqual({ success: true, data: null }); // no data: null, still the envelope
    answers.push(['201 without data', empty]);
    if (method === 'POST') answers.push(['401 of the engine', await t.api(method, `/api/h/status${item}?status=200`)]);
    for (const query of ['', '?version=3.1']) {
      const doc = await openapi(query);
      const path = item ? '/api/h/status/{id}' : '/api/h/status';
      const results = answers.map(([label, answer]) => [label, check(doc, path, method.toLowerCase(), answer)] as const);
      const wrong = results.filter(([, result]) => !result.valid);
      expect(wrong, JSON.stringify(wrong)).toEqual([]);
      expect(Object.fromEntries(results.map(([label, result]) => [label, result.key]))).toEqual({
        '200': '2XX', '201': '2XX', '202': '2XX', '204': '204', '205': '205', '206': '2XX', '301': '3XX', '302': '3XX', '304': '304',
        '400': '400', '404': 'default', '409': 'default', '418': 'default', '500': 'default', '503': 'default',
        '201 without data': '2XX',
        ...(method === 'POST' ? { '401 of the engine': '401' } : {}),
      });
    }
  });

  it("names where a handler reads the item route's last segment: recordId, and params.id unless the path has its own :id", async () => {
    const admin = await t.adminToken();
    const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'own id', path: '/api/h/own/:id', method: 'GET', accessType: 'public', schema: {}, handler: { enabled: true, code: STATUS_HANDLER } } });
    expect(res.status, res.text).toBe(201);
    const doc = await openapi();
    const described = (path: string) => Object.fromEntries(doc.paths[path].get.parameters.filter((p: any) => p.in === 'path').map((p: any) => [p.name, p.description]));
    expect(described('/api/h/status/{id}')).toEqual({ id: 'passed to the handler as recordId and params.id' });
    expect(described('/api/h/own/{id}/{recordId}')).toEqual({ id: 'path parameter', recordId: 'passed to the handler as recordId' });
  });

  it('turns into TypeScript types with the 2XX response typed as the success envelope', async () => {
    const types = astToString(await openapiTS(await openapi()));
    expect(types).toMatch(/"2XX": components\["responses"\]\["HandlerSuccess"\]/);
    expect(types).toMatch(/HandlerSuccess: \{[^]*?success: true;/);
  });
});
