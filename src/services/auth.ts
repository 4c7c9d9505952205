import { forbidden, unauthorized } from '../lib/errors.ts';
import type { UserDoc } from '../model/records.ts';
import { compileValidator } from '../model/validation.ts';
import type { AuditLog } from './audit-log.ts';
import type { Authenticator } from './authenticator.ts';
import type { DailyStats } from './daily-stats.ts';
import type { LoginLockout } from './login-lockout.ts';
import { PASSWORD_SCHEMA, type Passwords } from './passwords.ts';
import type { Sessions } from './sessions.ts';
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

  async login(credentials: { login: string; password: string }, request: RequestInfo): Promise<LoginResult> {
    const { users, passwords, lockout, settings, audit } = this.deps;
    const policy = await settings.get();
    const key = loginKey(credentials.login);
    const lockoutPolicy = { threshold: policy.lockoutThreshold, minutes: policy.lockoutMinutes };
    await lockout.assertNotLocked(key, lockoutPolicy);

    const user = await users.findByLogin(credentials.login);
    const passwordOk = await passwords.verify(credentials.password, user?.passwordHash);
    if (!user || !passwordOk || user.status !== 'active') {
      await lockout.recordFailure(key, lockoutPolicy);
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
    await users.recordLogin(user._id);
    this.deps.daily?.bump('logins');
    await audit.record({ action: 'login', message: `User ${user.login} signed in`, source: 'auth', userId: user._id, statusCode: 200, ...request });
    return this.issue(user);
  }

  /** Rotation: the presented refresh token's session is consumed; a second use fails. */
  async refresh(refreshToken: string): Promise<LoginResult> {
    const claims = await this.consumeRefreshToken(refreshToken);
    const user = await this.deps.users.findById(claims.userId);
    if (!user || user.status !== 'active' || user.tokenVersion !== claims.tokenVersion) throw unauthorized(INVALID_REFRESH);
    return this.issue(user);
  }

  /** Verifies a refresh token and ends its session: true for exactly one caller, on any instance. */
  private async consumeRefreshToken(refreshToken: string): Promise<RefreshClaims> {
    let claims: RefreshClaims;
    try {
      claims = await this.deps.tokens.verifyRefresh(refreshToken);
    } catch (error) {
      if (error instanceof TokenError) throw unauthorized(INVALID_REFRESH);
      throw error;
    }
    if (!(await this.deps.sessions.consume(claims.userId, claims.sessionId))) throw unauthorized(INVALID_REFRESH);
    return claims;
  }

  parseRefresh(input: unknown): string | undefined {
    return validateRefresh(input ?? {}).refreshToken;
  }

  async logout(userId: string, request: RequestInfo): Promise<void> {
    await this.deps.sessions.revokeAll(userId);
    await this.deps.audit.record({ action: 'logout', message: 'User signed out', source: 'auth', userId, statusCode: 200, ...request });
  }

  /** Logout by refresh token alone (for a client whose access token has already expired). */
  async logoutWithRefreshToken(refreshToken: string, request: RequestInfo): Promise<void> {
    const claims = await this.consumeRefreshToken(refreshToken);
    await this.logout(claims.userId, request);
  }

  async register(input: unknown, request: RequestInfo): Promise<PublicUser> {
    if (!(await this.deps.settings.get()).registrationEnabled) throw forbidden('Registration is disabled');
    const valid = validateRegister(input);
    const user = await this.deps.users.create(valid, { allowGroups: false });
    await this.deps.audit.record({ action: 'register', message: `User ${user.login} registered`, source: 'auth', userId: user._id, statusCode: 201, ...request });
    return publicUser(user);
  }

  async issue(user: UserDoc): Promise<LoginResult> {
    const { tokens, sessions, settings, authenticator } = this.deps;
    const policy = await settings.get();
    const session = await sessions.create(user._id, policy.refreshTokenTtlSeconds);
    const claims = { userId: user._id, tokenVersion: user.tokenVersion };
    const accessExpires = new Date(Date.now() + policy.accessTokenTtlSeconds * 1000);
    return {
      accessToken: await tokens.signAccess(claims, policy.accessTokenTtlSeconds),
      refreshToken: await tokens.signRefresh({ ...claims, sessionId: session.sessionId }, session.expiresAt),
      accessTokenExpiresAt: accessExpires.toISOString(),
      refreshTokenExpiresAt: session.expiresAt.toISOString(),
      user: { ...publicUser(user), permissions: [...(await authenticator.permissionsOf(user))] },
    };
  }
}
