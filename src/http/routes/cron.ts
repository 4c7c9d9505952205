// Cron job routes (permission manage_api): definitions, run now, run history. `:id` is a job's id or
// its name. The service writes the audit entries; a run writes its own (cron_run).
import type { CronJobRunner } from '../../automation/cron/job-runner.ts';
import type { CronActor, CronJobsService } from '../../services/cron-jobs.ts';
import { publicCronJob } from '../../services/cron-jobs.ts';
import { publicCronRun, type CronRunsService } from '../../services/cron-runs.ts';
import { requireAny, requirePrincipal } from '../middleware/require-permission.ts';
import { listQuery, noInput, noQuery, readQuery } from '../query.ts';
import { ok, paged } from '../respond.ts';
import { requestInfo, type DynContext } from '../state.ts';
import type { ApiRouter } from './router.ts';

const PAGE_ONLY = ['page', 'limit'];

export function cronRoutes(router: ApiRouter, services: { cronJobs: CronJobsService; cronRuns: CronRunsService; cronRunner: CronJobRunner }): void {
  const { cronJobs, cronRuns, cronRunner } = services;
  const manage = requireAny('manage_api');
  const actor = (ctx: DynContext): CronActor => ({ principal: requirePrincipal(ctx), request: requestInfo(ctx) });
  const job = (ctx: DynContext) => cronJobs.find(ctx.params.id as string);

  router.get('/cron', manage, async (ctx) => {
    const query = listQuery(ctx);
    paged(ctx, await cronJobs.list(query), query, publicCronJob);
  });

  router.get('/cron/:id', manage, noQuery, async (ctx) => {
    ok(ctx, publicCronJob(await job(ctx)));
  });

  router.post('/cron', manage, noQuery, async (ctx) => {
    ok(ctx, publicCronJob(await cronJobs.create(ctx.request.body, actor(ctx))), { status: 201 });
  });

  router.put('/cron/:id', manage, noQuery, async (ctx) => {
    const current = await job(ctx);
    ok(ctx, publicCronJob(await cronJobs.update(current._id, ctx.request.body, actor(ctx))));
  });

  router.delete('/cron/:id', manage, noInput, async (ctx) => {
    const current = await job(ctx);
    const deleted = await cronJobs.delete(current._id, actor(ctx));
    await cronRuns.deleteOfJob(deleted._id);
    ok(ctx, publicCronJob(deleted));
  });

  // Runs the job now, on this instance, whether or not it is enabled; answers with the run. While a
  // run of the job is under way on this instance, a 409 naming when it started (job-runner.ts).
  router.post('/cron/:id/run', manage, noInput, async (ctx) => {
    const current = await job(ctx);
    ok(ctx, publicCronRun(await cronRunner.run(current, { trigger: 'manual', by: requirePrincipal(ctx) })));
  });

  // Runs are paged, not searched: `search` is a 400 like any unknown parameter, never ignored.
  router.get('/cron/:id/runs', manage, async (ctx) => {
    readQuery(ctx, PAGE_ONLY);
    const query = listQuery(ctx);
    const current = await job(ctx);
    paged(ctx, await cronRuns.list(current._id, query), query, publicCronRun);
  });
}
