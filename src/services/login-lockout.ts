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

  async recordFailure(key: string, policy: LockoutPolicy): Promise<void> {
    if (policy.threshold === 0) return;
    const now = new Date();
    const window = new Date(now.getTime() + policy.minutes * 60_000);
    // Failures older than the window start over; the conditional update keeps concurrent
    // failures from several instances all counted.
    let doc = await this.attempts.updateOne(
      { loginKey: key, expiresAt: { $gt: now } },
      { $inc: { failures: 1 }, $set: { expiresAt: window } },
    );
    doc ??= await this.attempts.updateOne(
      { loginKey: key },
      { $set: { failures: 1, lockedUntil: null, expiresAt: window } },
      { upsert: true },
    );
    if (doc && doc.failures >= policy.threshold) {
      await this.attempts.updateOne({ _id: doc._id }, { $set: { lockedUntil: window, failures: 0, expiresAt: window } });
    }
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
