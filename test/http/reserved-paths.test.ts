import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/http/container.ts';
import { apiKeyRoutes } from '../../src/http/routes/api-keys.ts';
import { authRoutes } from '../../src/http/routes/auth.ts';
import { dashboardRoutes } from '../../src/http/routes/dashboard.ts';
import { endpointRoutes } from '../../src/http/routes/endpoints.ts';
import { groupRoutes } from '../../src/http/routes/groups.ts';
import { profileRoutes } from '../../src/http/routes/profile.ts';
import { createRouter } from '../../src/http/routes/router.ts';
import { settingsRoutes } from '../../src/http/routes/settings.ts';
import { userRoutes } from '../../src/http/routes/users.ts';
import { isReservedConcretePath } from '../../src/model/reserved-paths.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

// Dynamic paths skip the management router, so every management route must sit under a
// reserved root — or it would be unreachable and a definition could shadow it.
describe('reserved paths', () => {
  const router = createRouter('/api');
  const services = {} as Services;
  for (const register of [authRoutes, userRoutes, groupRoutes, profileRoutes, apiKeyRoutes, settingsRoutes, dashboardRoutes, endpointRoutes]) {
    register(router, services);
  }
  const paths = [...new Set(router.stack.map((layer) => String(layer.path)))];

  it('registers the management routes', () => {
    expect(paths.length).toBeGreaterThan(20);
  });

  it.each(paths)('%s is under a reserved root', (path) => {
    expect(isReservedConcretePath(path.replace(/:[A-Za-z_]+/g, 'x'))).toBe(true);
  });

  it.each([
    ['/admin', true],
    ['/admin/assets/app.js', true],
    ['//admin', true],
    ['/administrator', false],
    ['/api/users', true],
    ['/api//users/x', true],
    ['/api/v1/users', true],
    ['/api/v12/auth/login', true],
    ['/api/v1', false],
    ['/api/vx/users', false],
    ['/api/v1/v2/users', false],
    ['/api/items/users', false],
    ['/api', false],
    ['/api/', false],
    ['/', false],
    ['', false],
    ['/shop/users', false],
    ['/api/v/users', false],
    ['/api//v1//users', true],
    ['/api/v1/', false],
    ['/api/V1/users', false],
    ['/adminx', false],
    ['/api/usersx', false],
    ['/api/openapi.json', true],
  ] as const)('%s reserved: %s', (path, reserved) => {
    expect(isReservedConcretePath(path)).toBe(reserved);
  });

  // The check scans the path in place; it must agree with the plain definition on any path.
  it('agrees with the segment-list definition on generated paths', () => {
    const reference = (path: string): boolean => {
      const [first, second, third] = path.split('/').filter((s) => s !== '');
      if (first === 'admin') return true;
      if (first !== 'api') return false;
      const root = second !== undefined && /^v\d+$/.test(second) ? third : second;
      return root !== undefined && ['auth', 'users', 'openapi.json', 'docs', 'mcp'].includes(root);
    };
    const pieces = ['', 'api', 'admin', 'v1', 'v', 'v22', 'auth', 'users', 'docs', 'mcp', 'openapi.json', 'shop', 'x'];
    let seed = 7;
    const next = (n: number): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n;
    for (let i = 0; i < 5000; i++) {
      const path = (next(2) ? '/' : '') + Array.from({ length: next(6) }, () => pieces[next(pieces.length)]).join('/') + (next(4) ? '' : '/');
      expect(isReservedConcretePath(path), path).toBe(reference(path));
    }
  });
});

// The spec's own paths are reserved before they are served: a definition there is refused over
// the API and in a project bundle, naming the clash.
describe('the spec\'s paths are reserved', () => {
  let t: TestServer;
  let admin: string;
  beforeAll(async () => {
    t = await startTestServer();
    admin = (await t.login()).accessToken;
  });
  afterAll(async () => {
    await t.close();
  });

  const clashes = [
    { path: '/api/database/collections', clash: '/api/database' },
    { path: '/api/database', clash: '/api/database' },
    { path: '/api/v1/database/collections/:name', clash: '/api/v1/database' },
    { path: '/api/openapi.json', clash: '/api/openapi.json' },
    { path: '/api/v2/openapi.json', clash: '/api/v2/openapi.json' },
    { path: '/api/docs', clash: '/api/docs' },
    { path: '/api/docs/:page', clash: '/api/docs' },
    { path: '/api/mcp', clash: '/api/mcp' },
    { path: '/api/v1/mcp', clash: '/api/v1/mcp' },
    { path: '/api/cron/:id/run', clash: '/api/cron' },
    { path: '/api/webhooks', clash: '/api/webhooks' },
    { path: '/admin/endpoints', clash: '/admin' },
    { path: '/api/:section/collections', clash: 'the management routes under /api' },
    { path: '/api/v1/:section', clash: 'the management routes under /api/v1' },
  ];

  it.each(clashes)('a definition on $path is a 400 naming $clash', async ({ path, clash }) => {
    const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'Taken', path, method: 'GET', accessType: 'public', schema: [] } });
    expect(res.status, res.text).toBe(400);
    expect(res.body.details).toEqual([{ field: 'path', message: `would shadow ${clash}, which the service serves itself` }]);
    const list = await t.api('GET', '/api/endpoints?limit=200', { token: admin });
    expect(list.body.data.map((e: { path: string }) => e.path)).not.toContain(path);
  });

  it.each(clashes)('a project bundle defining $path is refused naming $clash', async ({ path, clash }) => {
    const bundle = { endpoints: [{ name: 'Taken', path, method: 'GET', accessType: 'public', schema: {} }] };
    const res = await t.api('POST', '/api/project/apply', { token: admin, body: bundle });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toContain(`path would shadow ${clash}, which the service serves itself`);
  });

  it('paths beside them stay free', async () => {
    for (const path of ['/api/databases', '/api/openapi-json', '/api/docs-site', '/api/crons', '/administrator']) {
      const res = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'Free', path, method: 'GET', accessType: 'public', schema: {} } });
      expect(res.status, `${path}: ${res.text}`).toBe(201);
    }
  });
});
