import { AppError, badRequest, forbidden, unauthorized } from '../lib/errors.ts';
import type { UserDoc } from '../model/records.ts';
import { compileValidator } from '../model/validation.ts';
import type { AuditLog } from './audit-log.ts';
import type { Authenticator } from './authenticator.ts';
import type { DailyStats } from './daily-stats.ts';
import type { LoginLockout } from './login-lockout.ts';
import { PASSWORD_SCHEMA, type Passwords } from './passwords.ts';
import type { IssuedSession, Sessions } from './sessions.ts';
import type { SettingsService } from './settings.ts';
import { TokenError, type RefreshClaims, type Tokens } from './tokens.ts';
import { EMAIL_SCHEMA, LOGIN_SCHEMA, loginKey, NAME_SCHEMA, publicUser, type PublicUser, type UsersService } from './users.ts';

/** Where a request came from, for the audit log. */
export interface RequestInfo {
  ip: string;
  method: string;
  path: string;
}

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  accessTokenExpiresAt: string;
  refreshTokenExpiresAt: string;
}

export interface LoginResult extends TokenPair {
  user: PublicUser & { permissions: string[] };
}

// Login accepts any string up to a bound: the lockout and the constant message must apply to
// logins that could never exist too, so only the shape is checked here.
const validateLogin = compileValidator<{ login: string; password: string; cookie?: boolean }>({
  type: 'object',
  additionalProperties: false,
  required: ['login', 'password'],
  properties: {
    login: { type: 'string', minLength: 1, maxLength: 254 },
    password: { type: 'string', minLength: 1, maxLength: 1024 },
    cookie: { type: 'boolean' },
  },
});
const validateRefresh = compileValidator<{ refreshToken?: string }>({
  type: 'object',
  additionalProperties: false,
  properties: { refreshToken: { type: 'string', minLength: 1, maxLength: 4096 } },
});
const validateLogout = compileValidator<{ refreshToken?: string; all?: boolean }>({
  type: 'object',
  additionalProperties: false,
  properties: { refreshToken: { type: 'string', minLength: 1, maxLength: 4096 }, all: { type: 'boolean' } },
});
const validateRegister = compileValidator<{ login: string; email: string; password: string; name: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['login', 'email', 'password', 'name'],
  properties: { login: LOGIN_SCHEMA, email: EMAIL_SCHEMA, password: PASSWORD_SCHEMA, name: NAME_SCHEMA },
});

const WRONG_CREDENTIALS = 'Invalid login or password';
const INVALID_REFRESH = 'Invalid or expired refresh token';

export class AuthService {
  private readonly deps: {
    users: UsersService;
    passwords: Passwords;
    tokens: Tokens;
    sessions: Sessions;
    lockout: LoginLockout;
    settings: SettingsService;
    audit: AuditLog;
    authenticator: Authenticator;
    daily?: DailyStats;
  };

  constructor(deps: AuthService['deps']) {
    this.deps = deps;
  }

  parseLogin(input: unknown): { login: string; password: string; cookie: boolean } {
    const valid = validateLogin(input);
    return { login: valid.login, password: valid.password, cookie: valid.cookie ?? false };
  }

  /**
   * A signed-in user's current password, checked as a sign-in is: counted by the same lockout
   * (a stolen session must not become a way to guess the password without bound) and audited
   * when wrong. True when it matches.
   */
  async verifyCurrentPassword(user: { _id: string; login: string; passwordHash: string }, password: string, request: RequestInfo): Promise<boolean> {
    const { passwords, lockout, settings, audit } = this.deps;
    const policy = await settings.get();
    const key = loginKey(user.login);
    const lockoutPolicy = { threshold: policy.lockoutThreshold, minutes: policy.lockoutMinutes };
    const attempt = await this.admitAttempt(key, lockoutPolicy, request);
    if (await passwords.verify(password, user.passwordHash)) {
      await lockout.recordSuccess(key);
      return true;
    }
    await lockout.recordFailure(key, attempt, lockoutPolicy);
    await audit.record({ action: 'login_failed', message: `Wrong current password for "${key.slice(0, 64)}" (profile)`, source: 'profile', userId: user._id, statusCode: 400, ...request });
    return false;
  }

  async login(credentials: { login: string; password: string }, request: RequestInfo): Promise<LoginResult> {
    const { users, passwords, lockout, settings, audit } = this.deps;
    const policy = await settings.get();
    const key = loginKey(credentials.login);
    const lockoutPolicy = { threshold: policy.lockoutThreshold, minutes: policy.lockoutMinutes };
    const attempt = await this.admitAttempt(key, lockoutPolicy, request);

    const user = await users.findByLogin(credentials.login);
    const passwordOk = await passwords.verify(credentials.password, user?.passwordHash);
    if (!user || !passwordOk || user.status !== 'active') {
      await lockout.recordFailure(key, attempt, lockoutPolicy);
      await audit.record({
        action: 'login_failed',
        message: `Failed login for "${key.slice(0, 64)}"${user && passwordOk ? ' (account disabled)' : ''}`,
        source: 'auth',
        userId: user?._id ?? null,
        statusCode: 401,
        ...request,
      });
      // Same message whether the login exists, the password is wrong or the account is disabled.
      throw unauthorized(WRONG_CREDENTIALS);
    }
    await lockout.recordSuccess(key);
    const lastLoginAt = await users.recordLogin(user._id);
    this.deps.daily?.bump('logins');
    await audit.record({ action: 'login', message: `User ${user.login} signed in`, source: 'auth', userId: user._id, statusCode: 200, ...request });
    return this.issue({ ...user, lastLoginAt }); // the answer shows this sign-in, as a read would
  }

  /**
   * The lockout's word on a sign-in: a refused one (429) is audited as a failed login too, so
   * guessing on a locked account shows in the log. Buffered (as api_call entries are), not one
   * store write each: a flood of guesses must not become a flood of writes.
   */
  private async admitAttempt(key: string, policy: { threshold: number; minutes: number }, request: RequestInfo): Promise<Awaited<ReturnType<LoginLockout['beginAttempt']>>> {
    const { lockout, audit } = this.deps;
    try {
      await lockout.assertNotLocked(key, policy);
      return await lockout.beginAttempt(key, policy);
    } catch (error) {
      if (error instanceof AppError && error.status === 429) {
        audit.enqueue({ action: 'login_failed', message: `Login for "${key.slice(0, 64)}" refused: too many failed attempts`, source: 'auth', statusCode: 429, ...request });
      }
      throw error;
    }
  }

  /** Rotation: the presented refresh token's secret is replaced; a second use fails. The session stays. */
  async refresh(refreshToken: string): Promise<LoginResult> {
    const claims = await this.verifyRefreshToken(refreshToken);
    const policy = await this.deps.settings.get();
    const session = await this.deps.sessions.rotate(claims.userId, claims.sessionId, claims.secret, policy.refreshTokenTtlSeconds);
    if (!session) throw unauthorized(INVALID_REFRESH);
    const user = await this.deps.users.findById(claims.userId);
    if (!user || user.status !== 'active' || user.tokenVersion !== claims.tokenVersion) {
      await this.deps.sessions.end(claims.userId, claims.sessionId);
      throw unauthorized(INVALID_REFRESH);
    }
    return this.tokensFor(user, session);
  }

  private async verifyRefreshToken(refreshToken: string): Promise<RefreshClaims> {
    try {
      return await this.deps.tokens.verifyRefresh(refreshToken);
    } catch (error) {
      if (error instanceof TokenError) throw unauthorized(INVALID_REFRESH);
      throw error;
    }
  }

  parseRefresh(input: unknown): string | undefined {
    return validateRefresh(input ?? {}).refreshToken;
  }

  parseLogout(input: unknown): { refreshToken?: string; all: boolean } {
    const valid = validateLogout(input ?? {});
    return { ...(valid.refreshToken !== undefined ? { refreshToken: valid.refreshToken } : {}), all: valid.all ?? false };
  }

  /**
   * Ends the session the caller's access token belongs to, or with `all` every session of the
   * user (other devices and CLIs included).
   */
  /**
   * Logout as the signed-in user. A `refreshToken` sent along (as dynctl does) must be that
   * session's: naming another session is a 400 that ends neither, rather than ending one of the
   * two in silence. One that no longer verifies is no session and changes nothing here.
   */
  async logout(session: { userId: string; sessionId?: string }, options: { all: boolean; refreshToken?: string }, request: RequestInfo): Promise<void> {
    if (options.refreshToken !== undefined) {
      const claims = await this.deps.tokens.verifyRefresh(options.refreshToken).catch((error: unknown) => {
        if (error instanceof TokenError) return null;
        throw error;
      });
      if (claims && (claims.userId !== session.userId || claims.sessionId !== session.sessionId)) {
        throw badRequest('The refreshToken belongs to another session than the access token; log out of each on its own');
      }
    }
    if (options.all) await this.deps.sessions.revokeAll(session.userId);
    else if (session.sessionId !== undefined) await this.deps.sessions.end(session.userId, session.sessionId);
    else throw unauthorized('This access token belongs to no session; sign in again');
    await this.recordLogout(session.userId, options.all, request);
  }

  /** Logout by refresh token alone (for a client whose access token has already expired). */
  async logoutWithRefreshToken(refreshToken: string, options: { all: boolean }, request: RequestInfo): Promise<void> {
    const claims = await this.verifyRefreshToken(refreshToken);
    // Only the session's current refresh token may end it (a rotated-away one is dead already).
    if (!(await this.deps.sessions.end(claims.userId, claims.sessionId, claims.secret))) throw unauthorized(INVALID_REFRESH);
    if (options.all) await this.deps.sessions.revokeAll(claims.userId);
    await this.recordLogout(claims.userId, options.all, request);
  }

  private recordLogout(userId: string, all: boolean, request: RequestInfo): Promise<void> {
    const message = all ? 'User signed out of every session' : 'User signed out';
    return this.deps.audit.record({ action: 'logout', message, source: 'auth', userId, statusCode: 200, ...request });
  }

  async register(input: unknown, request: RequestInfo): Promise<PublicUser> {
    if (!(await this.deps.settings.get()).registrationEnabled) throw forbidden('Registration is disabled');
    const valid = validateRegister(input);
    const user = await this.deps.users.create(valid, { allowGroups: false });
    await this.deps.audit.record({ action: 'register', message: `User ${user.login} registered`, source: 'auth', userId: user._id, statusCode: 201, ...request });
    return publicUser(user);
  }

  /** Starts a new session for the user (login, password change) and returns its first tokens. */
  async issue(user: UserDoc): Promise<LoginResult> {
    const policy = await this.deps.settings.get();
    return this.tokensFor(user, await this.deps.sessions.create(user._id, policy.refreshTokenTtlSeconds));
  }

  private async tokensFor(user: UserDoc, session: IssuedSession): Promise<LoginResult> {
    const { tokens, settings, authenticator } = this.deps;
    const policy = await settings.get();
    const claims = { userId: user._id, tokenVersion: user.tokenVersion, sessionId: session.sessionId };
    const accessExpires = new Date(Date.now() + policy.accessTokenTtlSeconds * 1000);
    return {
      accessToken: await tokens.signAccess(claims, policy.accessTokenTtlSeconds),
      refreshToken: await tokens.signRefresh({ ...claims, secret: session.secret }, session.expiresAt),
      accessTokenExpiresAt: accessExpires.toISOString(),
      refreshTokenExpiresAt: session.expiresAt.toISOString(),
      user: { ...publicUser(user), permissions: [...(await authenticator.permissionsOf(user))] },
    };
  }
}
