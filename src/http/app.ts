import Koa from 'koa';
import type { Services } from './container.ts';
import { isReservedConcretePath } from '../model/reserved-paths.ts';
import { notServed } from '../runtime/error-response.ts';
import { adminUi } from './middleware/admin-ui.ts';
import { authenticate } from './middleware/authenticate.ts';
import { jsonBody } from './middleware/body.ts';
import { cors } from './middleware/cors.ts';
import { csrfProtection } from './middleware/csrf.ts';
import { errorHandler } from './middleware/error-handler.ts';
import { rateLimit } from './middleware/rate-limit.ts';
import { requestContext } from './middleware/request-context.ts';
import { securityHeaders } from './middleware/security-headers.ts';
import { countSystemCalls } from './middleware/system-calls.ts';
import { apiKeyRoutes } from './routes/api-keys.ts';
import { authRoutes } from './routes/auth.ts';
import { dashboardRoutes } from './routes/dashboard.ts';
import { databaseRoutes } from './routes/database.ts';
import { groupRoutes } from './routes/groups.ts';
import { profileRoutes } from './routes/profile.ts';
import { createRouter } from './routes/router.ts';
import { cronRoutes } from './routes/cron.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { settingsRoutes } from './routes/settings.ts';
import { userRoutes } from './routes/users.ts';
import { endpointRoutes } from './routes/endpoints.ts';
import { PROJECT_BUNDLE_PATHS, PROJECT_IMPORT_PATH, projectRoutes } from './routes/project.ts';
import { docsRoutes } from './routes/docs.ts';
import { MCP_PATH, mcpRoutes } from './routes/mcp.ts';
import { dynamicEndpoints } from './middleware/dynamic-endpoints.ts';
import { dynamicFastPath, type RequestListener } from './fast-path.ts';
import type { DynState } from './state.ts';

const SERVICE_VERSION = '0.1.0';

/**
 * What the HTTP server runs: dynamic GET and HEAD requests are answered by the fast path
 * (fast-path.ts), which takes the same steps as the Koa chain without its per-request objects;
 * every other request goes to the Koa application.
 */
export function createRequestListener(services: Services): RequestListener {
  return dynamicFastPath(services, createApp(services).callback());
}

/**
 * The Koa application: one middleware per concern, in this order, then the management routes
 * under /api, then the dynamic endpoints for whatever no management route answered.
 */
export function createApp(services: Services): Koa<DynState> {
  const app = new Koa<DynState>({ proxy: false });
  app.silent = true; // errors are rendered and logged by errorHandler

  app.use(securityHeaders({ production: services.config.nodeEnv === 'production' }));
  app.use(errorHandler(services.logger, services.audit, services.engine));
  app.use(cors(services.config.corsOrigins));
  app.use(requestContext(services.settings));
  app.use(rateLimit(services.rateLimiter));
  app.use(adminUi());
  app.use(jsonBody(services.config.bodyLimitBytes, { rawPaths: [MCP_PATH], streamPaths: [PROJECT_IMPORT_PATH], bundlePaths: PROJECT_BUNDLE_PATHS }));
  app.use(authenticate(services));
  app.use(csrfProtection());
  app.use(countSystemCalls(services));

  const api = createRouter('/api');
  authRoutes(api, services);
  userRoutes(api, services);
  groupRoutes(api, services);
  profileRoutes(api, services);
  apiKeyRoutes(api, services);
  settingsRoutes(api, services);
  dashboardRoutes(api, services);
  databaseRoutes(api, services);
  endpointRoutes(api, services);
  projectRoutes(api, services);
  cronRoutes(api, services);
  docsRoutes(api, services);
  mcpRoutes(api, services, SERVICE_VERSION);
  webhookRoutes(api, services);
  // Only paths under a management root go through the router's matching; the rest (dynamic
  // endpoints) skip it, which keeps their per-request cost down.
  const management = api.routes();
  const allowedMethods = api.allowedMethods({ throw: false });
  app.use((ctx, next) => {
    ctx.state.managementRoute = isReservedConcretePath(ctx.path);
    return ctx.state.managementRoute ? management(ctx as never, next) : next();
  });
  app.use(dynamicEndpoints(services.engine));
  // From here on only management paths: the methods the router serves the path with (it sets
  // Allow, and answers OPTIONS), then a 405 naming them or a 404 — answered by the same function
  // the engine answers dynamic paths with.
  const noMore = async () => undefined;
  app.use(async (ctx) => {
    await allowedMethods(ctx as never, noMore);
    if (ctx.body !== undefined && ctx.body !== null) return;
    const allowed = String(ctx.response.get('Allow') ?? '').split(/,\s*/).filter(Boolean);
    const answer = notServed(ctx.method, ctx.path, allowed);
    ctx.status = answer.status;
    ctx.set(answer.headers);
    ctx.body = answer.body;
  });
  return app;
}
