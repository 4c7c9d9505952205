import type { Services } from '../container.ts';
import { toPlain } from '../../services/settings.ts';
import { setShownFieldsAside } from '../../services/shown-fields.ts';
import { requireActor, requireAny } from '../middleware/require-permission.ts';
import { noInput, noQuery, readQuery } from '../query.ts';
import { ok } from '../respond.ts';
import type { ApiRouter } from './router.ts';

export function settingsRoutes(router: ApiRouter, services: Services): void {
  const manage = requireAny('manage_users', 'manage_api');

  router.get('/settings', manage, async (ctx) => {
    readQuery(ctx, []);
    ok(ctx, { ...toPlain(await services.settings.get()), logsCount: await services.audit.count() });
  });

  router.put('/settings', manage, noQuery, async (ctx) => {
    // GET adds `logsCount`: sent back, it is ignored like any member the service keeps.
    const { rest } = setShownFieldsAside(ctx.request.body, [], ['logsCount']);
    const settings = await services.settings.update(rest, requireActor(ctx));
    ok(ctx, { ...settings, logsCount: await services.audit.count() });
  });

  router.delete('/settings/logs', manage, noInput, async (ctx) => {
    const deleted = await services.audit.clear(requireActor(ctx));
    ok(ctx, { deleted });
  });

  router.delete('/settings/logs/old', manage, noInput, async (ctx) => {
    const days = (await services.settings.get()).logRetentionDays;
    const deleted = await services.audit.purgeOlderThan(days, requireActor(ctx));
    ok(ctx, { deleted, olderThanDays: days });
  });
}
