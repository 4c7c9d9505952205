import { tooManyRequests } from '../lib/errors.ts';
import type { Store } from '../store/types.ts';

/**
 * Failed-login counting per login key (trimmed, lower-cased), kept in the store so that every
 * instance sees it. After `threshold` failures within `minutes` of each other the login is
 * locked for `minutes`. A login that does not exist is counted and locked the same way, so
 * lockout reveals nothing about which logins exist. A threshold of 0 turns lockout off.
 */
interface AttemptDoc {
  _id: string;
  [key: string]: unknown;
  loginKey: string;
  failures: number;
  lockedUntil: string | Date | null;
  expiresAt: string | Date;
}

export interface LockoutPolicy {
  threshold: number;
  minutes: number;
}

export class LoginLockout {
  private readonly store: Store;

  constructor(store: Store) {
    this.store = store;
  }

  private get attempts() {
    return this.store.collection<AttemptDoc>('loginattempts');
  }

  async assertNotLocked(key: string, policy: LockoutPolicy): Promise<void> {
    if (policy.threshold === 0) return;
    const doc = await this.attempts.findOne({ loginKey: key });
    const lockedUntil = doc?.lockedUntil ? Date.parse(String(doc.lockedUntil)) : 0;
    const remainingMs = lockedUntil - Date.now();
    if (remainingMs > 0) {
      const minutes = Math.ceil(remainingMs / 60_000);
      // Rounded up to the minute, as the countdown is: "in 15 minutes (locked until 18:45 UTC)".
      const until = new Date(Math.ceil(lockedUntil / 60_000) * 60_000).toISOString().slice(0, 16).replace('T', ' ');
      throw tooManyRequests(`Too many failed login attempts; try again in ${minutes} minute${minutes === 1 ? '' : 's'} (locked until ${until} UTC)`, remainingMs / 1000);
    }
  }

  /**
   * Counts an attempt as failed before its password is checked, and refuses it (429) when the
   * attempts already counted in the window reach the threshold. Counting first is what keeps
   * the bound under concurrency: a burst of guesses sent at once would otherwise all pass
   * `assertNotLocked` before the first of them failed. So at most `threshold` passwords are
   * checked per window, however they arrive; a success forgets the count (`recordSuccess`).
   * Returns the attempt's number in the window, for `recordFailure`.
   */
  async beginAttempt(key: string, policy: LockoutPolicy): Promise<number> {
    if (policy.threshold === 0) return 0;
    const now = new Date();
    const window = new Date(now.getTime() + policy.minutes * 60_000);
    // Failures older than the window start over. Each step is atomic on its own, so attempts
    // from several requests or instances are all counted: none resets another's count.
    await this.attempts.deleteMany({ loginKey: key, expiresAt: { $lte: now } });
    const doc = await this.attempts.updateOne({ loginKey: key }, { $inc: { failures: 1 }, $set: { expiresAt: window } }, { upsert: true });
    const attempt = doc?.failures ?? 1;
    if (attempt > policy.threshold) {
      // The earlier attempts are still being checked (a lock comes when they have failed).
      throw tooManyRequests('Too many login attempts at once; try again in a moment', 1);
    }
    return attempt;
  }

  /** An attempt counted by `beginAttempt` failed: the one that reaches the threshold locks the login. */
  async recordFailure(key: string, attempt: number, policy: LockoutPolicy): Promise<void> {
    if (policy.threshold === 0 || attempt < policy.threshold) return;
    const until = new Date(Date.now() + policy.minutes * 60_000);
    await this.attempts.updateOne({ loginKey: key }, { $set: { lockedUntil: until, failures: 0, expiresAt: until } });
  }

  /** Ends a lockout and forgets the failures (an administrator's unlock); true if it was locked. */
  async unlock(key: string): Promise<boolean> {
    const doc = await this.attempts.findOne({ loginKey: key });
    const locked = Boolean(doc?.lockedUntil && Date.parse(String(doc.lockedUntil)) > Date.now());
    if (doc) await this.attempts.deleteOne({ _id: doc._id });
    return locked;
  }

  async recordSuccess(key: string): Promise<void> {
    await this.attempts.deleteOne({ loginKey: key });
  }

  purgeExpired(): Promise<number> {
    return this.attempts.deleteMany({ expiresAt: { $lt: new Date() } });
  }
}
