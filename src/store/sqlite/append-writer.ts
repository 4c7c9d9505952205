import { Worker } from 'node:worker_threads';
import type { FlatDocs } from '../types.ts';
import { encodeRows, type AppendBatch } from './append-rows.ts';

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
   * Stores the documents in the collection, all in one transaction. They are turned into their
   * rows' values here (append-rows.ts) — a flat array of strings crosses to the worker for a
   * fraction of what a structured clone of the documents costs — and the worker inserts them.
   */
  append(collection: string, docs: readonly object[]): Promise<void> {
    let rows;
    try {
      rows = encodeRows(collection, docs);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return this.send({ rows });
  }

  /**
   * Stores flat documents (FlatDocs) in the collection, all in one transaction. Their columns
   * cross as they are, and the worker makes documents and rows of them: the request thread pays
   * only for the structured clone of a few primitives per document.
   */
  appendFlat(collection: string, docs: FlatDocs): Promise<void> {
    return this.send({ flat: { collection, fields: docs.fields, dates: docs.dates, values: docs.values } });
  }

  private send(batch: AppendBatch): Promise<void> {
    const id = this.nextId++;
    const done = new Promise<void>((resolve, reject) => {
      this.waiters.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...batch });
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
