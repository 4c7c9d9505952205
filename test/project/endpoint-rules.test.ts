import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateSpec } from '../../src/project/validate-bundle.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * One set of endpoint rules (src/services/endpoint-rules.ts): a definition the API refuses is
 * refused by the project checks for the same field, in the same words.
 */
let t: TestServer;
let token: string;
beforeAll(async () => {
  t = await startTestServer();
  token = await t.adminToken();
});
afterAll(async () => {
  await t.close();
});

const base = { name: 'Items', path: '/api/rules/items', method: 'GET', accessType: 'public', schema: { title: { type: 'string' } } };

describe('the API and the project checks apply the same endpoint rules', () => {
  it.each([
    { name: 'an invalid path', fields: { path: '/api/it ems' } },
    { name: 'a path shadowing the service', fields: { path: '/api/users/extra' } },
    { name: 'a field of an unknown type', fields: { schema: { price: { type: 'money' } } } },
    { name: 'a defaultValue of the wrong type', fields: { schema: { price: { type: 'number', defaultValue: 'ten' } } } },
    { name: 'a reference to an item path', fields: { schema: { tag: { type: 'reference', ref: '/api/tags/' } } } },
    { name: 'a reference list to a :param path', fields: { schema: { tags: { type: 'array', items: { type: 'reference', ref: '/api/shops/:id/tags' } } } } },
    { name: 'group access with an empty list', fields: { accessType: 'group', allowedGroupIds: [] }, project: { accessType: 'group', allowedGroups: [] }, field: (f: string) => f.replace('allowedGroupIds', 'allowedGroups') },
    { name: 'handler code that does not compile', fields: { handler: { enabled: true, code: 'async function handler(req, db) { return {' } } },
    { name: 'handler code without a handler function', fields: { handler: { enabled: true, code: 'const x = 1;' } } },
  ])('$name', async ({ fields, project, field }) => {
    const res = await t.api('POST', '/api/endpoints', { token, body: { ...base, ...fields } });
    expect(res.status, res.text).toBe(400);
    const api = (res.body.details as Array<{ field: string; message: string }>).map((d) => ({ path: field ? field(d.field) : d.field, message: d.message }));
    expect(validateSpec('endpoint', { ...base, ...(project ?? fields) })).toEqual(api);
  });
});
