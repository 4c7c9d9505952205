import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * Changes that check one document before writing another, sent at the same moment: whichever
 * the server takes first, the other sees its result. Without that, both checks could pass and
 * leave an endpoint or a user naming a deleted group, or no administrator at all.
 */
let t: TestServer;
let admin: string;
let administratorsId: string;
let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}${(seq++).toString(36)}`;

beforeAll(async () => {
  // Hashing a password takes a few ms at this cost, long enough for the requests to overlap.
  t = await startTestServer({ BCRYPT_ROUNDS: '8' });
  admin = await t.adminToken();
  const groups = await t.api('GET', '/api/groups?search=Administrators', { token: admin });
  administratorsId = groups.body.data.find((g: { name: string }) => g.name === 'Administrators')._id;
});
afterAll(async () => {
  await t.close();
});

/**
 * A group's delete sent among saves that name the group, all at once. Whichever comes first, the
 * outcome must be one the server could reach one request at a time: the delete refused (409)
 * because a save got in first, or the delete done and every later save refused (400).
 */
async function deleteAmongSaves(remove: () => Promise<{ status: number }>, save: () => Promise<{ status: number; text: string }>): Promise<void> {
  const saves = Array.from({ length: 6 }, () => save);
  // The delete a moment after the first saves, so that it arrives while they are under way.
  const removeSoon = async () => {
    await new Promise((resolve) => setTimeout(resolve, 3));
    return remove();
  };
  const answers = await Promise.all([...saves.slice(0, 3), removeSoon, ...saves.slice(3)].map((send) => send()));
  const deleted = answers[3] as { status: number };
  const saved = answers.filter((_, i) => i !== 3) as Array<{ status: number; text: string }>;
  expect([200, 409], JSON.stringify(answers.map((a) => a.status))).toContain(deleted.status);
  for (const answer of saved) expect([201, 400], answer.text).toContain(answer.status);
  // A save answered 201 beside a delete answered 200 would be a user or endpoint naming a group that is gone.
  expect(saved.some((a) => a.status === 201), JSON.stringify(answers.map((a) => a.status))).toBe(deleted.status === 409);
}

async function created(path: string, body: Record<string, unknown>): Promise<{ _id: string }> {
  const res = await t.api('POST', path, { token: admin, body });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

describe('changes that race each other', () => {
  it('deleting an endpoint group while an endpoint is saved into it: one of the two is refused', async () => {
    for (let round = 0; round < 12; round++) {
      const group = await created('/api/endpoints/groups', { name: unique('eg') });
      await deleteAmongSaves(
        () => t.api('DELETE', `/api/endpoints/groups/${group._id}`, { token: admin }),
        () => t.api('POST', '/api/endpoints', { token: admin, body: { name: 'In group', path: `/api/${unique('in-group')}`, method: 'GET', accessType: 'public', groupId: group._id, schema: [{ name: 'sku', type: 'string', indexed: true }] } }),
      );
    }
  });

  it('deleting a user group while an endpoint names it as allowed: one of the two is refused', async () => {
    for (let round = 0; round < 12; round++) {
      const group = await created('/api/groups', { name: unique('ug'), permissions: [] });
      await deleteAmongSaves(
        () => t.api('DELETE', `/api/groups/${group._id}`, { token: admin }),
        () => t.api('POST', '/api/endpoints', { token: admin, body: { name: 'Allowed', path: `/api/${unique('allowed')}`, method: 'GET', accessType: 'group', allowedGroupIds: [group._id], schema: [{ name: 'sku', type: 'string', indexed: true }] } }),
      );
    }
  });

  it('deleting a user group while a user is put into it: one of the two is refused', async () => {
    for (let round = 0; round < 12; round++) {
      const group = await created('/api/groups', { name: unique('members'), permissions: ['view'] });
      await deleteAmongSaves(
        () => t.api('DELETE', `/api/groups/${group._id}`, { token: admin }),
        () => t.api('POST', '/api/users', { token: admin, body: { login: unique('member'), password: 'member-password-1', groupIds: [group._id] } }),
      );
    }
  });

  it('two administrators deleting each other at once: one delete is refused and one administrator remains', async () => {
    const login = unique('second-admin');
    const second = await created('/api/users', { login, password: 'second-password-1', groupIds: [administratorsId] });
    const secondToken = (await t.login(login, 'second-password-1')).accessToken;
    const firstId = (await t.api('GET', '/api/profile', { token: admin })).body.data._id;
    const [byFirst, bySecond] = await Promise.all([
      t.api('DELETE', `/api/users/${second._id}`, { token: admin }),
      t.api('DELETE', `/api/users/${firstId}`, { token: secondToken }),
    ]);
    const statuses = [byFirst.status, bySecond.status].sort();
    expect(statuses[0]).toBe(200);
    // The loser is refused as the last administrator (409), or, deleted first, is no longer signed in (401).
    expect([401, 409]).toContain(statuses[1]);
    const users = await t.api('GET', '/api/users?limit=100', { token: byFirst.status === 200 ? admin : secondToken });
    const admins = users.body.data.filter((u: { groupIds: string[]; status: string }) => u.groupIds.includes(administratorsId) && u.status === 'active');
    expect(admins).toHaveLength(1);
    // The one left can still sign in.
    if (byFirst.status === 200) expect((await t.login('admin', ADMIN_PASSWORD)).accessToken).toBeTruthy();
  });
});
