import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerMcpPost, otherMethod, unauthenticated, type McpHttpAnswer } from '../../src/mcp/mcp-http.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { batches, BODY_LIMIT, checkedMessages, defineHand, type Scenario, transportErrors } from './transport-scenarios.ts';

// The scenarios of transport-scenarios.ts through answerMcpPost, on a real server's engine,
// OpenAPI documents and audit log: what the route answers once it hands requests over (the
// route itself only authenticates, and sends other methods to otherMethod).

let t: TestServer;
let admin: string;

beforeAll(async () => {
  t = await startTestServer();
  admin = await t.adminToken();
  await defineHand(t, admin);
});
afterAll(async () => {
  await t.close();
});

const caller = { principal: { kind: 'apiKey' as const, keyId: 'k', name: 'transport-test', permissions: new Set<never>() }, ip: '127.0.0.1', headers: {} };

/** What the route does with a request: POST to answerMcpPost, with or without credentials; other methods to otherMethod. */
async function answer(scenario: Scenario): Promise<McpHttpAnswer> {
  const method = scenario.method ?? 'POST';
  if (method !== 'POST') return otherMethod(method);
  if (scenario.anonymous) return unauthenticated('Authentication required: send a Bearer token or an API key');
  const text = typeof scenario.body === 'string' ? scenario.body : JSON.stringify(scenario.body);
  const services = t.server.services;
  const deps = { engine: services.engine, openApi: services.openApi, audit: services.audit, version: 'test', bodyLimitBytes: services.config.bodyLimitBytes };
  const post = { contentType: scenario.contentType === null ? '' : (scenario.contentType ?? 'application/json'), contentLength: String(Buffer.byteLength(text)), protocolVersion: scenario.headers?.['mcp-protocol-version'] ?? '', body: Readable.from([Buffer.from(text)]) };
  return answerMcpPost(post, deps, caller);
}

describe('answerMcpPost', () => {
  it('reads the body limit the scenarios assume', () => {
    expect(t.server.services.config.bodyLimitBytes).toBe(BODY_LIMIT);
  });

  describe.each([
    ['transport errors, in JSON-RPC', transportErrors],
    ['messages checked before they run', checkedMessages],
    ['batches, answered per message', batches],
  ])('%s', (_label, scenarios) => {
    // HEAD's answer has a body here; Koa sends none over HTTP.
    it.each(scenarios.filter((s) => s.method !== 'HEAD'))('$name', async (scenario) => {
      const got = await answer(scenario);
      expect(got.status).toBe(scenario.status);
      expect(got.body).toEqual(scenario.answer);
      expect(got.headers).toEqual(expect.objectContaining(scenario.headersOut ?? {}));
    });
  });

  it('nests a tool body as deep as POST /api/hand does: 33 levels are taken, 34 refused', async () => {
    const nested = (levels: number): unknown => (levels === 0 ? 1 : { a: nested(levels - 1) });
    expect((await t.api('POST', '/api/hand', { body: nested(33) })).status).toBe(200);
    expect((await t.api('POST', '/api/hand', { body: nested(34) })).status).toBe(400);
  });
});
