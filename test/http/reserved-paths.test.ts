import { describe, expect, it } from 'vitest';
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
});
