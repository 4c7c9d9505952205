import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

describe('placeholders survive apply and export', () => {
  let t: TestServer;
  let admin: string;
  beforeAll(async () => {
    process.env.DYN_TEST_ALLOWED_IP = '10.20.30.40';
    t = await startTestServer();
    admin = await t.adminToken();
  });
  afterAll(async () => {
    delete process.env.DYN_TEST_ALLOWED_IP;
    await t.close();
  });

  const bundle = {
    groups: [{ name: 'Secretive', networkAccess: { enabled: true, allowedDomains: [], allowedIpRanges: ['${env:DYN_TEST_ALLOWED_IP}'] } }],
    endpoints: [],
  };

  it('stores the resolved value but exports the placeholder, also after another apply', async () => {
    expect((await t.api('POST', '/api/project/apply', { token: admin, body: bundle })).status).toBe(200);
    const group = (await t.api('GET', '/api/endpoints/groups', { token: admin })).body.data.find((g: { name: string }) => g.name === 'Secretive');
    expect(group.networkAccess.allowedIpRanges).toEqual(['10.20.30.40']);
    const exported = await t.api('GET', '/api/project/export?format=json', { token: admin });
    expect(exported.body.data.groups[0].networkAccess.allowedIpRanges).toEqual(['${env:DYN_TEST_ALLOWED_IP}']);
    expect(exported.text).not.toContain('10.20.30.40');
    const again = await t.api('POST', '/api/project/plan', { token: admin, body: bundle });
    expect(again.body.data.summary).toEqual({ create: 0, update: 0, delete: 0 });
  });

  it('exports a value changed through the API as it now is', async () => {
    const group = (await t.api('GET', '/api/endpoints/groups', { token: admin })).body.data.find((g: { name: string }) => g.name === 'Secretive');
    await t.api('PUT', `/api/endpoints/groups/${group._id}`, { token: admin, body: { networkAccess: { allowedIpRanges: ['10.0.0.9'] } } });
    const exported = await t.api('GET', '/api/project/export?format=json', { token: admin });
    expect(exported.body.data.groups[0].networkAccess.allowedIpRanges).toEqual(['10.0.0.9']);
  });

  it.each([
    ['a server variable without the DYN_ prefix', { description: '${env:JWT_SECRET}' }, 'only environment variables whose names start with DYN_ can be used'],
    ['a file outside the secrets directory', { description: '${file:/etc/hostname}' }, 'only files inside /run/secrets can be used'],
    // Refused as such, missing or not: the answer never tells whether a file outside exists.
    ['a missing file outside the secrets directory', { description: '${file:/etc/dyn-no-such-file}' }, 'only files inside /run/secrets can be used'],
  ])('refuses %s (400) and changes nothing', async (_name, fields, message) => {
    const res = await t.api('POST', '/api/project/apply', {
      token: admin,
      body: { groups: [], endpoints: [{ name: 'Leak', path: '/api/leak', method: 'GET', accessType: 'public', schema: {}, ...fields }] },
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.details)).toContain(message);
    expect((await t.api('GET', '/api/leak')).status).toBe(404);
  });
});
