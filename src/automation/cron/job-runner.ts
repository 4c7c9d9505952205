// Runs one job once — for a scheduled fire this instance claimed, or on request (POST /:id/run) —
// and records it four ways: the day's `cronRuns` (and `cronFailures`) counters behind the
// dashboard, a run record (`cronruns`), the job's last* fields, and a `cron_run` audit entry.
// A run never throws: whatever goes wrong is the run's failure.
//
// A manual run of a job that has a run under way on this instance (manual or scheduled) is a 409
// naming when that run started: each run may hold an isolate of handlerMemoryMb, so a burst of
// clicks or scripted calls must not pile them up. One at a time per job is the bound a person
// can read (wait for the run, then ask again); scheduled fires keep their own rule (scheduler.ts).
import { conflict } from '../../lib/errors.ts';
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

/** A run under way on this instance. */
interface UnderWay {
  jobId: string;
  startedAt: Date;
}

export class CronJobRunner {
  private readonly deps: Deps;
  private readonly underWay = new Map<Promise<CronRunDoc>, UnderWay>();

  constructor(deps: Deps) {
    this.deps = deps;
  }

  /** Runs the job now; a manual run of a job already running here is a 409 (see the top). */
  run(job: CronJobDoc, trigger: RunTrigger): Promise<CronRunDoc> {
    if (trigger.trigger === 'manual') this.assertNotRunning(job);
    const startedAt = new Date();
    const running = this.execute(job, trigger, startedAt);
    this.underWay.set(running, { jobId: job._id, startedAt });
    void running.finally(() => this.underWay.delete(running)).catch(() => undefined);
    return running;
  }

  /** When the earliest run of the job under way on this instance started; null when none is. */
  runningSince(jobId: string): Date | null {
    let since: Date | null = null;
    for (const run of this.underWay.values()) if (run.jobId === jobId && (!since || run.startedAt < since)) since = run.startedAt;
    return since;
  }

  /** Resolves once the runs under way have ended (for shutdown). */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.underWay.keys()]);
  }

  private assertNotRunning(job: CronJobDoc): void {
    const since = this.runningSince(job._id);
    if (since) throw conflict(`Cron job "${job.name}" is already running on this instance (since ${since.toISOString()}); run it again once that run has finished`);
  }

  private async execute(job: CronJobDoc, trigger: RunTrigger, startedAt: Date): Promise<CronRunDoc> {
    const { jobs, runs, settings, audit, daily, invoke, logger } = this.deps;
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
