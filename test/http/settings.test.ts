import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

let t: TestServer;
let admin: string;
beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
});
afterAll(async () => {
  await t.close();
});

const DEFAULTS = {
  registrationEnabled: false,
  accessTokenTtlSeconds: 900,
  refreshTokenTtlSeconds: 604_800,
  lockoutThreshold: 5,
  lockoutMinutes: 15,
  rateLimitEnabled: false,
  rateLimitWindowSeconds: 60,
  rateLimitMax: 3000,
  defaultPageSize: 20,
  maxPageSize: 100,
  logRetentionDays: 30,
  auditApiCalls: true,
  trustedProxies: ['127.0.0.0/8', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '::1', 'fc00::/7'],
  handlerMemoryMb: 64,
  handlerTimeoutMs: 5000,
  outboundAllowList: [],
  cronTimeoutMs: 30_000,
  openApiPublic: true,
};

async function currentSettings(): Promise<Record<string, unknown>> {
  const res = await t.api('GET', '/api/settings', { token: admin });
  expect(res.status, res.text).toBe(200);
  const { logsCount: _count, ...settings } = res.body.data;
  return settings;
}

async function putSettings(body: unknown) {
  return t.api('PUT', '/api/settings', { token: admin, body });
}

/** Puts every setting back to its default so tests do not leak into each other. */
afterEach(async () => {
  const res = await putSettings(DEFAULTS);
  expect(res.status, res.text).toBe(200);
});

function jwtPayload(token: string): { exp: number; iat: number } {
  return JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString('utf8'));
}

describe('reading settings', () => {
  it('takes back what it gave: a PUT of the GET body, logsCount included, changes only what the client changed', async () => {
    const read = await t.api('GET', '/api/settings', { token: admin });
    const back = await putSettings({ ...read.body.data, lockoutMinutes: 17 });
    expect(back.status, back.text).toBe(200);
    expect(await currentSettings()).toEqual({ ...DEFAULTS, lockoutMinutes: 17 });
    expect(Number.isInteger(back.body.data.logsCount)).toBe(true);
  });

  it('starts from the documented defaults and reports the number of log entries', async () => {
    const res = await t.api('GET', '/api/settings', { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    const { logsCount, ...settings } = res.body.data;
    expect(settings).toEqual(DEFAULTS);
    expect(Number.isInteger(logsCount)).toBe(true);
    expect(logsCount).toBeGreaterThanOrEqual(1); // at least the admin login
  });

  it.each([
    ['manage_users', 200],
    ['manage_api', 200],
    ['view', 403],
    ['view_logs', 403],
  ] as const)('a user with %s gets %i', async (permission, status) => {
    const user = await createUserWith(t, [permission]);
    const read = await t.api('GET', '/api/settings', { token: user.token });
    expect(read.status).toBe(status);
    const write = await t.api('PUT', '/api/settings', { token: user.token, body: { lockoutMinutes: 16 } });
    expect(write.status).toBe(status);
    if (status === 403) {
      expect(read.body).toEqual({ success: false, error: 'Forbidden: requires manage_users or manage_api' });
      expect((await t.api('DELETE', '/api/settings/logs', { token: user.token })).status).toBe(403);
      expect((await t.api('DELETE', '/api/settings/logs/old', { token: user.token })).status).toBe(403);
      expect((await currentSettings()).lockoutMinutes).toBe(15);
    }
  });

  it('the outbound allow list and sandbox limits change only with manage_api; sent back unchanged they pass', async () => {
    const manager = await createUserWith(t, ['manage_users']);
    const widen = await t.api('PUT', '/api/settings', { token: manager.token, body: { outboundAllowList: ['127.0.0.1:6379'], lockoutMinutes: 17 } });
    expect(widen.status).toBe(403);
    expect(widen.body).toEqual({ success: false, error: 'Forbidden: changing outboundAllowList requires manage_api' });
    expect((await t.api('PUT', '/api/settings', { token: manager.token, body: { handlerTimeoutMs: 60_000 } })).body.error).toBe('Forbidden: changing handlerTimeoutMs requires manage_api');
    // Trusting every proxy would let a forged X-Forwarded-For pass an endpoint's IP rules.
    expect((await t.api('PUT', '/api/settings', { token: manager.token, body: { trustedProxies: ['0.0.0.0/0'] } })).body.error).toBe('Forbidden: changing trustedProxies requires manage_api');
    const unchanged = await currentSettings();
    expect(unchanged.trustedProxies).not.toContain('0.0.0.0/0');
    expect(unchanged.outboundAllowList).toEqual([]);
    expect(unchanged.lockoutMinutes).toBe(15);
    // A form that saves every field as it read them is fine.
    const whole = await t.api('PUT', '/api/settings', { token: manager.token, body: { ...unchanged, lockoutMinutes: 15 } });
    expect(whole.status, whole.text).toBe(200);
    const apiUser = await createUserWith(t, ['manage_api']);
    expect((await t.api('PUT', '/api/settings', { token: apiUser.token, body: { outboundAllowList: ['127.0.0.1:6379'] } })).status).toBe(200);
    expect((await t.api('PUT', '/api/settings', { token: admin, body: { outboundAllowList: [] } })).status).toBe(200);
  });

  it('without credentials is a 401', async () => {
    expect((await t.api('GET', '/api/settings')).status).toBe(401);
    expect((await t.api('PUT', '/api/settings', { body: { lockoutMinutes: 16 } })).status).toBe(401);
  });

  it('refuses query parameters', async () => {
    const res = await t.api('GET', '/api/settings?x=1', { token: admin });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Unknown query parameter "x"');
  });
});

describe('updating settings', () => {
  it('a partial update changes only the given fields and returns the whole set', async () => {
    const res = await putSettings({ lockoutMinutes: 20, logRetentionDays: 7 });
    expect(res.status).toBe(200);
    const { logsCount, ...returned } = res.body.data;
    expect(returned).toEqual({ ...DEFAULTS, lockoutMinutes: 20, logRetentionDays: 7 });
    expect(typeof logsCount).toBe('number');
    expect(await currentSettings()).toEqual({ ...DEFAULTS, lockoutMinutes: 20, logRetentionDays: 7 });
  });

  it('accepts CIDR ranges and IPv6 addresses as trustedProxies', async () => {
    const res = await putSettings({ trustedProxies: ['10.9.9.9', '192.0.2.0/24', '2001:db8::/32'] });
    expect(res.status).toBe(200);
    expect(res.body.data.trustedProxies).toEqual(['10.9.9.9', '192.0.2.0/24', '2001:db8::/32']);
  });

  it.each([
    ['an unknown field', { lockoutMinutes: 20, colour: 'red' }, 'Invalid settings: colour is not an allowed field'],
    ['a string for a boolean', { registrationEnabled: 'true' }, 'Invalid settings: registrationEnabled must be boolean'],
    ['a number for openApiPublic', { openApiPublic: 0 }, 'Invalid settings: openApiPublic must be boolean'],
    ['a string for a number', { accessTokenTtlSeconds: '900' }, 'Invalid settings: accessTokenTtlSeconds must be integer'],
    ['a fraction', { rateLimitMax: 1.5 }, 'Invalid settings: rateLimitMax must be integer'],
    ['null', { lockoutThreshold: null }, 'Invalid settings: lockoutThreshold must be integer'],
    ['a TTL below the minimum', { accessTokenTtlSeconds: 59 }, 'Invalid settings: accessTokenTtlSeconds must be >= 60'],
    ['a TTL above the maximum', { refreshTokenTtlSeconds: 31_536_001 }, 'Invalid settings: refreshTokenTtlSeconds must be <= 31536000'],
    ['a negative threshold', { lockoutThreshold: -1 }, 'Invalid settings: lockoutThreshold must be >= 0'],
    ['a page size of 0', { maxPageSize: 0 }, 'Invalid settings: maxPageSize must be >= 1'],
    ['defaultPageSize above maxPageSize', { defaultPageSize: 101 }, 'Invalid settings: defaultPageSize must not exceed maxPageSize'],
    ['maxPageSize below defaultPageSize', { maxPageSize: 10 }, 'Invalid settings: defaultPageSize must not exceed maxPageSize'],
    ['an invalid trustedProxies entry', { trustedProxies: ['127.0.0.1', 'not-an-ip'] }, 'Invalid settings: trustedProxies has an invalid IP address or CIDR range: "not-an-ip"'],
    ['a trustedProxies prefix too long', { trustedProxies: ['10.0.0.0/33'] }, 'Invalid settings: trustedProxies has an invalid IP address or CIDR range: "10.0.0.0/33"'],
    ['trustedProxies as a string', { trustedProxies: '127.0.0.1' }, 'Invalid settings: trustedProxies must be array'],
    ['an outboundAllowList entry without a port', { outboundAllowList: ['localhost'] }, 'Invalid settings: outboundAllowList has an invalid outbound allow-list entry "localhost" (use host:port or an origin such as https://host:8443)'],
    ['an outboundAllowList entry with a path', { outboundAllowList: ['http://h:80/x'] }, 'Invalid settings: outboundAllowList has an invalid outbound allow-list entry "http://h:80/x" (use host:port or an origin such as https://host:8443)'],
    ['a cronTimeoutMs below the minimum', { cronTimeoutMs: 99 }, 'Invalid settings: cronTimeoutMs must be >= 100'],
    ['an array body', [{ lockoutMinutes: 20 }], 'Invalid settings: must be object'],
  ])('refuses %s with 400 and changes nothing', async (_label, body, error) => {
    const before = await currentSettings();
    const res = await putSettings(body);
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.error).toBe(error);
    expect(await currentSettings()).toEqual(before);
  });

  it('records a settings_updated audit entry naming the fields', async () => {
    expect((await putSettings({ lockoutMinutes: 21 })).status).toBe(200);
    const logs = await t.api('GET', '/api/dashboard/logs?action=settings_updated&limit=1', { token: admin });
    expect(logs.status).toBe(200);
    expect(logs.body.data[0]).toMatchObject({
      action: 'settings_updated',
      message: 'Settings updated: lockoutMinutes',
      source: 'settings',
      ip: '127.0.0.1',
      method: 'PUT',
      path: '/api/settings',
    });
  });
});

describe('a change applies on the next request', () => {
  it('defaultPageSize sets the default meta.limit of lists', async () => {
    expect((await t.api('GET', '/api/users', { token: admin })).body.meta.limit).toBe(20);
    expect((await putSettings({ defaultPageSize: 3 })).status).toBe(200);
    const res = await t.api('GET', '/api/users', { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.meta.limit).toBe(3);
  });

  it('maxPageSize clamps an explicit limit', async () => {
    expect((await putSettings({ defaultPageSize: 5, maxPageSize: 7 })).status).toBe(200);
    const res = await t.api('GET', '/api/users?limit=50', { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.meta.limit).toBe(7);
  });

  it('accessTokenTtlSeconds sets the exp of the next login token', async () => {
    const before = jwtPayload((await t.login()).accessToken);
    expect(before.exp - before.iat).toBe(900);
    expect((await putSettings({ accessTokenTtlSeconds: 120 })).status).toBe(200);
    const session = await t.login();
    const after = jwtPayload(session.accessToken);
    expect(after.exp - after.iat).toBe(120);
    expect(Date.parse(session.accessTokenExpiresAt) - Date.now()).toBeLessThanOrEqual(120_000);
  });
});

describe('audit log maintenance', () => {
  it('DELETE /api/settings/logs clears the log and records that it did', async () => {
    const before = (await t.api('GET', '/api/settings', { token: admin })).body.data.logsCount;
    expect(before).toBeGreaterThan(0);
    const res = await t.api('DELETE', '/api/settings/logs', { token: admin });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { deleted: expect.any(Number) } });
    expect(res.body.data.deleted).toBeGreaterThanOrEqual(before);
    const logs = await t.api('GET', '/api/dashboard/logs', { token: admin });
    expect(logs.body.meta.total).toBe(1);
    expect(logs.body.data[0]).toMatchObject({ action: 'logs_cleared', message: `Audit log cleared (${res.body.data.deleted} entries)` });
    expect((await t.api('GET', '/api/settings', { token: admin })).body.data.logsCount).toBe(1);
  });

  it('the log deletes take no query parameters: `?before=` is a 400 that deletes nothing', async () => {
    const before = (await t.api('GET', '/api/settings', { token: admin })).body.data.logsCount;
    for (const path of ['/api/settings/logs?before=2026-01-01', '/api/settings/logs/old?days=1']) {
      const res = await t.api('DELETE', path, { token: admin });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^Unknown query parameter "(before|days)"$/);
    }
    expect((await t.api('GET', '/api/settings', { token: admin })).body.data.logsCount).toBeGreaterThanOrEqual(before);
  });

  it('DELETE /api/settings/logs/old removes only entries older than logRetentionDays', async () => {
    const logs = t.server.services.store.collection('logs');
    const old = (days: number) => ({
      action: 'test_old',
      message: `${days} days old`,
      source: 'test',
      ip: null,
      userId: null,
      method: null,
      path: null,
      statusCode: null,
      createdAt: new Date(Date.now() - days * 86_400_000),
    });
    await logs.insertOne(old(40));
    await logs.insertOne(old(20));
    expect((await putSettings({ logRetentionDays: 30 })).status).toBe(200);

    const res = await t.api('DELETE', '/api/settings/logs/old', { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ deleted: 1, olderThanDays: 30 });
    const left = await t.api('GET', '/api/dashboard/logs?action=test_old', { token: admin });
    expect(left.body.data.map((e: { message: string }) => e.message)).toEqual(['20 days old']);
    const purged = await t.api('GET', '/api/dashboard/logs?action=logs_purged', { token: admin });
    expect(purged.body.data[0].message).toBe('Audit log entries older than 30 days removed (1)');
  });
});

describe('registration', () => {
  const body = (login: string) => ({ login, email: `${login}@example.com`, password: 'register-pass-1', name: 'New Person' });

  it('is refused with 403 while registrationEnabled is false, and creates nobody', async () => {
    const res = await t.api('POST', '/api/auth/register', { body: body('closeddoor') });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ success: false, error: 'Registration is disabled' });
    expect((await t.api('POST', '/api/auth/login', { body: { login: 'closeddoor', password: 'register-pass-1' } })).status).toBe(401);
  });

  it('when enabled, creates a user in no group who can sign in but not read users', async () => {
    expect((await putSettings({ registrationEnabled: true })).status).toBe(200);
    const res = await t.api('POST', '/api/auth/register', { body: body('newcomer') });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ login: 'newcomer', email: 'newcomer@example.com', name: 'New Person', groupIds: [], status: 'active' });
    expect(res.text).not.toMatch(/passwordHash|\$2[aby]\$/);

    const session = await t.login('newcomer', 'register-pass-1');
    expect(session.user.permissions).toEqual([]);
    const users = await t.api('GET', '/api/users', { token: session.accessToken });
    expect(users.status).toBe(403);

    const logs = await t.api('GET', '/api/dashboard/logs?action=register', { token: admin });
    expect(logs.body.data[0]).toMatchObject({ action: 'register', message: 'User newcomer registered', ip: '127.0.0.1', userId: res.body.data._id });
  });

  it('cannot choose groups', async () => {
    expect((await putSettings({ registrationEnabled: true })).status).toBe(200);
    const res = await t.api('POST', '/api/auth/register', { body: { ...body('grouper'), groupIds: ['ffffffffffffffffffffffff'] } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Invalid request body: groupIds is not an allowed field');
  });

  it.each([
    ['the same login', 'twin', { login: 'twin', email: 'other-twin@example.com' }, 'A user with this login already exists'],
    ['the same login in another case', 'casey', { login: 'CASEY', email: 'other-casey@example.com' }, 'A user with this login already exists'],
    ['the same email', 'mailer', { login: 'mailer2', email: 'MAILER@example.com' }, 'A user with this email already exists'],
  ])('refuses %s twice with 409', async (_label, first, second, error) => {
    expect((await putSettings({ registrationEnabled: true })).status).toBe(200);
    expect((await t.api('POST', '/api/auth/register', { body: body(first) })).status).toBe(201);
    const again = await t.api('POST', '/api/auth/register', { body: { ...body(first), ...second } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ success: false, error });
  });
});
