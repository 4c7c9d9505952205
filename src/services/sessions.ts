import { createHash, randomBytes } from 'node:crypto';
import type { UserDoc } from '../model/records.ts';
import type { Store } from '../store/types.ts';

/**
 * Sessions: one per login, living through its chain of refresh tokens. The session's id (its
 * document id) is in every token issued for it (`sid`); its current refresh secret is in the
 * refresh token, and only the secret's SHA-256 is stored. Rotation swaps the secret in one
 * conditional update, so a used refresh token never works twice, on any instance.
 *
 * `end` ends one session (logout); `revokeAll` ends every session of a user and bumps the user's
 * token version, which makes all their outstanding access tokens fail (see authenticator.ts).
 */
interface SessionDoc {
  _id: string;
  [key: string]: unknown;
  userId: string;
  tokenHash: string;
  expiresAt: Date | string;
  createdAt: Date | string;
}

export interface IssuedSession {
  sessionId: string;
  secret: string;
  expiresAt: Date;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const newSecret = (): string => randomBytes(32).toString('base64url');

export class Sessions {
  private readonly store: Store;
  private readonly revokeListeners: Array<(userId: string) => void> = [];
  private readonly endListeners: Array<(sessionId: string) => void> = [];

  constructor(store: Store) {
    this.store = store;
  }

  private get sessions() {
    return this.store.collection<SessionDoc>('sessions');
  }

  async create(userId: string, ttlSeconds: number): Promise<IssuedSession> {
    const secret = newSecret();
    const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
    const doc = await this.sessions.insertOne({ userId, tokenHash: sha256(secret), expiresAt, createdAt: new Date() });
    return { sessionId: doc._id, secret, expiresAt };
  }

  /**
   * Replaces the session's refresh secret when `secret` is the current one, and extends the
   * session by `ttlSeconds`; null (for every caller but one) otherwise.
   */
  async rotate(userId: string, sessionId: string, secret: string, ttlSeconds: number): Promise<IssuedSession | null> {
    const next = newSecret();
    const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
    const updated = await this.sessions.updateOne({ _id: sessionId, userId, tokenHash: sha256(secret) }, { $set: { tokenHash: sha256(next), expiresAt } });
    return updated ? { sessionId, secret: next, expiresAt } : null;
  }

  /** Whether the session exists (not ended, not expired) and belongs to the user. */
  async isLive(userId: string, sessionId: string): Promise<boolean> {
    const session = await this.sessions.findById(sessionId);
    return session?.userId === userId;
  }

  /** Ends one session; with `secret`, only while that is its current refresh secret. True when it ended. */
  async end(userId: string, sessionId: string, secret?: string): Promise<boolean> {
    const filter = { _id: sessionId, userId, ...(secret !== undefined ? { tokenHash: sha256(secret) } : {}) };
    const ended = (await this.sessions.deleteOne(filter)) !== null;
    for (const listener of this.endListeners) listener(sessionId);
    return ended;
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

  /** Called with the id of every session ended on this instance. */
  onEnd(listener: (sessionId: string) => void): void {
    this.endListeners.push(listener);
  }
}
