import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordDoc } from '../../src/model/endpoint.ts';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * `?populate` expands reference fields into `{id, ...fields}` of the linked record, one query
 * per field per page. A reference stays a bare id when the linked record is gone, when the
 * caller could not read it through the target path's own GET endpoint, or when that path has
 * no GET endpoint at all.
 */
let t: TestServer;
let admin: string;
let signedIn: string;

async function define(path: string, methods: readonly string[], schema: Record<string, unknown>, accessType = 'public'): Promise<void> {
  for (const method of methods) {
    const res = await t.api('POST', '/api/endpoints', {
      token: admin,
      body: { name: `${method} ${path}`, path, method, accessType, schema },
    });
    if (res.status !== 201) throw new Error(`defining ${method} ${path} failed: ${res.status} ${res.text}`);
  }
}

async function create(path: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await t.api('POST', path, { body });
  if (res.status !== 201) throw new Error(`creating at ${path} failed: ${res.status} ${res.text}`);
  return res.body.data;
}

let fiction: Record<string, any>;
let poetry: Record<string, any>;
let author: Record<string, any>;
let supplier: Record<string, any>;
let book: Record<string, any>;

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  signedIn = (await createUserWith(t, [])).token;

  // Categories: readable by anyone. Authors: readable when signed in. Suppliers: no GET endpoint.
  await define('/api/pop/categories', ['GET', 'POST', 'DELETE'], { name: { type: 'string' } });
  await define('/api/pop/authors', ['POST'], { name: { type: 'string' } });
  await define('/api/pop/authors', ['GET'], { name: { type: 'string' } }, 'authenticated');
  await define('/api/pop/suppliers', ['POST'], { name: { type: 'string' } });
  await define('/api/pop/books', ['GET', 'POST'], {
    title: { type: 'string' },
    category: { type: 'reference', ref: '/api/pop/categories' },
    author: { type: 'reference', ref: '/api/pop/authors' },
    supplier: { type: 'reference', ref: '/api/pop/suppliers' },
    shelves: { type: 'array', items: { type: 'reference', ref: '/api/pop/categories' } },
  });

  fiction = await create('/api/pop/categories', { name: 'Fiction' });
  poetry = await create('/api/pop/categories', { name: 'Poetry' });
  author = await create('/api/pop/authors', { name: 'Le Guin' });
  supplier = await create('/api/pop/suppliers', { name: 'Acme' });
  book = await create('/api/pop/books', { title: 'Earthsea', category: fiction._id, author: author._id, supplier: supplier._id, shelves: [fiction._id, poetry._id] });
});
afterAll(async () => {
  await t.close();
});

const expanded = (record: Record<string, any>) => ({ id: record._id, name: record.name });

describe('populate', () => {
  it('without populate, references are bare ids', async () => {
    const res = await t.api('GET', `/api/pop/books/${book._id}`, { token: signedIn });
    expect(res.body.data).toEqual(book);
  });

  it('?populate=true expands every reference field the caller can read', async () => {
    const res = await t.api('GET', `/api/pop/books/${book._id}?populate=true`, { token: signedIn });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      ...book,
      category: expanded(fiction),
      author: expanded(author),
      supplier: supplier._id, // no GET endpoint on /api/pop/suppliers
      shelves: [expanded(fiction), expanded(poetry)],
    });
  });

  it('?populate=category expands that field only', async () => {
    const res = await t.api('GET', `/api/pop/books/${book._id}?populate=category`, { token: signedIn });
    expect(res.body.data).toEqual({ ...book, category: expanded(fiction) });
  });

  it('?populate=category,author expands both, in lists too', async () => {
    const res = await t.api('GET', `/api/pop/books?populate=category,author`, { token: signedIn });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toContainEqual({ ...book, category: expanded(fiction), author: expanded(author) });
  });

  it('arrays of references expand item by item', async () => {
    const res = await t.api('GET', `/api/pop/books/${book._id}?populate=shelves`);
    expect(res.body.data.shelves).toEqual([expanded(fiction), expanded(poetry)]);
  });

  it('?populate=false expands nothing', async () => {
    const res = await t.api('GET', `/api/pop/books/${book._id}?populate=false`, { token: signedIn });
    expect(res.body.data).toEqual(book);
  });

  it.each([
    ['anonymous caller', undefined, (a: Record<string, any>) => a._id],
    ['signed-in caller', 'signed in', (a: Record<string, any>) => expanded(a)],
  ])('honours the target GET endpoint access type: %s', async (_label, who, expected) => {
    const res = await t.api('GET', `/api/pop/books/${book._id}?populate=true`, who ? { token: signedIn } : {});
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.author).toEqual(expected(author));
    expect(res.body.data.category).toEqual(expanded(fiction));
  });

  it('a reference to a deleted record stays a bare id; deletes do not cascade', async () => {
    const doomed = await create('/api/pop/categories', { name: 'Doomed' });
    const orphan = await create('/api/pop/books', { title: 'Orphan', category: doomed._id, shelves: [doomed._id, poetry._id] });
    expect((await t.api('DELETE', `/api/pop/categories/${doomed._id}`)).status).toBe(200);
    const res = await t.api('GET', `/api/pop/books/${orphan._id}?populate=true`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({ ...orphan, category: doomed._id, shelves: [doomed._id, expanded(poetry)] });
    expect((await t.api('GET', `/api/pop/books/${orphan._id}`)).body.data).toEqual(orphan);
  });

  it('records without a value for the reference field are left as they are', async () => {
    const bare = await create('/api/pop/books', { title: 'No links' });
    const res = await t.api('GET', `/api/pop/books/${bare._id}?populate=true`);
    expect(res.body.data).toEqual(bare);
  });

  it.each([
    ['unknown', 'populate: "unknown" is not a reference field of this endpoint'],
    ['title', 'populate: "title" is not a reference field of this endpoint'],
    ['category,nope', 'populate: "nope" is not a reference field of this endpoint'],
  ])('?populate=%s is a 400', async (populate, error) => {
    for (const url of ['/api/pop/books', `/api/pop/books/${book._id}`]) {
      const res = await t.api('GET', `${url}?populate=${populate}`);
      expect(res.status, res.text).toBe(400);
      expect(res.body).toEqual({ success: false, error, details: [{ field: 'populate', message: error.replace(/^populate: /, '') }] });
    }
  });
});

describe('populate batching', () => {
  beforeAll(async () => {
    await define('/api/pop/batch', ['GET', 'POST'], {
      n: { type: 'number' },
      category: { type: 'reference', ref: '/api/pop/categories' },
      author: { type: 'reference', ref: '/api/pop/authors' },
      shelves: { type: 'array', items: { type: 'reference', ref: '/api/pop/categories' } },
    });
    for (let n = 0; n < 25; n++) {
      await create('/api/pop/batch', { n, category: n % 2 ? fiction._id : poetry._id, author: author._id, shelves: [fiction._id, poetry._id] });
    }
  });

  /** Runs `action` with a spy on the real RecordsService.findByIds; returns the paths it was asked about. */
  async function countingFindByIds(action: () => Promise<void>): Promise<string[]> {
    const records = t.server.services.records;
    const original = records.findByIds;
    const ownBefore = Object.hasOwn(records, 'findByIds');
    const calls: string[] = [];
    records.findByIds = function (this: typeof records, resourcePath: string, ids: readonly string[]): Promise<RecordDoc[]> {
      calls.push(resourcePath);
      return original.call(this, resourcePath, ids);
    };
    try {
      await action();
    } finally {
      if (ownBefore) records.findByIds = original;
      else Reflect.deleteProperty(records, 'findByIds'); // back to the prototype's method
    }
    return calls;
  }

  it('one query per populated field for a page of 20 records, never one per record', async () => {
    const calls = await countingFindByIds(async () => {
      const res = await t.api('GET', '/api/pop/batch?populate=category,author&sort=n', { token: signedIn });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toHaveLength(20);
      for (const item of res.body.data) {
        expect(item.category).toEqual(item.n % 2 ? expanded(fiction) : expanded(poetry));
        expect(item.author).toEqual(expanded(author));
      }
    });
    expect(calls.sort()).toEqual(['/api/pop/authors', '/api/pop/categories']);
  });

  it('populate=true on a page of 20: one query per reference field (arrays included)', async () => {
    const calls = await countingFindByIds(async () => {
      const res = await t.api('GET', '/api/pop/batch?populate=true', { token: signedIn });
      expect(res.body.data).toHaveLength(20);
      expect(res.body.data.every((item: any) => item.shelves[0]?.id === fiction._id)).toBe(true);
    });
    expect(calls.sort()).toEqual(['/api/pop/authors', '/api/pop/categories', '/api/pop/categories']);
  });

  it('a field the caller may not read costs no query', async () => {
    const calls = await countingFindByIds(async () => {
      const res = await t.api('GET', '/api/pop/batch?populate=author');
      expect(res.body.data.every((item: any) => item.author === author._id)).toBe(true);
    });
    expect(calls).toEqual([]);
  });

  it('the spy is removed afterwards', () => {
    expect(Object.hasOwn(t.server.services.records, 'findByIds')).toBe(false);
  });
});
