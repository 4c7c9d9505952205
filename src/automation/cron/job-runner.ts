// Runs one job once — for a scheduled fire this instance claimed, or on request (POST /:id/run) —
// and records it four ways: the day's `cronRuns` (and `cronFailures`) counters behind the
// dashboard, a run record (`cronruns`), the job's last* fields, and a `cron_run` audit entry.
// A run never throws: whatever goes wrong is the run's failure.
import type { Logger } from '../../lib/logger.ts';
import type { CronJobDoc, CronRunDoc } from '../../model/cron-job.ts';
import type { Principal } from '../../model/principal.ts';
import type { AuditLog } from '../../services/audit-log.ts';
import type { CronJobsService } from '../../services/cron-jobs.ts';
import type { CronRunsService } from '../../services/cron-runs.ts';
import type { DailyStats } from '../../services/daily-stats.ts';
import type { SettingsService } from '../../services/settings.ts';
import { runCronAction } from './actions/index.ts';
import type { ActionOutcome } from './actions/action.ts';
import type { Invoke } from './invoke.ts';

interface Deps {
  jobs: CronJobsService;
  runs: CronRunsService;
  settings: SettingsService;
  audit: AuditLog;
  daily: DailyStats;
  invoke: Invoke;
  logger: Logger;
}

export interface RunTrigger {
  trigger: 'schedule' | 'manual';
  /** The claimed fire time of a scheduled run. */
  scheduledAt?: string;
  /** Who asked for a manual run (for the audit entry). */
  by?: Principal;
}

export class CronJobRunner {
  private readonly deps: Deps;
  private readonly inFlight = new Set<Promise<CronRunDoc>>();

  constructor(deps: Deps) {
    this.deps = deps;
  }

  run(job: CronJobDoc, trigger: RunTrigger): Promise<CronRunDoc> {
    const running = this.execute(job, trigger);
    this.inFlight.add(running);
    void running.finally(() => this.inFlight.delete(running)).catch(() => undefined);
    return running;
  }

  /** Resolves once the runs under way have ended (for shutdown). */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  private async execute(job: CronJobDoc, trigger: RunTrigger): Promise<CronRunDoc> {
    const { jobs, runs, settings, audit, daily, invoke, logger } = this.deps;
    const startedAt = new Date();
    const started = performance.now();
    let outcome: ActionOutcome;
    try {
      outcome = await runCronAction(job.action, { settings: await settings.get(), invoke, principal: () => jobs.runAsPrincipal(job) });
    } catch (error) {
      logger.warn('cron action threw', { job: job.name, error });
      outcome = { ok: false, error: error instanceof Error ? error.message : String(error), output: null };
    }
    const durationMs = Math.round(performance.now() - started);
    const status = outcome.ok ? 'ok' : 'failed';
    const error = outcome.ok ? null : (outcome.error ?? 'failed').slice(0, 2000);
    const finishedAt = new Date();
    daily.bump('cronRuns');
    if (status === 'failed') daily.bump('cronFailures');
    const run = await runs.record({
      jobId: job._id,
      jobName: job.name,
      trigger: trigger.trigger,
      scheduledAt: trigger.scheduledAt ?? null,
      status,
      error,
      durationMs,
      output: outcome.output,
      startedAt,
      finishedAt,
    });
    await jobs.recordOutcome(job._id, { status, error, durationMs, at: startedAt });
    await audit.record({
      action: 'cron_run',
      message: `Cron job "${job.name}" ${status === 'ok' ? 'ran' : 'failed'} in ${durationMs} ms (${trigger.trigger})${error ? `: ${error}` : ''}`,
      source: 'cron',
      userId: trigger.by?.kind === 'user' ? trigger.by.userId : null,
      statusCode: status === 'ok' ? 200 : 500,
    });
    return run;
  }
}
