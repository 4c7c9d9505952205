import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordDoc } from '../../src/model/endpoint.ts';
import { startTestServer, type ApiResponse, type TestServer } from '../helpers/test-server.ts';

/**
 * Hostile and malformed input on defined endpoints: each case is a clear 4xx in the error shape,
 * and none of them writes a record (checked in the store itself, not only through list totals).
 */
let t: TestServer;
let admin: string;
let existing: Record<string, any>;

const PATH = '/api/x/items';
const SCHEMA = {
  title: { type: 'string' },
  count: { type: 'number' },
  done: { type: 'boolean' },
  when: { type: 'datetime' },
  tags: { type: 'array', items: { type: 'string' } },
  list: { type: 'array' },
  address: { type: 'object', children: { city: { type: 'string' } } },
  blob: { type: 'json' },
  parent: { type: 'reference', ref: PATH },
};

async function defineAll(server: TestServer, token: string): Promise<void> {
  for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
    const res = await server.api('POST', '/api/endpoints', { token, body: { name: `${method} items`, path: PATH, method, accessType: 'public', schema: SCHEMA } });
    if (res.status !== 201) throw new Error(`defining ${method} ${PATH} failed: ${res.status} ${res.text}`);
  }
}

function expectClientError(res: ApiResponse, status: number, error?: string | RegExp): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body.success).toBe(false);
  expect(typeof res.body.error).toBe('string');
  if (typeof error === 'string') expect(res.body.error).toBe(error);
  else if (error) expect(res.body.error).toMatch(error);
}

/** The records at PATH as stored, and the existing record as served. */
async function snapshot(server: TestServer = t) {
  const stored = await server.server.services.store.collection<RecordDoc>('endpointdatas').find({ resourcePath: PATH });
  return { stored, ids: stored.map((r) => r._id).sort() };
}

async function expectNothingWritten(action: () => Promise<void>): Promise<void> {
  const before = await snapshot();
  await action();
  expect(await snapshot()).toEqual(before);
}

/** A GET whose path reaches the server exactly as written (fetch would resolve `..`). */
function rawGet(path: string): Promise<ApiResponse> {
  const url = new URL(t.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'GET' }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: new Headers(), body, text });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const nested = (levels: number, inner = '1') => '{"a":'.repeat(levels) + inner + '}'.repeat(levels);
const nestedArrays = (levels: number) => '['.repeat(levels) + '1' + ']'.repeat(levels);

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  await defineAll(t, admin);
  const res = await t.api('POST', PATH, { body: { title: 'existing', count: 1 } });
  if (res.status !== 201) throw new Error(res.text);
  existing = res.body.data;
});
afterAll(async () => {
  await t.close();
});

/** The three writes that carry a body. */
const WRITES = [
  ['POST', () => PATH],
  ['PUT', () => `${PATH}/${existing._id}`],
  ['PATCH', () => `${PATH}/${existing._id}`],
] as const;

describe('deep nesting', () => {
  it.each([
    ['objects', nested(33)],
    ['arrays', nestedArrays(40)],
    ['objects and arrays mixed', nested(20, nestedArrays(20))],
  ])('more than 32 levels of %s is a 400', async (_label, deep) => {
    await expectNothingWritten(async () => {
      for (const [method, url] of WRITES) {
        expectClientError(await t.api(method, url(), { rawBody: `{"title":"deep","blob":${deep}}` }), 400, 'Request body is nested more than 32 levels deep');
      }
    });
  });

  it('nesting within the limit is stored as sent', async () => {
    const res = await t.api('POST', PATH, { rawBody: `{"title":"shallow","blob":${nested(30)}}` });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.blob).toEqual(JSON.parse(nested(30)));
  });
});

describe('huge arrays', () => {
  const huge = Array.from({ length: 10_001 }, (_, i) => String(i));

  it.each(['tags', 'list'])('an array field with 10,001 items is a 400 (%s)', async (field) => {
    await expectNothingWritten(async () => {
      for (const [method, url] of WRITES) {
        const res = await t.api(method, url(), { body: { title: 'huge', [field]: huge } });
        expectClientError(res, 400, `Invalid record: ${field} must have at most 10000 items`);
        expect(res.body.details).toEqual([{ field, message: 'must have at most 10000 items' }]);
      }
    });
  });

  it('10,000 items are accepted', async () => {
    const res = await t.api('POST', PATH, { body: { title: 'big', tags: huge.slice(0, 10_000) } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.tags).toHaveLength(10_000);
  });

  it('a huge array of wrong items lists at most 100 details', async () => {
    await expectNothingWritten(async () => {
      const res = await t.api('POST', PATH, { body: { tags: Array.from({ length: 5000 }, (_, i) => i) } });
      expectClientError(res, 400, 'Invalid record: tags.0 must be a string');
      expect(res.body.details).toHaveLength(100);
    });
  });
});

// Inside a json value (`blob`) these keys are data: see json-values.test.ts.
describe('prototype keys', () => {
  it.each([
    ['a top-level __proto__', '{"title":"p","__proto__":{"polluted":true}}'],
    ['a top-level constructor', '{"title":"p","constructor":{"prototype":{"polluted":true}}}'],
    ['a constructor inside an array', '{"title":"p","list":[{"constructor":{}}]}'],
    ['a prototype key inside an object field', '{"title":"p","address":{"prototype":"x"}}'],
  ])('%s is a 400', async (_label, raw) => {
    await expectNothingWritten(async () => {
      for (const [method, url] of WRITES) {
        expectClientError(await t.api(method, url(), { rawBody: raw }), 400, /^Invalid record: \S+ (is not a field|is not an allowed key)/);
      }
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('operator-shaped bodies', () => {
  it.each([
    ['title', { $ne: null }, 'title must be a string'],
    ['count', { $gt: 0 }, 'count must be a number'],
    ['done', { $exists: true }, 'done must be a boolean'],
    ['when', { $lt: '2030-01-01' }, 'when must be an ISO 8601 date or date-time string'],
    ['parent', { $ne: null }, 'parent must be a record id (24 lowercase hex characters)'],
    ['tags', { $in: ['a'] }, 'tags must be an array'],
    ['address', { $where: 'sleep(1000)' }, 'address.$where is not a field of address'],
  ])('{"%s": %j} is a 400', async (field, value, message) => {
    await expectNothingWritten(async () => {
      for (const [method, url] of WRITES) {
        const res = await t.api(method, url(), { body: { [field]: value } });
        expectClientError(res, 400, `Invalid record: ${message}`);
      }
    });
  });

  it('operators as top-level keys are unknown fields (400)', async () => {
    await expectNothingWritten(async () => {
      for (const [method, url] of WRITES) {
        const res = await t.api(method, url(), { body: { $set: { title: 'x' }, $unset: ['count'] } });
        expectClientError(res, 400, 'Invalid record: $set is not a field of this endpoint');
        expect(res.body.details).toEqual(expect.arrayContaining([
          { field: '$set', message: 'is not a field of this endpoint' },
          { field: '$unset', message: 'is not a field of this endpoint' },
        ]));
      }
    });
    expect((await t.api('GET', `${PATH}/${existing._id}`)).body.data).toEqual(existing);
  });
});

describe('query parameters', () => {
  it.each([
    ['title[$ne]=x', 'Unknown query parameter "title[$ne]"'],
    ['page[$gt]=1', 'Unknown query parameter "page[$gt]"'],
    ['limit[$gt]=1', 'Unknown query parameter "limit[$gt]"'],
    ['sort[$ne]=title', 'Unknown query parameter "sort[$ne]"'],
    ['titel=x', 'Unknown query parameter "titel"'],
    ['page=1&page=2', 'Query parameter "page" must be given once'],
    ['limit=5&limit=5', 'Query parameter "limit" must be given once'],
    ['sort=title&sort=count', 'Query parameter "sort" must be given once'],
    ['limit=abc', 'Query parameter "limit" must be a positive integer'],
    ['limit=0', 'Query parameter "limit" must be a positive integer'],
    ['limit=-1', 'Query parameter "limit" must be a positive integer'],
    ['limit=1.5', 'Query parameter "limit" must be a positive integer'],
    ['page=0', 'Query parameter "page" must be a positive integer'],
    ['page=two', 'Query parameter "page" must be a positive integer'],
    ['page=9999999999', 'Query parameter "page" must be at most 999999999'],
    ['search=%00zzz', 'Query parameter "search" must not contain NUL characters'],
    ['title=a%00b', 'Query parameter "title" must not contain NUL characters'],
  ])('GET ?%s is a 400', async (query, error) => {
    expectClientError(await t.api('GET', `${PATH}?${query}`), 400, error);
  });

  it.each([
    ['populate[$ne]=x', 'Unknown query parameter "populate[$ne]"'],
    ['populate=true&populate=false', 'Query parameter "populate" must be given once'],
    ['page=1', 'Unknown query parameter "page"'],
  ])('GET /:id ?%s is a 400', async (query, error) => {
    expectClientError(await t.api('GET', `${PATH}/${existing._id}?${query}`), 400, error);
  });

  it('writes refuse query parameters too, and write nothing', async () => {
    await expectNothingWritten(async () => {
      for (const [method, url] of WRITES) {
        expectClientError(await t.api(method, `${url()}?title[$ne]=x`, { body: { title: 'q' } }), 400, 'Unknown query parameter "title[$ne]"');
      }
      expectClientError(await t.api('DELETE', `${PATH}/${existing._id}?force=1`), 400, 'Unknown query parameter "force"');
    });
  });
});

describe('invalid ids', () => {
  it.each([
    ['a path that climbs out', `${PATH}/../../`],
    ['encoded dots and slashes', `${PATH}/..%2F..%2F`],
    ['malformed percent-encoding', `${PATH}/%zz`],
    ['25 hex characters', `${PATH}/${'a'.repeat(25)}`],
    ['23 hex characters', `${PATH}/${'a'.repeat(23)}`],
    ['upper-case hex', `${PATH}/${'A'.repeat(24)}`],
    ['an operator', `${PATH}/%24ne`],
  ])('%s is a 404', async (_label, path) => {
    const res = await rawGet(path);
    expect(res.status, res.text).toBe(404);
    expect(res.body).toEqual({ success: false, error: expect.any(String) });
  });

  it.each(['PUT', 'PATCH', 'DELETE'])('%s of an invalid id is a 404 and writes nothing', async (method) => {
    await expectNothingWritten(async () => {
      for (const id of ['a'.repeat(25), '%zz', '..%2F..%2F', '%24ne']) {
        expectClientError(await t.api(method, `${PATH}/${id}`, { body: { title: 'x' } }), 404);
      }
    });
  });
});

describe('bodies that are not objects', () => {
  it.each([
    ['an array', '[{"title":"a"}]', 'Invalid record: the body must be a JSON object'],
    ['an empty array', '[]', 'Invalid record: the body must be a JSON object'],
    ['a string', '"title"', 'Malformed JSON body: expected an object or an array'],
    ['a number', '42', 'Malformed JSON body: expected an object or an array'],
    ['null', 'null', 'Malformed JSON body: expected an object or an array'],
    ['malformed JSON', '{"title": ', 'Malformed JSON body'],
  ])('%s is a 400', async (_label, raw, error) => {
    await expectNothingWritten(async () => {
      for (const [method, url] of WRITES) {
        expectClientError(await t.api(method, url(), { rawBody: raw }), 400, error);
      }
    });
  });

  it('no body at all is a 400 on POST and PUT', async () => {
    await expectNothingWritten(async () => {
      expectClientError(await t.api('POST', PATH), 400, 'Invalid record: the body must be a JSON object');
      expectClientError(await t.api('PUT', `${PATH}/${existing._id}`), 400, 'Invalid record: the body must be a JSON object');
    });
  });
});

describe('BODY_LIMIT', () => {
  let small: TestServer;
  beforeAll(async () => {
    small = await startTestServer({ BODY_LIMIT: '1kb' });
    await defineAll(small, await small.adminToken());
  });
  afterAll(async () => {
    await small.close();
  });

  it('a body over the limit is a 413 and writes nothing', async () => {
    const created = await small.api('POST', PATH, { body: { title: 'x'.repeat(900) } });
    expect(created.status, created.text).toBe(201);
    const before = await snapshot(small);
    for (const [method, url] of [['POST', PATH], ['PUT', `${PATH}/${created.body.data._id}`], ['PATCH', `${PATH}/${created.body.data._id}`]] as const) {
      expectClientError(await small.api(method, url, { body: { title: 'x'.repeat(1100) } }), 413, 'Request body is larger than the limit of 1024 bytes');
    }
    expect(await snapshot(small)).toEqual(before);
    expect((await small.api('GET', PATH)).body.meta.total).toBe(1);
  });
});
