import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { ensureUserGroup, exportJson, exportYaml, populateShop, post } from './fixture.ts';

/**
 * POST /api/project/import: a bundle (JSON or YAML) into a store, merged or replacing. The
 * source server holds a populated shop; each target is a fresh server.
 */
let source: TestServer;
let ids: { categoryId: string; productId: string };
const targets: TestServer[] = [];

async function freshServer(): Promise<TestServer> {
  const server = await startTestServer();
  targets.push(server);
  await ensureUserGroup(server, 'Editors'); // user groups are not part of a bundle
  return server;
}

beforeAll(async () => {
  source = await startTestServer();
  ids = await populateShop(source);
});
afterAll(async () => {
  await Promise.all([source, ...targets].map((server) => server.close()));
});

describe('import', () => {
  it('export → import(replace) into a fresh server → export gives the same JSON and the same YAML', async () => {
    const bundle = await exportJson(source, '&data=true&settings=true');
    const target = await freshServer();
    const res = await post(target, '/api/project/import?mode=replace', bundle);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ mode: 'replace', applied: true, records: 2, settings: true, summary: { create: 7, update: 0, delete: 0 } });
    expect(await exportJson(target, '&data=true&settings=true')).toEqual(bundle);
    expect(await exportYaml(target, 'data=true&settings=true')).toBe(await exportYaml(source, 'data=true&settings=true'));
    expect(await exportYaml(target)).toBe(await exportYaml(source));
  });

  it('takes YAML text with content type application/yaml', async () => {
    const yaml = await exportYaml(source);
    const target = await freshServer();
    const res = await target.api('POST', '/api/project/import?mode=replace', { token: await target.adminToken(), rawBody: yaml, headers: { 'content-type': 'application/yaml' } });
    expect(res.status, res.text).toBe(200);
    expect(await exportYaml(target)).toBe(yaml);
  });

  it('refuses malformed YAML and other content types', async () => {
    const token = await source.adminToken();
    const bad = await source.api('POST', '/api/project/import', { token, rawBody: 'groups: [unclosed', headers: { 'content-type': 'application/yaml' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^Malformed YAML body/);
    const proto = await source.api('POST', '/api/project/plan', { token, rawBody: 'groups:\n  - name: x\n    __proto__: {}\n', headers: { 'content-type': 'application/yaml' } });
    expect(proto.status).toBe(400);
    const text = await source.api('POST', '/api/project/import', { token, rawBody: 'hello', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
  });

  it('keeps record ids, so references between records still resolve', async () => {
    const target = await freshServer();
    const res = await post(target, '/api/project/import?mode=replace', await exportJson(source, '&data=true'));
    expect(res.status, res.text).toBe(200);
    const category = await target.api('GET', `/api/shop/categories/${ids.categoryId}`);
    expect(category.body.data).toMatchObject({ _id: ids.categoryId, title: 'Books' });
    const products = await target.api('GET', '/api/v1/shop/products?populate=category');
    expect(products.body.meta.total).toBe(1);
    expect(products.body.data[0]).toMatchObject({ _id: ids.productId, title: 'Dune', category: { id: ids.categoryId, title: 'Books' } });
    // Records created after the import still work, and counters count both.
    expect((await target.api('POST', '/api/shop/categories', { body: { title: 'Films' } })).status).toBe(201);
    expect((await target.api('GET', '/api/shop/categories')).body.meta.total).toBe(2);
  });

  it('replace with data makes the bundle records the only ones; merge adds and overwrites by id', async () => {
    const target = await freshServer();
    const bundle = await exportJson(source, '&data=true');
    await post(target, '/api/project/import?mode=replace', bundle);
    await target.api('POST', '/api/shop/categories', { body: { title: 'Extra' } });
    expect((await target.api('GET', '/api/shop/categories')).body.meta.total).toBe(2);

    const merged = structuredClone(bundle);
    merged.data['/api/shop/categories'][0].title = 'Books, renamed';
    const merge = await post(target, '/api/project/import?mode=merge', merged);
    expect(merge.status, merge.text).toBe(200);
    const afterMerge = (await target.api('GET', '/api/shop/categories')).body;
    expect(afterMerge.meta.total).toBe(2);
    expect(afterMerge.data.map((c: any) => c.title)).toEqual(['Books, renamed', 'Extra']);

    await post(target, '/api/project/import?mode=replace', bundle);
    const afterReplace = (await target.api('GET', '/api/shop/categories')).body;
    expect(afterReplace.meta.total).toBe(1);
    expect(afterReplace.data.map((c: any) => c.title)).toEqual(['Books']);
  });

  it('refuses records for a path no endpoint serves, and records with bad ids or keys', async () => {
    const target = await freshServer();
    const res = await post(target, '/api/project/import', {
      groups: [],
      endpoints: [{ name: 'Notes', path: '/api/notes', method: 'POST', accessType: 'public', schema: {} }],
      data: { '/api/elsewhere': [{ title: 'x' }], '/api/notes': [{ _id: 'nope', title: 'x' }, { $where: 1 }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([
      { field: 'data./api/elsewhere', message: 'no endpoint in the bundle or the store serves /api/elsewhere' },
      { field: 'data./api/notes[0]._id', message: 'must be a 24-character hex id' },
      { field: 'data./api/notes[1].$where', message: 'is not a storable field name' },
    ]);
    expect((await exportJson(target)).endpoints).toEqual([]);
  });

  it('merge refuses a record whose id belongs to a record of another path, and changes nothing', async () => {
    const target = await freshServer();
    await post(target, '/api/project/import?mode=replace', await exportJson(source, '&data=true'));
    await post(target, '/api/project/apply', { endpoints: [{ name: 'Notes', path: '/api/notes', method: 'POST', accessType: 'public', schema: {} }] });
    const before = await exportJson(target, '&data=true');
    const res = await post(target, '/api/project/import?mode=merge', { data: { '/api/notes': [{ _id: ids.categoryId, title: 'stolen' }] } });
    expect(res.status).toBe(400);
    const message = `is the id of a record of /api/shop/categories; an import cannot move it to /api/notes`;
    expect(res.body).toEqual({ success: false, error: `Invalid bundle: data./api/notes._id ${message}`, details: [{ field: 'data./api/notes._id', message }] });
    expect((await target.api('GET', `/api/shop/categories/${ids.categoryId}`)).status).toBe(200);
    expect(await exportJson(target, '&data=true')).toEqual(before);
  });

  it('a record repeating a unique value of another record is a 409, in merge and in replace, and changes nothing', async () => {
    const target = await freshServer();
    const codes = { name: 'Codes', path: '/api/codes', method: 'POST', accessType: 'public', schema: { code: { type: 'string', unique: true } } };
    expect((await post(target, '/api/project/apply', { endpoints: [codes, { ...codes, method: 'GET' }] })).status).toBe(200);
    const existing = await target.api('POST', '/api/codes', { body: { code: 'A' } });
    expect(existing.status).toBe(201);
    const before = await exportJson(target, '&data=true');
    const clash = { data: { '/api/codes': [{ _id: 'aaaaaaaaaaaaaaaaaaaaaaaa', code: 'A' }] } };
    const merge = await post(target, '/api/project/import?mode=merge', clash);
    expect(merge.status, merge.text).toBe(409);
    expect(merge.body.success).toBe(false);
    expect(merge.body).toEqual({
      success: false,
      error: 'Import refused: code must be unique on /api/codes: two records of the import, or one of it and one kept in the store, have the same code; nothing was imported',
      details: [{ field: 'data[/api/codes].code', message: 'must be unique' }],
    });
    const twice = { data: { '/api/codes': [{ _id: 'bbbbbbbbbbbbbbbbbbbbbbbb', code: 'B' }, { _id: 'cccccccccccccccccccccccc', code: 'B' }] } };
    expect((await post(target, '/api/project/import?mode=merge', twice)).status).toBe(409);
    expect((await post(target, '/api/project/import?mode=replace', { ...before, ...twice })).status).toBe(409);
    expect(await exportJson(target, '&data=true')).toEqual(before);
    const list = (await target.api('GET', '/api/codes')).body;
    expect(list.data.map((r: any) => r._id)).toEqual([existing.body.data._id]);
    // The same id with its own value is still an overwrite, not a clash.
    const overwrite = await post(target, '/api/project/import?mode=merge', { data: { '/api/codes': [{ _id: existing.body.data._id, code: 'A2' }] } });
    expect(overwrite.status, overwrite.text).toBe(200);
    expect((await target.api('GET', `/api/codes/${existing.body.data._id}`)).body.data.code).toBe('A2');
  });

  it("a json field's `$` and dotted keys are data: an export of such a record imports again", async () => {
    const source2 = await freshServer();
    const items = { name: 'Items', path: '/api/items', method: 'POST', accessType: 'public', schema: { sku: { type: 'string' }, extra: { type: 'json' } } };
    expect((await post(source2, '/api/project/apply', { endpoints: [items, { ...items, method: 'GET' }] })).status).toBe(200);
    const created = await source2.api('POST', '/api/items', { body: { sku: 'A1', extra: { $x: 1, 'a.b': { $in: [2] } } } });
    expect(created.status, created.text).toBe(201);
    const bundle = await exportJson(source2, '&data=true');
    const target = await freshServer();
    const res = await post(target, '/api/project/import?mode=replace', bundle);
    expect(res.status, res.text).toBe(200);
    expect((await target.api('GET', `/api/items/${created.body.data._id}`)).body.data.extra).toEqual({ $x: 1, 'a.b': { $in: [2] } });
    // At a record's top level such names are still refused: they are no field's name.
    expect((await post(target, '/api/project/import?mode=merge', { data: { '/api/items': [{ _id: 'dddddddddddddddddddddddd', $x: 1 }] } })).status).toBe(400);
  });

  it("a json field's `__proto__` key is data: a JSON export of such a record imports again; a definition may not hold one", async () => {
    const source2 = await freshServer();
    const items = { name: 'Protos', path: '/api/protos', method: 'POST', accessType: 'public', schema: { extra: { type: 'json' } } };
    expect((await post(source2, '/api/project/apply', { endpoints: [items, { ...items, method: 'GET' }] })).status).toBe(200);
    const created = await source2.api('POST', '/api/protos', { rawBody: '{"extra":{"__proto__":{"x":1},"a":2}}' });
    expect(created.status, created.text).toBe(201);
    const exported = await source2.api('GET', '/api/project/export?format=json&data=true', { token: await source2.adminToken() });
    const target = await freshServer();
    const res = await target.api('POST', '/api/project/import?mode=replace', { token: await target.adminToken(), rawBody: JSON.stringify(exported.body.data) });
    expect(res.status, res.text).toBe(200);
    const read = await target.api('GET', `/api/protos/${created.body.data._id}`);
    expect(read.text).toContain('"extra":{"__proto__":{"x":1},"a":2}');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    // And so does a YAML export.
    const yaml = await source2.api('GET', '/api/project/export?format=yaml&data=true', { token: await source2.adminToken() });
    expect(yaml.text).toContain('__proto__:');
    const fromYaml = await freshServer();
    const imported = await fromYaml.api('POST', '/api/project/import?mode=replace', { token: await fromYaml.adminToken(), rawBody: yaml.text, headers: { 'content-type': 'application/yaml' } });
    expect(imported.status, imported.text).toBe(200);
    expect((await fromYaml.api('GET', `/api/protos/${created.body.data._id}`)).text).toContain('"extra":{"__proto__":{"x":1},"a":2}');
    const yamlAtTop = await fromYaml.api('POST', '/api/project/import?mode=merge', { token: await fromYaml.adminToken(), rawBody: 'data:\n  /api/protos:\n    - _id: dddddddddddddddddddddddd\n      __proto__: {x: 1}\n', headers: { 'content-type': 'application/yaml' } });
    expect(yamlAtTop.status, yamlAtTop.text).toBe(400);
    // Outside the records, and at a record's top, the key is refused as before.
    const inDefinition = await target.api('POST', '/api/project/import?mode=merge', { token: await target.adminToken(), rawBody: '{"endpoints":[{"__proto__":{"x":1}}]}' });
    expect(inDefinition.status, inDefinition.text).toBe(400);
    const atTop = await target.api('POST', '/api/project/import?mode=merge', { token: await target.adminToken(), rawBody: `{"data":{"/api/protos":[{"_id":"dddddddddddddddddddddddd","__proto__":{"x":1}}]}}` });
    expect(atTop.status, atTop.text).toBe(400);
  });

  it('a record nested as deep as a record may be exports and imports again, as JSON and as YAML; deeper is a 400', async () => {
    const source2 = await freshServer();
    const items = { name: 'Deep', path: '/api/deep', method: 'POST', accessType: 'public', schema: { extra: { type: 'json' } } };
    expect((await post(source2, '/api/project/apply', { endpoints: [items, { ...items, method: 'GET' }] })).status).toBe(200);
    // 32 objects inside the record's own: the deepest a record's body may be.
    const deep = JSON.parse('{"a":'.repeat(32) + '1' + '}'.repeat(32));
    const created = await source2.api('POST', '/api/deep', { body: { extra: deep } });
    expect(created.status, created.text).toBe(201);
    const bundle = await exportJson(source2, '&data=true');
    const yamlText = await exportYaml(source2, 'data=true');
    for (const send of [
      (target: TestServer) => post(target, '/api/project/import?mode=replace', bundle),
      async (target: TestServer) => target.api('POST', '/api/project/import?mode=replace', { token: await target.adminToken(), rawBody: yamlText, headers: { 'content-type': 'application/yaml' } }),
    ]) {
      const target = await freshServer();
      const res = await send(target);
      expect(res.status, res.text).toBe(200);
      expect((await target.api('GET', `/api/deep/${created.body.data._id}`)).body.data.extra).toEqual(deep);
    }
    const deeper = { ...bundle, data: { '/api/deep': [{ ...bundle.data['/api/deep'][0], extra: { a: deep } }] } };
    const refused = await post(await freshServer(), '/api/project/import?mode=replace', deeper);
    expect(refused.status, refused.text).toBe(400);
    // Definitions keep the limit of any body: what a bundle stores can be saved through the API again.
    const deepDefault = { name: 'Deep default', path: '/api/deep-default', method: 'POST', accessType: 'public', schema: { extra: { type: 'json', defaultValue: JSON.parse('{"a":'.repeat(31) + '1' + '}'.repeat(31)) } } };
    const definition = await post(await freshServer(), '/api/project/apply', { endpoints: [deepDefault] });
    expect(definition.status, definition.text).toBe(400);
    expect(definition.body.error).toBe('Request body is nested more than 32 levels deep');
  });

  it('records on a parameter path land on the path as requests reach it (`:shopId` is a value, percent-encoded like any other)', async () => {
    const target = await freshServer();
    await post(target, '/api/project/apply', { endpoints: [{ name: 'Items', path: '/api/shops/:shopId/items', method: 'GET', accessType: 'public', schema: { label: { type: 'string' } } }] });
    const id = '6b09b0df031e919c8cff9997';
    const res = await post(target, '/api/project/import?mode=merge', { data: { '/api/shops/:shopId/items': [{ _id: id, label: 'literal' }], '/api/shops/a%20b/items': [{ label: 'spaced' }] } });
    expect(res.status, res.text).toBe(200);
    expect((await target.api('GET', '/api/shops/:shopId/items')).body.data.map((r: any) => r._id)).toEqual([id]);
    expect((await target.api('GET', `/api/shops/:shopId/items/${id}`)).status).toBe(200);
    expect((await target.api('GET', '/api/shops/a%20b/items')).body.data.map((r: any) => r.label)).toEqual(['spaced']);
    expect(Object.keys((await exportJson(target, '&data=true')).data).sort()).toEqual(['/api/shops/%3AshopId/items', '/api/shops/a%20b/items']);
    const malformed = await post(target, '/api/project/import?mode=merge', { data: { '/api/shops/%zz/items': [{ label: 'x' }] } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.details).toEqual([{ field: 'data./api/shops/%zz/items', message: 'is not a valid path (a malformed %-escape)' }]);
  });

  it('merge (the default) adds and updates but deletes nothing', async () => {
    const target = await freshServer();
    await post(target, '/api/project/apply', { groups: [{ name: 'Local' }], endpoints: [{ name: 'Local', path: '/api/local', method: 'GET', accessType: 'public', schema: {} }] });
    const res = await post(target, '/api/project/import', await exportJson(source));
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ mode: 'merge', records: null, settings: false });
    const after = await exportJson(target);
    expect(after.groups.map((g: any) => g.name)).toEqual(['Admin tools', 'Local', 'Shop']);
    expect(after.endpoints.map((e: any) => e.path)).toContain('/api/local');
  });

  it('imports settings: merge changes the given ones, replace also resets the others to their defaults', async () => {
    const target = await freshServer();
    const token = await target.adminToken();
    await target.api('PUT', '/api/settings', { token, body: { maxPageSize: 500, registrationEnabled: true } });
    const bundle = await exportJson(source);
    const merge = await post(target, '/api/project/import?mode=merge', { ...bundle, settings: { defaultPageSize: 7 } });
    expect(merge.status, merge.text).toBe(200);
    expect((await exportJson(target, '&settings=true')).settings).toMatchObject({ defaultPageSize: 7, maxPageSize: 500, registrationEnabled: true });

    const replace = await post(target, '/api/project/import?mode=replace', { ...bundle, settings: { defaultPageSize: 9 } });
    expect(replace.status, replace.text).toBe(200);
    expect((await exportJson(target, '&settings=true')).settings).toMatchObject({ defaultPageSize: 9, maxPageSize: 100, registrationEnabled: false });

    const invalid = await post(target, '/api/project/import?mode=merge', { ...bundle, settings: { defaultPageSize: 0 } });
    expect(invalid.status).toBe(400);
  });

  it('refuses an empty bundle for replace (400)', async () => {
    const before = await exportJson(source);
    for (const body of [{}, { groups: [], endpoints: [] }, { groups: [], endpoints: [], settings: { defaultPageSize: 5 } }]) {
      const res = await post(source, '/api/project/import?mode=replace', body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^Refusing to replace with a bundle that has no groups, no endpoints, no cronJobs and no webhooks/);
    }
    expect(await exportJson(source)).toEqual(before);
  });

  it('a kind whose list the bundle leaves out is left as it is by replace and by apply with prune; an empty list empties it', async () => {
    const target = await freshServer();
    const token = await target.adminToken();
    const job = { name: 'nightly', schedule: '0 3 * * *', action: { type: 'javascript', code: 'async function run() { return 1; }' } };
    expect((await target.api('POST', '/api/cron', { token, body: job })).status).toBe(201);
    const cronNames = async () => (await target.api('GET', '/api/cron', { token })).body.data.map((j: { name: string }) => j.name);
    // Groups and endpoints only, as the spec shapes a project file: the cron job stays.
    const { groups, endpoints } = await exportJson(source);
    const replaced = await post(target, '/api/project/import?mode=replace', { groups, endpoints });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body.data.changes.filter((change: { kind: string }) => change.kind === 'cronJob')).toEqual([]);
    expect(await cronNames()).toEqual(['nightly']);
    const pruned = await post(target, '/api/project/apply?prune=true', { groups, endpoints });
    expect(pruned.status, pruned.text).toBe(200);
    expect(pruned.body.data.summary).toEqual({ create: 0, update: 0, delete: 0 });
    expect(await cronNames()).toEqual(['nightly']);
    // Endpoints left out too: groups alone do not delete the endpoints (which name them).
    const groupsOnly = await post(target, '/api/project/plan?prune=true', { groups });
    expect(groupsOnly.body.data.summary).toEqual({ create: 0, update: 0, delete: 0 });
    // The list given, even empty, is the whole of that kind.
    const emptied = await post(target, '/api/project/import?mode=replace', { groups, endpoints, cronJobs: [] });
    expect(emptied.status, emptied.text).toBe(200);
    expect(emptied.body.data.changes).toContainEqual(expect.objectContaining({ kind: 'cronJob', key: 'nightly', action: 'delete' }));
    expect(await cronNames()).toEqual([]);
  });

  it('refuses an unknown user group by name and changes nothing', async () => {
    const target = await startTestServer(); // no Editors group here
    targets.push(target);
    const before = await exportJson(target, '&data=true&settings=true');
    const res = await post(target, '/api/project/import?mode=replace', await exportJson(source, '&data=true&settings=true'));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Invalid bundle: endpoints[POST /api/shop/products].allowedGroups names the unknown user group "Editors"');
    expect(await exportJson(target, '&data=true&settings=true')).toEqual(before);
  });

  it('a replace that fails midway leaves the old state: definitions, records and settings', async () => {
    const target = await freshServer();
    const original = await exportJson(source, '&data=true&settings=true');
    expect((await post(target, '/api/project/import?mode=replace', original)).status).toBe(200);
    // A record whose endpoint has been deleted since (deletes never cascade) survives too.
    const token = await target.adminToken();
    const orphans = await target.api('POST', '/api/endpoints', { token, body: { name: 'Orphans', path: '/api/orphans', method: 'POST', accessType: 'public', schema: {} } });
    expect((await target.api('POST', '/api/orphans', { body: {} })).status).toBe(201);
    expect((await target.api('DELETE', `/api/endpoints/${orphans.body.data._id}`, { token })).status).toBe(200);
    const before = await exportJson(target, '&data=true&settings=true');
    expect(Object.keys(before.data)).toContain('/api/orphans');

    // Valid on its own, refused only by the endpoints service (it is the /api/v1 alias of the
    // versioned products list), and sorted after changes that succeed first: new settings, a new
    // group, an updated and a created endpoint.
    const bundle = structuredClone(original);
    bundle.groups.push({ name: 'Zeta' });
    bundle.endpoints[0].description = 'changed';
    bundle.endpoints[0].group = 'Zeta';
    bundle.endpoints.push({ name: 'New', path: '/api/new', method: 'GET', accessType: 'public', schema: {} });
    bundle.endpoints.push({ name: 'Clash', path: '/api/v1/shop/products', method: 'GET', accessType: 'public', schema: {} });
    bundle.endpoints = bundle.endpoints.filter((e: any) => e.path !== '/api/stats');
    bundle.settings.defaultPageSize = 3;
    bundle.data['/api/shop/categories'].push({ title: 'Added' });

    const res = await post(target, '/api/project/import?mode=replace', bundle);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/^endpoint GET \/api\/v1\/shop\/products: GET \/api\/v1\/shop\/products is already served by "List products"/);
    expect(await exportJson(target, '&data=true&settings=true')).toEqual(before);
    expect((await target.api('GET', '/api/new')).status).toBe(404);
  });

  it('writes project_imported to the audit log', async () => {
    const logs = await source.api('GET', '/api/dashboard/logs?action=project_imported', { token: await source.adminToken() });
    const target = targets[0]!;
    const targetLogs = await target.api('GET', '/api/dashboard/logs?action=project_imported', { token: await target.adminToken() });
    expect(logs.body.data).toEqual([]);
    expect(targetLogs.body.data[0]).toMatchObject({
      action: 'project_imported',
      source: 'project',
      message: 'Project imported (replace): 7 created, 0 updated, 0 deleted; 2 records, settings',
    });
  });
});
