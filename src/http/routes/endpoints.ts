import { isIP } from 'node:net';
import { badRequest } from '../../lib/errors.ts';
import { fillPattern } from '../../lib/paths.ts';
import { compileValidator } from '../../model/validation.ts';
import { compileEndpoint } from '../../runtime/route-table.ts';
import { endpointDocs, endpointExamples } from '../../runtime/endpoint-docs.ts';
import type { Services } from '../container.ts';
import { publicEndpointGroup } from '../../services/endpoint-groups.ts';
import { publicEndpoint } from '../../services/endpoints.ts';
import { requireActor, requireAny } from '../middleware/require-permission.ts';
import { listQuery } from '../query.ts';
import { ok, paged } from '../respond.ts';
import type { ApiRouter } from './router.ts';

interface TestInput {
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  params?: Record<string, string>;
  recordId?: string;
  clientIp?: string;
  applyNetworkAccess?: boolean;
}

const stringMap = { type: 'object', maxProperties: 50, additionalProperties: { type: 'string', maxLength: 4096 } };
const validateTest = compileValidator<TestInput>({
  type: 'object',
  additionalProperties: false,
  properties: {
    body: {},
    headers: stringMap,
    query: stringMap,
    params: stringMap,
    recordId: { type: 'string', minLength: 1, maxLength: 64 },
    clientIp: { type: 'string', maxLength: 64 },
    applyNetworkAccess: { type: 'boolean' },
  },
});

export function endpointRoutes(router: ApiRouter, services: Services): void {
  const read = requireAny('view', 'manage_api');
  const write = requireAny('manage_api');

  // Groups first: `/endpoints/groups` must not be taken for `/endpoints/:id`.
  router.get('/endpoints/groups', read, async (ctx) => {
    const query = listQuery(ctx);
    paged(ctx, await services.endpointGroups.list(query), query, publicEndpointGroup);
  });
  router.get('/endpoints/groups/:id', read, async (ctx) => {
    ok(ctx, publicEndpointGroup(await services.endpointGroups.get(ctx.params.id as string)));
  });
  router.post('/endpoints/groups', write, async (ctx) => {
    const group = await services.endpointGroups.create(ctx.request.body, requireActor(ctx));
    ok(ctx, publicEndpointGroup(group), { status: 201 });
  });
  router.put('/endpoints/groups/:id', write, async (ctx) => {
    const group = await services.endpointGroups.update(ctx.params.id as string, ctx.request.body, requireActor(ctx));
    ok(ctx, publicEndpointGroup(group));
  });
  router.delete('/endpoints/groups/:id', write, async (ctx) => {
    const group = await services.endpointGroups.delete(ctx.params.id as string, requireActor(ctx));
    ok(ctx, publicEndpointGroup(group));
  });

  router.get('/endpoints', read, async (ctx) => {
    const query = listQuery(ctx, { defaultLimit: 50 });
    paged(ctx, await services.endpoints.list(query), query, publicEndpoint);
  });
  router.get('/endpoints/:id', read, async (ctx) => {
    ok(ctx, publicEndpoint(await services.endpoints.get(ctx.params.id as string)));
  });
  router.post('/endpoints', write, async (ctx) => {
    const endpoint = await services.endpoints.create(ctx.request.body, requireActor(ctx));
    ok(ctx, publicEndpoint(endpoint), { status: 201 });
  });
  router.put('/endpoints/:id', write, async (ctx) => {
    const endpoint = await services.endpoints.update(ctx.params.id as string, ctx.request.body, requireActor(ctx));
    ok(ctx, publicEndpoint(endpoint));
  });
  router.delete('/endpoints/:id', write, async (ctx) => {
    const endpoint = await services.endpoints.delete(ctx.params.id as string, requireActor(ctx));
    ok(ctx, publicEndpoint(endpoint));
  });

  router.get('/endpoints/:id/examples', read, async (ctx) => {
    ok(ctx, endpointExamples(await services.endpoints.get(ctx.params.id as string)));
  });
  router.get('/endpoints/:id/docs', read, async (ctx) => {
    ok(ctx, endpointDocs(await services.endpoints.get(ctx.params.id as string)));
  });

  // Runs the endpoint through the same dispatch as a live call (network rules skipped unless
  // applyNetworkAccess), as the calling user, and reports what happened.
  router.post('/endpoints/:id/test', write, async (ctx) => {
    const input = validateTest(ctx.request.body ?? {});
    const doc = await services.endpoints.get(ctx.params.id as string);
    if (doc.isSystem) throw badRequest('System endpoints are platform routes: call them directly');
    if (input.clientIp !== undefined && isIP(input.clientIp) === 0) throw badRequest('Invalid request body: clientIp must be an IP address', [{ field: 'clientIp', message: 'must be an IP address' }]);
    const table = await services.engine.table();
    const group = doc.groupId ? await services.endpointGroups.get(doc.groupId).catch(() => undefined) : undefined;
    const endpoint = table.endpoints.find((e) => e.doc._id === doc._id) ?? compileEndpoint(doc, group);
    const params = input.params ?? {};
    const missing = endpoint.pattern.paramNames.filter((name) => !params[name]);
    if (missing.length > 0) throw badRequest(`Invalid request body: params needs ${missing.join(', ')}`, [{ field: 'params', message: `needs ${missing.join(', ')}` }]);
    const path = fillPattern(endpoint.pattern, params) + (input.recordId ? `/${encodeURIComponent(input.recordId)}` : '');
    const headers = Object.fromEntries(Object.entries(input.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    const clientIp = input.clientIp ?? ctx.state.clientIp;
    const started = performance.now();
    const response = await services.engine.dispatchMatch(table, { endpoint, params, id: input.recordId ?? null }, {
      method: doc.method,
      path,
      headers,
      query: input.query ?? {},
      body: input.body,
      ip: clientIp,
      principal: ctx.state.principal,
      skipNetworkRules: input.applyNetworkAccess !== true,
    });
    ok(ctx, {
      request: { method: doc.method, path, headers, query: input.query ?? {}, body: input.body ?? null, clientIp, networkRulesApplied: input.applyNetworkAccess === true },
      status: response.status,
      body: response.body,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
    });
  });
}
