import { createHash, randomBytes } from 'node:crypto';
import type { UserDoc } from '../model/records.ts';
import type { Store } from '../store/types.ts';

/**
 * Refresh-token sessions. A refresh token carries a random session id; only its SHA-256 is
 * stored. Using a token deletes its session (rotation), so a used token never works twice,
 * on any instance. `revokeAll` ends every session of a user and bumps the user's token
 * version, which makes outstanding access tokens fail (see authenticator.ts).
 */
interface SessionDoc {
  _id: string;
  [key: string]: unknown;
  userId: string;
  tokenHash: string;
  expiresAt: Date | string;
  createdAt: Date | string;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export class Sessions {
  private readonly store: Store;
  private readonly revokeListeners: Array<(userId: string) => void> = [];

  constructor(store: Store) {
    this.store = store;
  }

  private get sessions() {
    return this.store.collection<SessionDoc>('sessions');
  }

  async create(userId: string, ttlSeconds: number): Promise<{ sessionId: string; expiresAt: Date }> {
    const sessionId = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
    await this.sessions.insertOne({ userId, tokenHash: sha256(sessionId), expiresAt, createdAt: new Date() });
    return { sessionId, expiresAt };
  }

  /** True exactly once per live session: the caller that deletes it wins. */
  async consume(userId: string, sessionId: string): Promise<boolean> {
    return (await this.sessions.deleteOne({ tokenHash: sha256(sessionId), userId })) !== null;
  }

  async revokeAll(userId: string): Promise<void> {
    await this.sessions.deleteMany({ userId });
    await this.store.collection<UserDoc>('users').updateOne({ _id: userId }, { $inc: { tokenVersion: 1 } });
    this.invalidateCached(userId);
  }

  /** Drops this process's cached view of the user (other processes expire theirs within seconds). */
  invalidateCached(userId: string): void {
    for (const listener of this.revokeListeners) listener(userId);
  }

  onRevoke(listener: (userId: string) => void): void {
    this.revokeListeners.push(listener);
  }
}
