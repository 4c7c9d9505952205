import type { EventBus } from '../events/bus.ts';
import { isPermission, type Permission } from '../model/permissions.ts';
import type { Principal } from '../model/principal.ts';
import type { GroupDoc, UserDoc } from '../model/records.ts';
import type { Store } from '../store/types.ts';
import type { Sessions } from './sessions.ts';
import { TokenError, type Tokens } from './tokens.ts';

/**
 * Turns an access token into a Principal. The user (status, token version) and their groups'
 * permissions are cached per process for USER_CACHE_MS, and so is whether the token's session
 * is still live: a logout, password change, disable or delete on this instance drops the entry
 * at once, and other instances notice within USER_CACHE_MS — that is how access tokens "stop
 * working within seconds" before they expire.
 */
const USER_CACHE_MS = 2000;
const MAX_CACHED = 10_000;

interface CachedUser {
  user: UserDoc | null;
  permissions: Set<Permission>;
  loadedAt: number;
}

export class AuthenticationError extends Error {}

export class Authenticator {
  private readonly cache = new Map<string, CachedUser>();
  private readonly liveSessions = new Map<string, { live: boolean; loadedAt: number }>();
  private readonly store: Store;
  private readonly tokens: Tokens;
  private readonly sessions: Sessions;

  constructor(deps: { store: Store; tokens: Tokens; sessions: Sessions; events: EventBus }) {
    this.store = deps.store;
    this.tokens = deps.tokens;
    this.sessions = deps.sessions;
    deps.sessions.onRevoke((userId) => this.cache.delete(userId));
    deps.sessions.onEnd((sessionId) => this.liveSessions.delete(sessionId));
    deps.events.on('group.updated', () => this.cache.clear());
    deps.events.on('group.deleted', () => this.cache.clear());
    deps.events.on('user.updated', ({ id }) => this.cache.delete(id));
    deps.events.on('user.deleted', ({ id }) => this.cache.delete(id));
  }

  async fromAccessToken(token: string): Promise<Principal> {
    let claims;
    try {
      claims = await this.tokens.verifyAccess(token);
    } catch (error) {
      if (error instanceof TokenError) throw new AuthenticationError(error.message === 'token expired' ? 'Access token expired' : 'Invalid access token');
      throw error;
    }
    const [entry, live] = await Promise.all([this.load(claims.userId), this.sessionLive(claims.userId, claims.sessionId)]);
    const user = entry.user;
    if (!user || user.status !== 'active' || user.tokenVersion !== claims.tokenVersion || !live) {
      throw new AuthenticationError('Session has ended; sign in again');
    }
    return { kind: 'user', userId: user._id, login: user.login, groupIds: user.groupIds, permissions: entry.permissions, sessionId: claims.sessionId };
  }

  /** Permissions a user holds through their groups (uncached: for login and profile). */
  async permissionsOf(user: UserDoc): Promise<Set<Permission>> {
    if (user.groupIds.length === 0) return new Set();
    const groups = await this.store.collection<GroupDoc>('groups').find({ _id: { $in: user.groupIds } });
    return new Set(groups.flatMap((g) => g.permissions).filter(isPermission));
  }

  private async load(userId: string): Promise<CachedUser> {
    const now = Date.now();
    const cached = this.cache.get(userId);
    if (cached && now - cached.loadedAt < USER_CACHE_MS) return cached;
    const user = await this.store.collection<UserDoc>('users').findById(userId);
    const entry: CachedUser = { user, permissions: user ? await this.permissionsOf(user) : new Set(), loadedAt: now };
    if (this.cache.size > MAX_CACHED) this.cache.clear();
    this.cache.set(userId, entry);
    return entry;
  }

  private async sessionLive(userId: string, sessionId: string): Promise<boolean> {
    const now = Date.now();
    const cached = this.liveSessions.get(sessionId);
    if (cached && now - cached.loadedAt < USER_CACHE_MS) return cached.live;
    const live = await this.sessions.isLive(userId, sessionId);
    if (this.liveSessions.size > MAX_CACHED) this.liveSessions.clear();
    this.liveSessions.set(sessionId, { live, loadedAt: now });
    return live;
  }
}
