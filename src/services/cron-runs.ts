// Run records of cron jobs (`cronruns`, purged with the audit log's retention) and the claims that
// make a scheduled fire run once across instances (`cronclaims`): the first instance to insert the
// (jobId, scheduledAt) row runs it; the unique index refuses everyone else. A claim is per fire
// time, so an instance that dies mid-run blocks nothing but that one fire. Claims expire after a day.
import type { CronRunDoc } from '../model/cron-job.ts';
import { DuplicateKeyError, type NewDoc, type Page, type Store } from '../store/types.ts';

const CLAIM_TTL_MS = 24 * 60 * 60_000;

export class CronRunsService {
  private readonly store: Store;

  constructor(store: Store) {
    this.store = store;
  }

  private get runs() {
    return this.store.collection<CronRunDoc>('cronruns');
  }

  /** True when this caller won the fire `scheduledAt` of `jobId`. */
  async claim(jobId: string, scheduledAt: string, instance: string): Promise<boolean> {
    try {
      await this.store.collection('cronclaims').insertOne({ jobId, scheduledAt, instance, expiresAt: new Date(Date.now() + CLAIM_TTL_MS) });
      return true;
    } catch (error) {
      if (error instanceof DuplicateKeyError) return false;
      throw error;
    }
  }

  record(run: NewDoc<CronRunDoc>): Promise<CronRunDoc> {
    return this.runs.insertOne(run);
  }

  list(jobId: string, query: { page: number; limit: number }): Promise<Page<CronRunDoc>> {
    return this.runs.findPage({ jobId }, { page: query.page, limit: query.limit, sort: { startedAt: -1, _id: -1 } });
  }

  deleteOfJob(jobId: string): Promise<number> {
    return this.runs.deleteMany({ jobId });
  }

  purgeOlderThan(days: number): Promise<number> {
    return this.runs.deleteMany({ startedAt: { $lt: new Date(Date.now() - days * 86_400_000) } });
  }
}

export function publicCronRun(doc: CronRunDoc) {
  return {
    _id: doc._id,
    jobId: doc.jobId,
    jobName: doc.jobName,
    trigger: doc.trigger,
    scheduledAt: doc.scheduledAt,
    status: doc.status,
    error: doc.error,
    durationMs: doc.durationMs,
    output: doc.output,
    startedAt: new Date(doc.startedAt).toISOString(),
    finishedAt: new Date(doc.finishedAt).toISOString(),
  };
}
