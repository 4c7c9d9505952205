import type { LogDoc } from '../../model/records.ts';
import type { Services } from '../container.ts';
import { requireAny } from '../middleware/require-permission.ts';
import { listQuery, readQuery } from '../query.ts';
import { ok, paged } from '../respond.ts';
import type { ApiRouter } from './router.ts';

function publicLog(doc: LogDoc): Record<string, unknown> {
  return { ...doc, createdAt: String(doc.createdAt) };
}

export function dashboardRoutes(router: ApiRouter, services: Services): void {
  router.get('/dashboard/stats', requireAny('view'), async (ctx) => {
    readQuery(ctx, []);
    ok(ctx, await services.dashboardStats.stats());
  });

  router.get('/dashboard/system', requireAny('view'), async (ctx) => {
    readQuery(ctx, []);
    ok(ctx, await services.systemInfo.info());
  });

  router.get('/dashboard/logs', requireAny('view_logs'), async (ctx) => {
    const query = listQuery(ctx, { extra: ['action'] });
    const action = query.extra.action?.trim();
    paged(ctx, await services.audit.list({ page: query.page, limit: query.limit, ...(query.search ? { search: query.search } : {}), ...(action ? { action } : {}) }), query, publicLog);
  });
}
