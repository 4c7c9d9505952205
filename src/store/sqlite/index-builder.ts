import { Worker } from 'node:worker_threads';
import type { IndexJob, IndexJobReply } from './index-worker.ts';

/**
 * The request-thread side of index-worker.ts: one worker per job (jobs are rare: a definition
 * change or a start), and a gate that the store's writes wait on while a job holds the write
 * lock, so that they queue here without blocking the event loop (a write on the request thread
 * would otherwise wait for the lock synchronously, in SQLite's busy handler).
 */
export class IndexBuilder {
  private readonly file: string;
  private readonly busyTimeoutMs: number;
  private running: Promise<unknown> = Promise.resolve();
  private gate: Promise<void> | null = null;

  constructor(file: string, busyTimeoutMs: number) {
    this.file = file;
    // Off the request thread, a build may wait longer for another writer (another process, the
    // audit appender) than a request would.
    this.busyTimeoutMs = Math.max(busyTimeoutMs, 60_000);
  }

  /** Resolves when no job runs: writes await this first (null when none runs, so they need not wait a turn). */
  get writesWait(): Promise<void> | null {
    return this.gate;
  }

  /** Runs a job after the ones before it; the job is made when its turn comes (from the indexes there are then). */
  run(makeJob: () => IndexJob): Promise<IndexJobReply> {
    const next = this.running.then(() => this.runNow(makeJob()));
    this.running = next.catch(() => undefined);
    return next;
  }

  private async runNow(job: IndexJob): Promise<IndexJobReply> {
    if (job.drop.length === 0 && job.create.length === 0) return { ok: true, buildMs: {} };
    let open!: () => void;
    this.gate = new Promise<void>((resolve) => (open = resolve));
    try {
      return await this.inWorker(job);
    } finally {
      this.gate = null;
      open();
    }
  }

  private inWorker(job: IndexJob): Promise<IndexJobReply> {
    // The worker runs from source (type stripping) or from the build, like this file.
    const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
    const worker = new Worker(new URL(`./index-worker${extension}`, import.meta.url), { workerData: { file: this.file, busyTimeoutMs: this.busyTimeoutMs } });
    return new Promise<IndexJobReply>((resolve, reject) => {
      worker.once('message', (reply: IndexJobReply) => resolve(reply));
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the index worker stopped (exit code ${code})`)));
      worker.postMessage(job);
    }).finally(() => void worker.terminate());
  }

  /** Waits for the jobs queued so far. */
  async idle(): Promise<void> {
    await this.running;
  }
}
