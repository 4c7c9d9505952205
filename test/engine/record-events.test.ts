import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventMap, RecordEvent } from '../../src/events/bus.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * record.created / record.updated / record.deleted over real HTTP: every write through an
 * endpoint — CRUD and a handler's db — is announced with the record as clients see it.
 */
let t: TestServer;
let admin: string;
let seq = 0;
const unique = (prefix = 'rev') => `${prefix}${Date.now().toString(36)}${(seq++).toString(36)}`;

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
});
afterAll(async () => {
  await t.close();
});

async function define(body: Record<string, unknown>): Promise<string> {
  const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: unique('n'), accessType: 'public', schema: { title: { type: 'string', required: true } }, ...body } });
  if (res.status !== 201) throw new Error(`endpoint create failed: ${res.status} ${res.text}`);
  return res.body.data._id as string;
}

type RecordEventName = 'record.created' | 'record.updated' | 'record.deleted';

/** Every record event on paths under `prefix`, in order, with its name. */
function listen(prefix: string): { seen: Array<{ event: RecordEventName } & RecordEvent>; stop: () => void } {
  const seen: Array<{ event: RecordEventName } & RecordEvent> = [];
  const stops = (['record.created', 'record.updated', 'record.deleted'] as const).map((event) =>
    t.server.services.events.on(event, (data: EventMap[typeof event]) => {
      if (data.path.startsWith(prefix)) seen.push({ event, ...data });
    }),
  );
  return { seen, stop: () => stops.forEach((stop) => stop()) };
}

describe('record events', () => {
  it('CRUD writes announce the record: created on POST, updated on PUT and PATCH, deleted on DELETE', async () => {
    const path = `/api/${unique()}/items`;
    const ids = {
      post: await define({ path, method: 'POST' }),
      put: await define({ path, method: 'PUT' }),
      patch: await define({ path, method: 'PATCH' }),
      del: await define({ path, method: 'DELETE' }),
    };
    const events = listen(path);
    try {
      const created = (await t.api('POST', path, { body: { title: 'one' } })).body.data;
      const replaced = (await t.api('PUT', `${path}/${created._id}`, { body: { title: 'two' } })).body.data;
      const patched = (await t.api('PATCH', `${path}/${created._id}`, { body: { title: 'three' } })).body.data;
      const deleted = (await t.api('DELETE', `${path}/${created._id}`)).body.data;
      const recordId = created._id as string;
      expect(events.seen).toEqual([
        { event: 'record.created', path, endpointId: ids.post, recordId, record: created },
        { event: 'record.updated', path, endpointId: ids.put, recordId, record: replaced },
        { event: 'record.updated', path, endpointId: ids.patch, recordId, record: patched },
        { event: 'record.deleted', path, endpointId: ids.del, recordId, record: deleted },
      ]);
      expect(events.seen[0]?.record).toEqual({ _id: recordId, title: 'one', createdAt: expect.any(String), updatedAt: expect.any(String) });
    } finally {
      events.stop();
    }
  });

  it('a refused write announces nothing', async () => {
    const path = `/api/${unique()}/items`;
    await define({ path, method: 'POST' });
    await define({ path, method: 'DELETE' });
    const events = listen(path);
    try {
      expect((await t.api('POST', path, { body: {} })).status).toBe(400);
      expect((await t.api('DELETE', `${path}/000000000000000000000000`)).status).toBe(404);
      expect(events.seen).toEqual([]);
    } finally {
      events.stop();
    }
  });

  it('a handler\'s db.create, db.update and db.delete announce their records too', async () => {
    const path = `/api/${unique()}/notes`;
    const code = `async function handler(req, db) {
      const made = await db.create({ title: 'made' });
      const changed = await db.update(made._id, { title: 'changed' });
      await db.delete(made._id);
      return { status: 200, data: { made, changed } };
    }`;
    const id = await define({ path, method: 'POST', schema: {}, handler: { enabled: true, code } });
    const events = listen(path);
    try {
      const res = await t.api('POST', path, { body: {} });
      expect(res.status, res.text).toBe(200);
      const { made, changed } = res.body.data;
      expect(events.seen).toEqual([
        { event: 'record.created', path, endpointId: id, recordId: made._id, record: made },
        { event: 'record.updated', path, endpointId: id, recordId: made._id, record: changed },
        { event: 'record.deleted', path, endpointId: id, recordId: made._id, record: changed },
      ]);
    } finally {
      events.stop();
    }
  });

  it('records on a :param path carry the filled resourcePath', async () => {
    const base = unique();
    await define({ path: `/api/${base}/:shop/items`, method: 'POST' });
    const events = listen(`/api/${base}/`);
    try {
      expect((await t.api('POST', `/api/${base}/s1/items`, { body: { title: 'x' } })).status).toBe(201);
      expect(events.seen.map((e) => [e.event, e.path])).toEqual([['record.created', `/api/${base}/s1/items`]]);
    } finally {
      events.stop();
    }
  });
});
