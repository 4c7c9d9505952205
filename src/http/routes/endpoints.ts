import { isIP } from 'node:net';
import { AppError, badRequest } from '../../lib/errors.ts';
import type { EndpointDoc } from '../../model/endpoint.ts';
import { compileValidator } from '../../model/validation.ts';
import { endpointDocs, endpointExamples, exampleReferencePaths } from '../../runtime/endpoint-docs.ts';
import type { Services } from '../container.ts';
import { publicEndpointGroup } from '../../services/endpoint-groups.ts';
import { requireActor, requireAny } from '../middleware/require-permission.ts';
import { listQuery, noInput, noQuery } from '../query.ts';
import { notAllowed, ok, paged } from '../respond.ts';
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

  const presentOne = async (doc: EndpointDoc) => (await services.endpoints.present([doc]))[0];

  // Groups first: `/endpoints/groups` must not be taken for `/endpoints/:id`.
  router.get('/endpoints/groups', read, async (ctx) => {
    const query = listQuery(ctx);
    paged(ctx, await services.endpointGroups.list(query), query, publicEndpointGroup);
  });
  router.get('/endpoints/groups/:id', read, noQuery, async (ctx) => {
    ok(ctx, publicEndpointGroup(await services.endpointGroups.get(ctx.params.id as string)));
  });
  router.post('/endpoints/groups', write, noQuery, async (ctx) => {
    const group = await services.endpointGroups.create(ctx.request.body, requireActor(ctx));
    ok(ctx, publicEndpointGroup(group), { status: 201 });
  });
  router.put('/endpoints/groups/:id', write, noQuery, async (ctx) => {
    const group = await services.endpointGroups.update(ctx.params.id as string, ctx.request.body, requireActor(ctx));
    ok(ctx, publicEndpointGroup(group));
  });
  router.delete('/endpoints/groups/:id', write, noInput, async (ctx) => {
    const group = await services.endpointGroups.delete(ctx.params.id as string, requireActor(ctx));
    ok(ctx, publicEndpointGroup(group));
  });
  // Any other method on the group list would reach `/endpoints/:id` (PUT/DELETE of an endpoint
  // with the id "groups", a 404) and the router would name those methods in Allow: answer for
  // the list itself instead, OPTIONS included.
  router.all('/endpoints/groups', (ctx) => notAllowed(ctx, ['GET', 'HEAD', 'POST', 'OPTIONS']));

  router.get('/endpoints', read, async (ctx) => {
    const query = listQuery(ctx, { defaultLimit: 50, extra: ['groupId'] });
    // `groupId=<id>` lists one endpoint group's definitions, `groupId=none` those in no group.
    const groupId = query.extra.groupId;
    const filter = groupId === undefined || groupId === '' ? undefined : { groupId: groupId === 'none' ? null : groupId };
    const page = await services.endpoints.list({ ...query, ...(filter ? { filter } : {}) });
    paged(ctx, { items: await services.endpoints.present(page.items), total: page.total }, query, (item) => item);
  });
  router.get('/endpoints/:id', read, noQuery, async (ctx) => {
    ok(ctx, await presentOne(await services.endpoints.get(ctx.params.id as string)));
  });
  router.post('/endpoints', write, noQuery, async (ctx) => {
    const endpoint = await services.endpoints.create(ctx.request.body, requireActor(ctx));
    ok(ctx, await presentOne(endpoint), { status: 201 });
  });
  router.put('/endpoints/:id', write, noQuery, async (ctx) => {
    const endpoint = await services.endpoints.update(ctx.params.id as string, ctx.request.body, requireActor(ctx));
    ok(ctx, await presentOne(endpoint));
  });
  router.delete('/endpoints/:id', write, noInput, async (ctx) => {
    const endpoint = await services.endpoints.delete(ctx.params.id as string, requireActor(ctx));
    ok(ctx, await presentOne(endpoint));
  });

  router.get('/endpoints/:id/examples', read, noQuery, async (ctx) => {
    const doc = await services.endpoints.get(ctx.params.id as string);
    // Who may run the endpoint (/test, manage_api) gets a sample body naming existing records
    // where it holds references, so it can be sent as it is; `view` alone sees placeholder ids.
    const recordIds = new Map<string, string>();
    if (ctx.state.principal?.permissions.has('manage_api')) {
      for (const path of exampleReferencePaths(doc)) {
        const id = await services.records.newestId(path);
        if (id !== null) recordIds.set(path, id);
      }
    }
    ok(ctx, endpointExamples(doc, recordIds));
  });
  router.get('/endpoints/:id/docs', read, noQuery, async (ctx) => {
    const doc = await services.endpoints.get(ctx.params.id as string);
    ok(ctx, endpointDocs(doc, await services.endpoints.indexesOfPath(doc.path)));
  });

  // Runs the endpoint through the engine's invoke, the same steps as a live call (network rules
  // skipped unless applyNetworkAccess), as the calling user, and reports what happened.
  router.post('/endpoints/:id/test', write, noQuery, async (ctx) => {
    const input = validateTest(ctx.request.body ?? {});
    // Only what a JSON request can carry (the JSON parser refuses a bare scalar), so a test is
    // never counted or audited for a body no live call could have sent.
    if (input.body !== undefined && (typeof input.body !== 'object' || input.body === null)) {
      throw badRequest('Invalid request body: body must be a JSON object or array', [{ field: 'body', message: 'must be a JSON object or array' }]);
    }
    const doc = await services.endpoints.get(ctx.params.id as string);
    if (doc.isSystem) throw badRequest('System endpoints are platform routes: call them directly');
    if (input.clientIp !== undefined && isIP(input.clientIp) === 0) throw badRequest('Invalid request body: clientIp must be an IP address', [{ field: 'clientIp', message: 'must be an IP address' }]);
    const call = await services.engine.resolve(doc._id, { params: input.params ?? {}, ...(input.recordId ? { recordId: input.recordId } : {}), includeDisabled: true }).catch((error: unknown) => {
      throw error instanceof AppError && error.status === 400 ? new AppError(400, `Invalid request body: ${error.message}`, { ...(error.details ? { details: error.details } : {}) }) : error;
    });
    const headers = Object.fromEntries(Object.entries(input.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    const clientIp = input.clientIp ?? ctx.state.clientIp;
    const started = performance.now();
    const response = await services.engine.invoke(call, {
      headers,
      query: input.query ?? {},
      body: input.body,
      ip: clientIp,
      skipNetworkRules: input.applyNetworkAccess !== true,
      source: 'test',
    }, ctx.state.principal);
    ok(ctx, {
      request: { method: call.method, path: call.path, headers, query: input.query ?? {}, body: input.body ?? null, clientIp, networkRulesApplied: input.applyNetworkAccess === true },
      status: response.status,
      body: response.body,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
    });
  });
}
