import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

const LOCKED = 'Too many failed login attempts; try again in 15 minutes';
const WRONG = { success: false, error: 'Invalid login or password' };

describe('login lockout', () => {
  let t: TestServer;
  let admin: string;
  beforeAll(async () => {
    t = await startTestServer();
    admin = await t.adminToken();
    const res = await t.api('PUT', '/api/settings', { token: admin, body: { lockoutThreshold: 3 } });
    expect(res.status, res.text).toBe(200);
  });
  afterAll(async () => {
    await t.close();
  });

  const attempt = (login: string, password: string) => t.api('POST', '/api/auth/login', { body: { login, password } });

  function expectLocked(res: Awaited<ReturnType<typeof attempt>>): void {
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ success: false, error: expect.stringMatching(new RegExp(`^${LOCKED} \\(locked until \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC\\)$`)) });
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(15 * 60 - 30);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
  }

  it('wrong current passwords on PUT /api/profile count like failed sign-ins: audited, then the login is locked', async () => {
    const user = await createUserWith(t, ['view']);
    const change = (currentPassword: string) => t.api('PUT', '/api/profile', { token: user.token, body: { currentPassword, password: 'a-new-password-1' } });
    for (let i = 0; i < 3; i++) {
      const res = await change(`guess-${i}-password`);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('Invalid request body: currentPassword is wrong');
    }
    expectLocked(await change(user.password));
    expectLocked(await attempt(user.login, user.password));
    const logs = await t.api('GET', `/api/dashboard/logs?action=login_failed&search=${encodeURIComponent('(profile)')}&limit=50`, { token: admin });
    expect(logs.body.data.filter((e: any) => e.message === `Wrong current password for "${user.login}" (profile)`)).toHaveLength(3);
  });

  it('after 3 wrong passwords, the 4th attempt is refused with 429 even with the right password', async () => {
    const user = await createUserWith(t, ['view']);
    for (let i = 0; i < 3; i++) {
      const res = await attempt(user.login, 'wrong-password');
      expect(res.status).toBe(401);
      expect(res.body).toEqual(WRONG);
    }
    expectLocked(await attempt(user.login, user.password));
    expectLocked(await attempt(user.login, 'wrong-password'));
    // Guesses on a locked login show in the audit log too (buffered, so read until they are in).
    const refused = async () => (await t.api('GET', `/api/dashboard/logs?action=login_failed&search=${encodeURIComponent(user.login)}&limit=50`, { token: admin })).body.data.filter((e: any) => e.statusCode === 429);
    for (let tries = 0; (await refused()).length < 2 && tries < 50; tries++) await sleep(100);
    expect((await refused()).map((e: any) => e.message)).toEqual([`Login for "${user.login}" refused: too many failed attempts`, `Login for "${user.login}" refused: too many failed attempts`]);
  });

  it('a locked login leaves other logins alone', async () => {
    const locked = await createUserWith(t, ['view']);
    const other = await createUserWith(t, ['view']);
    for (let i = 0; i < 3; i++) await attempt(locked.login, 'wrong-password');
    expectLocked(await attempt(locked.login, locked.password));
    expect((await attempt(other.login, other.password)).status).toBe(200);
    // ...and a session obtained before the lockout keeps working
    expect((await t.api('GET', '/api/users', { token: locked.token })).status).toBe(200);
  });

  it('a successful login before the threshold starts the count over', async () => {
    const user = await createUserWith(t, ['view']);
    for (let i = 0; i < 2; i++) expect((await attempt(user.login, 'wrong-password')).status).toBe(401);
    expect((await attempt(user.login, user.password)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await attempt(user.login, 'wrong-password')).status).toBe(401);
    expect((await attempt(user.login, user.password)).status).toBe(200);
  });

  it('a login that does not exist is counted and locked the same way, revealing nothing', async () => {
    const ghost = 'no-such-user-anywhere';
    const responses = [];
    for (let i = 0; i < 4; i++) responses.push(await attempt(ghost, 'wrong-password'));
    expect(responses.map((r) => r.status)).toEqual([401, 401, 401, 429]);
    expect(responses.slice(0, 3).every((r) => r.body.error === WRONG.error)).toBe(true);
    expectLocked(responses[3] as Awaited<ReturnType<typeof attempt>>);
  });

  // Last in this block: it locks the admin login (the cached admin token keeps working).
  it('Admin, " admin " and ADMIN count as the same login', async () => {
    for (const login of ['Admin', ' admin ', 'ADMIN']) {
      const res = await attempt(login, 'wrong-password');
      expect(res.status).toBe(401);
      expect(res.body).toEqual(WRONG);
    }
    expectLocked(await attempt('admin', ADMIN_PASSWORD));
    expectLocked(await attempt('aDmIn', ADMIN_PASSWORD));
    expect((await t.api('GET', '/api/users', { token: admin })).status).toBe(200);
  });

  it('a threshold of 0 turns lockout off', async () => {
    expect((await t.api('PUT', '/api/settings', { token: admin, body: { lockoutThreshold: 0 } })).status).toBe(200);
    const user = await createUserWith(t, ['view']);
    for (let i = 0; i < 5; i++) expect((await attempt(user.login, 'wrong-password')).status).toBe(401);
    expect((await attempt(user.login, user.password)).status).toBe(200);
  });
});

describe('login lockout under concurrent guesses', () => {
  // Passwords checked at a realistic cost (bcrypt's checks are spread over several event-loop
  // turns), so that guesses sent together are all in flight at once, as an attacker's would be.
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ BCRYPT_ROUNDS: '10' });
    const admin = await t.adminToken();
    expect((await t.api('PUT', '/api/settings', { token: admin, body: { lockoutThreshold: 3 } })).status).toBe(200);
  });
  afterAll(async () => {
    await t.close();
  });

  it('at most 3 passwords are checked, and the right one sent behind the wrong ones does not get in', async () => {
    const user = await createUserWith(t, ['view']);
    const passwords = [...Array.from({ length: 29 }, (_, i) => `wrong-password-${i}`), user.password];
    const responses = await Promise.all(passwords.map((password) => t.api('POST', '/api/auth/login', { body: { login: user.login, password } })));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 401 || s === 200).length).toBeLessThanOrEqual(3);
    expect(statuses.filter((s) => s !== 401 && s !== 200).every((s) => s === 429)).toBe(true);
    expect(statuses.at(-1)).not.toBe(200);
    // Refused while the checked ones are in flight, a guess is told to come back; one that arrives
    // after they failed (a slow machine may deliver it late) is told the login is locked.
    for (const refused of responses.filter((r) => r.status === 429)) {
      expect(refused.body.success).toBe(false);
      expect(refused.body.error).toMatch(new RegExp(`^(Too many login attempts at once; try again in a moment|${LOCKED} )`));
    }
    const after = await t.api('POST', '/api/auth/login', { body: { login: user.login, password: user.password } });
    expect(after.status).toBe(429);
    expect(after.body.error).toMatch(new RegExp(`^${LOCKED} `));
  });
});

describe('rate limit', () => {
  let t: TestServer;
  let admin: string;
  beforeAll(async () => {
    t = await startTestServer();
    admin = await t.adminToken();
  });
  afterAll(async () => {
    await t.close();
  });

  // Loopback is a trusted proxy by default, so X-Forwarded-For makes a request count as
  // coming from another client: that keeps a way in while 127.0.0.1 is limited.
  const from = (ip: string) => ({ 'x-forwarded-for': ip });

  it('is off by default and sends no rate-limit headers', async () => {
    for (let i = 0; i < 10; i++) {
      const res = await t.api('GET', '/api/health');
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBeNull();
    }
  });

  it('once enabled with max 5, the 6th request from a client is a 429 with Retry-After; other clients are unaffected', async () => {
    const enable = await t.api('PUT', '/api/settings', { token: admin, body: { rateLimitEnabled: true, rateLimitMax: 5, rateLimitWindowSeconds: 60 } });
    expect(enable.status).toBe(200);

    for (let i = 0; i < 5; i++) {
      const res = await t.api('GET', '/api/health');
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBe('5');
      expect(res.headers.get('ratelimit-remaining')).toBe(String(4 - i));
    }
    const limited = await t.api('GET', '/api/health');
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ success: false, error: 'Too many requests; slow down' });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');

    // Every route counts, authenticated or not.
    expect((await t.api('GET', '/api/settings', { token: admin })).status).toBe(429);
    expect((await t.api('POST', '/api/auth/login', { body: { login: 'admin', password: ADMIN_PASSWORD } })).status).toBe(429);

    // Another client still gets through, and can turn the limit off again.
    expect((await t.api('GET', '/api/health', { headers: from('198.51.100.9') })).status).toBe(200);
    const disable = await t.api('PUT', '/api/settings', { token: admin, headers: from('198.51.100.9'), body: { rateLimitEnabled: false } });
    expect(disable.status).toBe(200);
    expect(disable.body.data.rateLimitEnabled).toBe(false);

    const after = await t.api('GET', '/api/health');
    expect(after.status).toBe(200);
    expect(after.headers.get('ratelimit-limit')).toBeNull();
  });

  it('lets a client in again once its window has passed', async () => {
    const enable = await t.api('PUT', '/api/settings', { token: admin, body: { rateLimitEnabled: true, rateLimitMax: 2, rateLimitWindowSeconds: 1 } });
    expect(enable.status).toBe(200);
    const client = from('198.51.100.30');
    expect((await t.api('GET', '/api/health', { headers: client })).status).toBe(200);
    expect((await t.api('GET', '/api/health', { headers: client })).status).toBe(200);
    const limited = await t.api('GET', '/api/health', { headers: client });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    await sleep(1100);
    expect((await t.api('GET', '/api/health', { headers: client })).status).toBe(200);
    const disable = await t.api('PUT', '/api/settings', { token: admin, headers: from('198.51.100.31'), body: { rateLimitEnabled: false } });
    expect(disable.status).toBe(200);
  });
});
