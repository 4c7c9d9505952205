// Schedules every enabled job on this instance with node-cron and keeps the set current: once a
// second it compares the `cronjobs` revision, and on a change re-reads the jobs and replaces the
// tasks whose schedule, timezone or enabled flag changed (a fire reads the job afresh, so other
// edits need no new task).
//
// Once across instances: every instance fires every job; each fire first claims (jobId, fire time)
// in the store (see CronRunsService.claim), and only the instance that wins runs it. Fires missed
// while no instance was running are skipped, not replayed: node-cron schedules from now on.
//
// Days as crontab reads them: when a schedule restricts both the day of month and the day of week,
// a day matching either runs, where node-cron wants both. Such a job's task fires with both day
// fields `*` (firingSchedule), and a fire on a day matching neither is dropped before the claim
// (matchesDayFields, in the job's time zone). See the note in model/cron-job.ts.
import { randomUUID } from 'node:crypto';
import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from '../../lib/logger.ts';
import { daysEitherWay, firingSchedule, matchesDayFields, scheduleProblem, type CronJobDoc } from '../../model/cron-job.ts';
import type { CronJobsService } from '../../services/cron-jobs.ts';
import type { CronRunsService } from '../../services/cron-runs.ts';
import type { CronJobRunner } from './job-runner.ts';

const CHECK_INTERVAL_MS = 1000;
/** Shutdown waits this long for runs under way; a run cut off after it leaves no run record. */
const DRAIN_MS = 10_000;

interface Scheduled {
  signature: string;
  task: ScheduledTask;
}

export class CronScheduler {
  private readonly jobs: CronJobsService;
  private readonly runs: CronRunsService;
  private readonly runner: CronJobRunner;
  private readonly logger: Logger;
  private readonly instance = randomUUID();
  private readonly tasks = new Map<string, Scheduled>();
  private revision: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private syncing: Promise<void> | null = null;
  private closed = false;

  constructor(deps: { jobs: CronJobsService; runs: CronRunsService; runner: CronJobRunner; logger: Logger }) {
    this.jobs = deps.jobs;
    this.runs = deps.runs;
    this.runner = deps.runner;
    this.logger = deps.logger;
  }

  async start(): Promise<void> {
    await this.sync();
    this.timer = setInterval(() => void this.check(), CHECK_INTERVAL_MS);
    this.timer.unref();
  }

  /** Number of jobs scheduled on this instance. */
  get active(): number {
    return this.tasks.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.syncing;
    for (const { task } of this.tasks.values()) await task.destroy();
    this.tasks.clear();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.runner.drain(), new Promise((resolve) => (timer = setTimeout(resolve, DRAIN_MS)))]);
    clearTimeout(timer);
  }

  private async check(): Promise<void> {
    if (this.syncing || this.closed) return;
    try {
      if ((await this.jobs.revision()) !== this.revision) await this.sync();
    } catch (error) {
      this.logger.warn('cron: reloading jobs failed', { error });
    }
  }

  private sync(): Promise<void> {
    this.syncing ??= (async () => {
      // Read the revision first: a change made while the jobs are read is seen by the next check.
      const revision = await this.jobs.revision();
      const jobs = await this.jobs.all();
      if (this.closed) return;
      const wanted = new Map(jobs.filter((job) => job.enabled).map((job) => [job._id, job]));
      for (const [id, scheduled] of this.tasks) {
        const job = wanted.get(id);
        if (job && signature(job) === scheduled.signature) continue;
        await scheduled.task.destroy();
        this.tasks.delete(id);
      }
      for (const job of wanted.values()) if (!this.tasks.has(job._id)) this.schedule(job);
      this.revision = revision;
    })().finally(() => {
      this.syncing = null;
    });
    return this.syncing;
  }

  private schedule(job: CronJobDoc): void {
    try {
      const problem = scheduleProblem(job.schedule);
      if (problem) throw new Error(problem);
      const { schedule, timezone } = job;
      // Days either way: the task fires every day (firingSchedule), and runs on the days either names.
      const runsOn = daysEitherWay(schedule) ? (date: Date) => matchesDayFields(schedule, date, timezone) : () => true;
      const task = cron.createTask(firingSchedule(schedule), (context) => (runsOn(context.date) ? this.fire(job._id, context.date) : undefined), {
        timezone,
        name: `cron-${job._id}`,
        noOverlap: true,
        unref: true,
        logger: this.quietLogger(),
      });
      void task.start();
      this.tasks.set(job._id, { signature: signature(job), task });
    } catch (error) {
      // Validated at save; a stored job that no longer parses must not stop the others.
      this.logger.warn(`cron: job "${job.name}" cannot be scheduled`, { error });
    }
  }

  private async fire(jobId: string, date: Date): Promise<void> {
    if (this.closed) return;
    try {
      if (!(await this.runs.claim(jobId, date.toISOString(), this.instance))) return;
      const job = await this.jobs.get(jobId).catch(() => null);
      if (!job?.enabled || this.closed) return;
      await this.runner.run(job, { trigger: 'schedule', scheduledAt: date.toISOString() });
    } catch (error) {
      this.logger.warn('cron: a scheduled run could not be recorded', { jobId, error });
    }
  }

  private quietLogger() {
    const logger = this.logger;
    return {
      info: (message: string) => logger.debug(`node-cron: ${message}`),
      warn: (message: string) => logger.debug(`node-cron: ${message}`),
      error: (message: string | Error) => logger.warn(`node-cron: ${String(message)}`),
      debug: (message: string | Error) => logger.debug(`node-cron: ${String(message)}`),
    };
  }
}

function signature(job: CronJobDoc): string {
  return `${job.schedule}\u0000${job.timezone}`;
}
