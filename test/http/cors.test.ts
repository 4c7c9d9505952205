import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

describe('CORS', () => {
  let listed: TestServer;
  let none: TestServer;
  beforeAll(async () => {
    listed = await startTestServer({ CORS_ORIGINS: 'https://admin.example.com' });
    none = await startTestServer();
  });
  afterAll(async () => {
    await listed.close();
    await none.close();
  });

  it('sends no CORS headers when CORS_ORIGINS is unset', async () => {
    const res = await none.api('GET', '/api/health', { headers: { origin: 'https://admin.example.com' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('allows a listed origin with credentials and answers its preflight', async () => {
    const res = await listed.api('GET', '/api/health', { headers: { origin: 'https://admin.example.com' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('https://admin.example.com');
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    const preflight = await listed.api('OPTIONS', '/api/users', {
      headers: { origin: 'https://admin.example.com', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('Authorization');
    // A browser-based MCP client's requests carry MCP-Protocol-Version after initialize.
    const mcp = await listed.api('OPTIONS', '/api/mcp', { headers: { origin: 'https://admin.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, mcp-protocol-version' } });
    expect(mcp.status).toBe(204);
    expect(mcp.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('mcp-protocol-version');
  });

  it('ignores an origin that is not listed', async () => {
    const res = await listed.api('GET', '/api/health', { headers: { origin: 'https://evil.example.net' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});
