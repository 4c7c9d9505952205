import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type ApiResponse, type TestServer } from '../helpers/test-server.ts';

/**
 * Management routes and dynamic endpoints answer the same failure alike — status, body and
 * headers — because both go through one renderer (runtime/error-response.ts) and one 404/405.
 */
let t: TestServer;
let admin: string;
let seq = 0;
const unique = (prefix = 'one') => `${prefix}${Date.now().toString(36)}${(seq++).toString(36)}`;

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
});
afterAll(async () => {
  await t.close();
});

async function define(body: Record<string, unknown>): Promise<void> {
  const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: unique('n'), accessType: 'public', schema: { title: { type: 'string' } }, ...body } });
  if (res.status !== 201) throw new Error(`endpoint create failed: ${res.status} ${res.text}`);
}

/** What a client sees of a failure, with the path it names replaced by `<path>`. */
function seen(res: ApiResponse, path: string, headers: string[] = []): unknown {
  return {
    status: res.status,
    body: JSON.parse(res.text.replaceAll(path, '<path>')),
    headers: Object.fromEntries(headers.map((name) => [name, res.headers.get(name) !== null])),
  };
}

describe('one renderer for management and dynamic routes', () => {
  it('a method a path is not served with is a 405 naming the path, with Allow, on both', async () => {
    const path = `/api/${unique()}/items`;
    await define({ path, method: 'GET' });
    const dynamic = await t.api('DELETE', path);
    const management = await t.api('DELETE', '/api/settings', { token: admin });
    expect(seen(dynamic, path, ['allow'])).toEqual(seen(management, '/api/settings', ['allow']));
    expect(dynamic.body).toEqual({ success: false, error: `Method DELETE is not allowed on ${path}` });
    expect(dynamic.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('a path nothing serves is the same 404 under a management root and outside one', async () => {
    const dynamicPath = `/api/${unique()}/nothing`;
    const managementPath = '/api/users/000000000000000000000000/nothing';
    const dynamic = await t.api('GET', dynamicPath);
    const management = await t.api('GET', managementPath, { token: admin });
    expect(dynamic).toMatchObject({ status: 404, body: { success: false, error: `No route for GET ${dynamicPath}` } });
    expect(management).toMatchObject({ status: 404, body: { success: false, error: `No route for GET ${managementPath}` } });
  });

  it('a busy database is a 503 with Retry-After on both, and the write can be retried', { timeout: 60_000 }, async () => {
    const path = `/api/${unique()}/items`;
    await define({ path, method: 'POST' });
    // Another connection holds the write lock: writes wait the store's busy timeout, then fail.
    const holder = new DatabaseSync(join(t.dataDir, 'dyn.db'));
    let dynamic: ApiResponse;
    let management: ApiResponse;
    try {
      holder.exec('BEGIN IMMEDIATE');
      dynamic = await t.api('POST', path, { body: { title: 'while locked' } });
      management = await t.api('POST', '/api/endpoints/groups', { token: admin, body: { name: unique('g') } });
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect(dynamic.status).toBe(503);
    expect(dynamic.body).toEqual({ success: false, error: 'The database is busy; try again' });
    expect(dynamic.headers.get('retry-after')).toBe('1');
    expect(management.status).toBe(503);
    expect(management.body).toEqual(dynamic.body);
    expect(management.headers.get('retry-after')).toBe('1');
    expect((await t.api('POST', path, { body: { title: 'after' } })).status).toBe(201);
  });
});
