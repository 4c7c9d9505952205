// Sessions and token claims over HTTP: logout ends one session (or all with `all: true`), and
// tokens signed with the server's own secrets are refused unless every required claim is there.
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

const JWT_SECRET = 'sessions-test-access-secret-0123456789';
const JWT_REFRESH_SECRET = 'sessions-test-refresh-secret-0123456789';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ JWT_SECRET, JWT_REFRESH_SECRET });
});
afterAll(async () => {
  await t.close();
});

type Session = Awaited<ReturnType<TestServer['login']>>;

async function signIn(): Promise<{ a: Session; b: Session }> {
  const user = await createUserWith(t, ['view']);
  return { a: await t.login(user.login, user.password), b: await t.login(user.login, user.password) };
}

const accessWorks = async (session: Session): Promise<boolean> => (await t.api('GET', '/api/users', { token: session.accessToken })).status === 200;
const refreshWorks = async (session: Session): Promise<boolean> =>
  (await t.api('POST', '/api/auth/refresh', { body: { refreshToken: session.refreshToken } })).status === 200;

describe('logout ends one session', () => {
  it('logout with session A’s access token ends A’s refresh and access tokens; session B keeps working', async () => {
    const { a, b } = await signIn();
    expect((await t.api('POST', '/api/auth/logout', { token: a.accessToken })).status).toBe(200);
    const after = await t.api('GET', '/api/users', { token: a.accessToken });
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ success: false, error: 'Session has ended; sign in again' });
    expect(await refreshWorks(a)).toBe(false);
    expect(await accessWorks(b)).toBe(true);
    expect(await refreshWorks(b)).toBe(true);
  });

  it('logout with {"all": true} ends every session of the user', async () => {
    const { a, b } = await signIn();
    expect((await t.api('POST', '/api/auth/logout', { token: a.accessToken, body: { all: true } })).status).toBe(200);
    for (const session of [a, b]) {
      expect(await accessWorks(session)).toBe(false);
      expect(await refreshWorks(session)).toBe(false);
    }
  });

  it('logout with a refresh token alone ends only that token’s session', async () => {
    const { a, b } = await signIn();
    expect((await t.api('POST', '/api/auth/logout', { body: { refreshToken: a.refreshToken } })).status).toBe(200);
    expect(await accessWorks(a)).toBe(false);
    expect(await refreshWorks(a)).toBe(false);
    expect(await accessWorks(b)).toBe(true);
    expect(await refreshWorks(b)).toBe(true);
  });

  it('logout with a refresh token and {"all": true} ends every session', async () => {
    const { a, b } = await signIn();
    expect((await t.api('POST', '/api/auth/logout', { body: { refreshToken: a.refreshToken, all: true } })).status).toBe(200);
    expect(await accessWorks(b)).toBe(false);
    expect(await refreshWorks(b)).toBe(false);
  });

  it('a session survives rotation: logout with the rotated access token ends the refreshed chain', async () => {
    const { a, b } = await signIn();
    const rotated = (await t.api('POST', '/api/auth/refresh', { body: { refreshToken: a.refreshToken } })).body.data as Session;
    // The access token issued before the rotation still belongs to the same, live session.
    expect(await accessWorks(a)).toBe(true);
    expect((await t.api('POST', '/api/auth/logout', { token: rotated.accessToken })).status).toBe(200);
    expect(await accessWorks(a)).toBe(false);
    expect(await refreshWorks(rotated)).toBe(false);
    expect(await accessWorks(b)).toBe(true);
  });

  it('a rotated-away refresh token cannot log out, and logout of an ended session is a 401', async () => {
    const { a } = await signIn();
    const rotated = (await t.api('POST', '/api/auth/refresh', { body: { refreshToken: a.refreshToken } })).body.data as Session;
    const stale = await t.api('POST', '/api/auth/logout', { body: { refreshToken: a.refreshToken } });
    expect(stale.status).toBe(401);
    expect(await accessWorks(rotated)).toBe(true);
    expect((await t.api('POST', '/api/auth/logout', { token: rotated.accessToken })).status).toBe(200);
    expect((await t.api('POST', '/api/auth/logout', { token: rotated.accessToken })).status).toBe(401);
  });

  it.each([
    ['a non-boolean all', { all: 'yes' }],
    ['an unknown field', { everything: true }],
  ])('logout refuses %s with 400 and ends nothing', async (_name, body) => {
    const { a } = await signIn();
    const res = await t.api('POST', '/api/auth/logout', { token: a.accessToken, body });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(await accessWorks(a)).toBe(true);
  });

  it('a password change ends the other sessions and keeps the caller signed in with new tokens', async () => {
    const user = await createUserWith(t, ['view']);
    const a = await t.login(user.login, user.password);
    const b = await t.login(user.login, user.password);
    const res = await t.api('PUT', '/api/profile', { token: a.accessToken, body: { password: 'new-password-2', currentPassword: user.password } });
    expect(res.status).toBe(200);
    for (const session of [a, b]) expect(await accessWorks(session)).toBe(false);
    expect(await accessWorks(res.body.data.tokens)).toBe(true);
    expect(await refreshWorks(res.body.data.tokens)).toBe(true);
  });
});

describe('an ended session on another instance', () => {
  it('stops working there within 2 seconds, while the user’s other session keeps working', async () => {
    const other = await startTestServer({ JWT_SECRET, JWT_REFRESH_SECRET }, t.dataDir);
    try {
      const { a, b } = await signIn();
      const onOther = async (session: Session) => (await other.api('GET', '/api/users', { token: session.accessToken })).status;
      // The other instance has seen (and cached) both sessions as live.
      expect([await onOther(a), await onOther(b)]).toEqual([200, 200]);
      expect((await t.api('POST', '/api/auth/logout', { token: a.accessToken })).status).toBe(200);
      const ended = Date.now();
      while ((await onOther(a)) === 200) {
        // The cache holds for 2 s; the rest is margin for a loaded machine.
        expect(Date.now() - ended).toBeLessThan(4000);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await onOther(a)).toBe(401);
      expect(await onOther(b)).toBe(200);
    } finally {
      await other.close();
    }
  });
});

describe('token claims are checked, not assumed', () => {
  const secretOf = (type: 'access' | 'refresh') => new TextEncoder().encode(type === 'access' ? JWT_SECRET : JWT_REFRESH_SECRET);

  /** Tokens like the server's own, minus one claim; signed with the server's real secret. */
  async function forge(type: 'access' | 'refresh', session: Session, omit: string): Promise<string> {
    const real = JSON.parse(Buffer.from((type === 'access' ? session.accessToken : session.refreshToken).split('.')[1] as string, 'base64url').toString());
    const claims: Record<string, unknown> = { ...real, exp: Math.floor(Date.now() / 1000) + 600 };
    delete claims[omit];
    return new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(secretOf(type));
  }

  it('a forged copy with every claim is accepted (so the refusals below are about the missing claim)', async () => {
    const { a, b } = await signIn();
    expect((await t.api('GET', '/api/users', { token: await forge('access', a, 'none') })).status).toBe(200);
    expect((await t.api('POST', '/api/auth/refresh', { body: { refreshToken: await forge('refresh', b, 'none') } })).status).toBe(200);
  });

  it.each(['exp', 'iat', 'sub', 'typ', 'tv', 'sid'])('an access token without %s is refused with 401', async (claim) => {
    const { a } = await signIn();
    const res = await t.api('GET', '/api/users', { token: await forge('access', a, claim) });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, error: 'Invalid access token' });
  });

  it.each(['exp', 'iat', 'sub', 'typ', 'tv', 'sid', 'jti'])('a refresh token without %s is refused with 401', async (claim) => {
    const { a } = await signIn();
    const res = await t.api('POST', '/api/auth/refresh', { body: { refreshToken: await forge('refresh', a, claim) } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, error: 'Invalid or expired refresh token' });
    // The refusal used nothing up: the real refresh token still rotates.
    expect(await refreshWorks(a)).toBe(true);
  });

  it('a token signed with another algorithm is refused', async () => {
    const { a } = await signIn();
    const real = JSON.parse(Buffer.from(a.accessToken.split('.')[1] as string, 'base64url').toString());
    const token = await new SignJWT(real).setProtectedHeader({ alg: 'HS512' }).sign(secretOf('access'));
    expect((await t.api('GET', '/api/users', { token })).status).toBe(401);
  });
});
