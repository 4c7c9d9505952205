import { Worker } from 'node:worker_threads';

/** The request-thread side of append-worker.ts: batches in, one promise per batch out. */
export class AppendWriter {
  private readonly worker: Worker;
  private readonly waiters = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  private readonly inFlight = new Set<Promise<void>>();
  private nextId = 1;

  constructor(file: string, busyTimeoutMs: number) {
    // The worker runs from source (type stripping) or from the build, like this file.
    const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
    this.worker = new Worker(new URL(`./append-worker${extension}`, import.meta.url), { workerData: { file, busyTimeoutMs } });
    this.worker.unref();
    this.worker.on('message', (reply: { id: number; ok: boolean; message?: string }) => {
      const waiter = this.waiters.get(reply.id);
      this.waiters.delete(reply.id);
      if (reply.ok) waiter?.resolve();
      else waiter?.reject(new Error(reply.message ?? 'append failed'));
    });
    this.worker.on('error', (error: unknown) => {
      for (const waiter of this.waiters.values()) waiter.reject(error instanceof Error ? error : new Error(String(error)));
      this.waiters.clear();
    });
  }

  /**
   * Stores the documents in the collection, all in one transaction. They cross to the worker by
   * structured clone, which costs this thread about a third of serializing them as JSON (dates
   * push JSON.stringify off its fast path); the worker does the rest.
   */
  append(collection: string, docs: readonly object[]): Promise<void> {
    const id = this.nextId++;
    const done = new Promise<void>((resolve, reject) => {
      this.waiters.set(id, { resolve, reject });
      this.worker.postMessage({ id, collection, docs });
    });
    this.inFlight.add(done);
    const forget = (): void => void this.inFlight.delete(done);
    done.then(forget, forget);
    return done;
  }

  /** Waits for the batches in flight, then stops the thread. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
    await this.worker.terminate();
  }
}
