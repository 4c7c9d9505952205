// Schedules every enabled job on this instance, one FireTimer each, and keeps the set current: once
// a second it compares the `cronjobs` revision, and on a change re-reads the jobs and replaces the
// timers whose schedule, timezone or enabled flag changed (a fire reads the job afresh, so other
// edits need no new timer). Fire times, days and daylight saving included, are cron-schedule.ts's.
//
// Once across instances: every instance fires every job; each fire first claims (jobId, fire time)
// in the store (see CronRunsService.claim), and only the instance that wins runs it. Fires missed
// while no instance was running are skipped, not replayed: a timer plans from now on.
//
// On one instance a scheduled run still under way at the next fire time makes this instance skip
// that fire (another instance may claim it). Manual runs are bounded by the runner (job-runner.ts).
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../lib/logger.ts';
import type { CronJobDoc } from '../../model/cron-job.ts';
import { nextFireAfter, parseSchedule } from '../../model/cron-schedule.ts';
import type { CronJobsService } from '../../services/cron-jobs.ts';
import type { CronRunsService } from '../../services/cron-runs.ts';
import { FireTimer } from './fire-timer.ts';
import type { CronJobRunner } from './job-runner.ts';

const CHECK_INTERVAL_MS = 1000;
/** Shutdown waits this long for runs under way; a run cut off after it leaves no run record. */
const DRAIN_MS = 10_000;

interface Scheduled {
  signature: string;
  timer: FireTimer;
  /** A scheduled run of the job is under way on this instance. */
  running: boolean;
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
    for (const { timer } of this.tasks.values()) timer.stop();
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
        scheduled.timer.stop();
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
      const schedule = parseSchedule(job.schedule);
      const { timezone } = job;
      const timer = new FireTimer((after) => nextFireAfter(schedule, timezone, after), (at) => this.fireOnce(job, scheduled, at));
      const scheduled: Scheduled = { signature: signature(job), running: false, timer };
      scheduled.timer.start();
      this.tasks.set(job._id, scheduled);
    } catch (error) {
      // Validated at save; a stored job that no longer parses must not stop the others.
      this.logger.warn(`cron: job "${job.name}" cannot be scheduled`, { error });
    }
  }

  /** A fire, unless the job's previous scheduled run on this instance is still under way. */
  private fireOnce(job: CronJobDoc, scheduled: Scheduled, at: Date): void {
    if (scheduled.running) {
      this.logger.debug(`cron: job "${job.name}" is still running, its fire at ${at.toISOString()} is skipped here`);
      return;
    }
    scheduled.running = true;
    void this.fire(job._id, at).finally(() => {
      scheduled.running = false;
    });
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
}

function signature(job: CronJobDoc): string {
  return `${job.schedule}\u0000${job.timezone}`;
}
