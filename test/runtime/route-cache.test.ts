import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import { DEFAULT_NETWORK_ACCESS, type EndpointDoc } from '../../src/model/endpoint.ts';
import { RouteCache } from '../../src/runtime/route-cache.ts';
import { Revisions } from '../../src/services/revisions.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/types.ts';

// The route cache on a real embedded store: what a rebuild serves, what it leaves out (and
// says so in the log), and what it takes over from the previous table.

let dir: string;
let store: Store;
let revisions: Revisions;
const logged: string[] = [];
const logger = createLogger('error', (line) => logged.push(line));

function definition(method: 'GET' | 'POST', path: string, schema: Record<string, unknown>): Omit<EndpointDoc, '_id'> {
  return {
    name: `${method} ${path}`, description: '', slug: path.replace(/\W+/g, '-'), path, method, accessType: 'public', allowedGroupIds: [], groupId: null, schema,
    networkAccess: { ...DEFAULT_NETWORK_ACCESS }, inheritGroupNetworkAccess: true, enabled: true, apiVersion: null, isSystem: false, retentionDays: null,
    handler: { enabled: false, code: '' }, callCount: 0, revision: 1, createdAt: new Date(), updatedAt: new Date(),
  };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dyn-routes-'));
  store = await openStore({ databaseUrl: undefined, dataDir: dir });
  revisions = new Revisions(store, 0);
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the route cache', () => {
  it('leaves out a definition whose schema cannot be compiled, logs it, and serves the others', async () => {
    const endpoints = store.collection<EndpointDoc>('endpoints');
    // A field type this version does not know, as a store written by a newer version holds it.
    await endpoints.insertOne(definition('GET', '/api/future', { when: { type: 'hologram' } }) as EndpointDoc);
    await endpoints.insertOne(definition('POST', '/api/notes', { text: { type: 'string', required: true } }) as EndpointDoc);
    await revisions.bump('endpoints');
    const table = await new RouteCache({ store, revisions, logger }).current();
    expect(table.lookup('GET', '/api/future')).toBeNull();
    expect(logged.some((line) => line.includes('endpoint GET /api/future could not be compiled and is not served'))).toBe(true);
    const notes = table.lookup('POST', '/api/notes');
    expect(notes?.endpoint.doc.path).toBe('/api/notes');
    // Compiled on first use, it validates as ever.
    expect(notes?.endpoint.schema.validate({ text: 'hi' })).toEqual({ text: 'hi' });
    expect(() => notes?.endpoint.schema.validate({})).toThrow('Invalid record: text is required');
  });

  it('rebuilds after one change taking over the compiled parts of the unchanged definitions', async () => {
    const endpoints = store.collection<EndpointDoc>('endpoints');
    const routes = new RouteCache({ store, revisions, logger });
    const before = await routes.current();
    const other = await endpoints.insertOne(definition('GET', '/api/other', { n: { type: 'number' } }) as EndpointDoc);
    await revisions.bump('endpoints');
    const after = await routes.current();
    expect(after).not.toBe(before);
    const notesBefore = before.lookup('POST', '/api/notes')?.endpoint;
    const notesAfter = after.lookup('POST', '/api/notes')?.endpoint;
    expect(notesAfter?.schema).toBe(notesBefore?.schema);
    expect(notesAfter?.pattern).toBe(notesBefore?.pattern);
    expect(after.endpoint(other._id)?.doc.path).toBe('/api/other');

    await endpoints.updateOne({ _id: (notesBefore as { doc: EndpointDoc }).doc._id }, { $set: { schema: { text: { type: 'string', maxLength: 2 } } }, $inc: { revision: 1 } });
    await revisions.bump('endpoints');
    const changed = (await routes.current()).lookup('POST', '/api/notes')?.endpoint;
    expect(changed?.schema).not.toBe(notesBefore?.schema);
    expect(() => changed?.schema.validate({ text: 'long' })).toThrow('Invalid record: text must be at most 2 characters long');
  });
});
