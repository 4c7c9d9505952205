/**
 * Counts served calls per endpoint in memory and adds them to the stored `callCount` in one
 * write per endpoint every FLUSH_MS (and on shutdown), so counting never costs a write per call.
 */
const FLUSH_MS = 1000;

export class CallCounter {
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private readonly write: (counts: ReadonlyMap<string, number>) => Promise<void>;
  private readonly onError: (error: unknown) => void;

  constructor(write: CallCounter['write'], onError: CallCounter['onError']) {
    this.write = write;
    this.onError = onError;
  }

  count(endpointId: string): void {
    this.pending.set(endpointId, (this.pending.get(endpointId) ?? 0) + 1);
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), FLUSH_MS);
      this.timer.unref();
    }
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.flushing.then(async () => {
      if (batch.size === 0) return;
      try {
        await this.write(batch);
      } catch (error) {
        this.onError(error);
      }
    });
    return this.flushing;
  }
}
