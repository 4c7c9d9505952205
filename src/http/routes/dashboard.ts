import { badRequest } from '../../lib/errors.ts';
import type { LogDoc } from '../../model/records.ts';
import { isIsoDateTime } from '../../model/field-types/datetime.ts';
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
    const query = listQuery(ctx, { extra: ['action', 'from', 'to'] });
    const action = query.extra.action?.trim();
    const from = dateParam('from', query.extra.from);
    const to = dateParam('to', query.extra.to);
    const range = { ...(from ? { from } : {}), ...(to ? { to } : {}) };
    paged(ctx, await services.audit.list({ page: query.page, limit: query.limit, ...(query.search ? { search: query.search } : {}), ...(action ? { action } : {}), ...range }), query, publicLog);
  });
}

/**
 * `from`/`to` of the log: an ISO 8601 date or date-time (`2026-11-24`, `2026-11-24T10:00:00Z`, a
 * space for the `T` too; without a zone, UTC), a real calendar date (`2026-02-30` is a 400, not
 * the 2nd of March).
 */
function dateParam(name: string, value: string | undefined): Date | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const text = value.trim().replace(' ', 'T');
  // A date-time without a zone is UTC, as a date alone is (JavaScript would read it in the
  // server's own time zone, so one query would mean another hour on another host).
  const zoned = text.includes('T') && !/(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? `${text}Z` : text;
  const date = isIsoDateTime(text) ? new Date(zoned) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) throw badRequest(`Query parameter "${name}" must be an ISO 8601 date`, [{ field: name, message: 'must be an ISO 8601 date' }]);
  return date;
}
