import { SignJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynClient } from '../../src/cli/client.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

/** The long-lived client of `dynctl tui`: refreshes shared by parallel calls, and cancellation. */
const SECRET = 'tui-test-access-secret-0123456789-abcdef';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ JWT_SECRET: SECRET, JWT_REFRESH_SECRET: 'tui-test-refresh-secret-0123456789-abcdef' });
});
afterAll(async () => {
  await server.close();
});

/** The same access token with its `exp` in the past (signed with the server's secret). */
async function expired(token: string): Promise<string> {
  const claims = decodeJwt(token);
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ ...claims, iat: now - 120, exp: now - 60 }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(SECRET));
}

describe('DynClient for a long-lived session', () => {
  it('refreshes an expired session once for calls made at the same time, and every call succeeds', async () => {
    const session = await server.login();
    const saved: string[] = [];
    const client = new DynClient({
      server: server.url,
      credentials: { kind: 'session', accessToken: await expired(session.accessToken), refreshToken: session.refreshToken },
      longLived: true,
      onSessionRefreshed: async (pair) => {
        saved.push(pair.refreshToken);
      },
    });
    const [stats, endpoints, profile] = await Promise.all([client.dashboardStats(), client.listEndpoints(), client.profile()]);
    expect(stats.users).toBe(1);
    expect(endpoints.length).toBeGreaterThan(0);
    expect(profile.login).toBe('admin');
    // One refresh: a second one with the same (rotated) refresh token would have ended the session.
    expect(saved).toHaveLength(1);
    expect((await client.profile()).login).toBe('admin');
  });

  it('rejects a cancelled call with the abort reason, not as a network failure', async () => {
    const session = await server.login();
    const client = new DynClient({ server: server.url, credentials: { kind: 'session', ...session }, longLived: true });
    const controller = new AbortController();
    controller.abort(new Error('cancelled by the user'));
    await expect(client.listEndpoints(undefined, { signal: controller.signal })).rejects.toThrow('cancelled by the user');
  });
});
