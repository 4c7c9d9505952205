import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { batches, BODY_LIMIT, checkedMessages, defineHand, type Scenario, transportErrors } from './transport-scenarios.ts';

// The scenarios of transport-scenarios.ts over real HTTP, on /api/mcp: the route hands every
// request to src/mcp/mcp-http.ts, so the transport's own errors are JSON-RPC too.

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

async function send(scenario: Scenario): Promise<{ status: number; headers: Headers; body: unknown }> {
  const headers: Record<string, string> = { ...scenario.headers };
  if (!scenario.anonymous) headers.authorization = `Bearer ${admin}`;
  const body = scenario.body === undefined ? undefined : typeof scenario.body === 'string' ? scenario.body : JSON.stringify(scenario.body);
  // fetch sends a string as text/plain unless told: a Blob without a type sends no Content-Type.
  if (scenario.contentType !== null && body !== undefined) headers['content-type'] = scenario.contentType ?? 'application/json';
  const res = await fetch(`${t.url}/api/mcp`, { method: scenario.method ?? 'POST', headers, ...(body === undefined ? {} : { body: scenario.contentType === null ? new Blob([body]) : body }) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

describe.each([
  ['transport errors, in JSON-RPC', transportErrors],
  ['messages checked before they run', checkedMessages],
  ['batches, answered per message', batches],
])('POST /api/mcp: %s', (_label, scenarios) => {
  it.each(scenarios)('$name', async (scenario) => {
    const got = await send(scenario);
    expect(got.status).toBe(scenario.status);
    expect(got.body).toEqual(scenario.answer);
    expect(Object.fromEntries(Object.keys(scenario.headersOut ?? {}).map((name) => [name, got.headers.get(name)]))).toEqual(scenario.headersOut ?? {});
  });
});

describe('the scenarios as HTTP takes a body', () => {
  it('read the body limit the server has', () => {
    expect(t.server.services.config.bodyLimitBytes).toBe(BODY_LIMIT);
  });

  it('nest a tool body as deep as POST /api/hand does: 33 levels are taken, 34 refused', async () => {
    const nested = (levels: number): unknown => (levels === 0 ? 1 : { a: nested(levels - 1) });
    expect((await t.api('POST', '/api/hand', { body: nested(33) })).status).toBe(200);
    expect((await t.api('POST', '/api/hand', { body: nested(34) })).status).toBe(400);
  });
});
