import { badRequest } from '../lib/errors.ts';
import { compileValidator } from '../model/validation.ts';
import type { AuditLog } from './audit-log.ts';
import type { AuthService, LoginResult, RequestInfo } from './auth.ts';
import type { Authenticator } from './authenticator.ts';
import type { Passwords } from './passwords.ts';
import { PASSWORD_SCHEMA } from './passwords.ts';
import { assertShownUnchanged, setShownFieldsAside } from './shown-fields.ts';
import { emptyEmailAsNull, NAME_SCHEMA, OPTIONAL_EMAIL_SCHEMA, publicUser, type PublicUser, type UsersService } from './users.ts';

/** What a profile is shown with that is not input (shown-fields.ts): accepted unchanged, and kept by the service. */
const SHOWN_NAMED = ['_id', 'login', 'groupIds', 'status', 'permissions'] as const;
const SHOWN_KEPT = ['lastLoginAt', 'createdAt', 'updatedAt'];

/** A signed-in user's own account: name, email and password only — never groups or status. */
const validateProfileUpdate = compileValidator<{ name?: string; email?: string | null; password?: string; currentPassword?: string }>({
  type: 'object',
  additionalProperties: false,
  properties: {
    name: NAME_SCHEMA,
    email: OPTIONAL_EMAIL_SCHEMA,
    password: PASSWORD_SCHEMA,
    currentPassword: { type: 'string', minLength: 1, maxLength: 1024 },
  },
});

export interface Profile extends PublicUser {
  permissions: string[];
}

export class ProfileService {
  private readonly deps: { users: UsersService; passwords: Passwords; authenticator: Authenticator; auth: AuthService; audit: AuditLog };

  constructor(deps: ProfileService['deps']) {
    this.deps = deps;
  }

  async get(userId: string): Promise<Profile> {
    const user = await this.deps.users.get(userId);
    return { ...publicUser(user), permissions: [...(await this.deps.authenticator.permissionsOf(user))] };
  }

  /**
   * Changing the password needs the current one, ends every session of the user (other devices
   * included) and returns a fresh token pair so the caller stays signed in.
   */
  async update(userId: string, input: unknown, request: RequestInfo): Promise<{ profile: Profile; tokens?: Omit<LoginResult, 'user'> }> {
    const { rest, shown } = setShownFieldsAside(input, SHOWN_NAMED, SHOWN_KEPT);
    const valid = validateProfileUpdate(emptyEmailAsNull(rest));
    // Nothing to change (an empty body, or the profile sent back as shown): the profile as it is.
    const unchanged = Object.keys(valid).length === 0;
    const user = await this.deps.users.get(userId);
    // What the profile shows but cannot change (groups, status, …) passes only as it is.
    assertShownUnchanged(shown, { ...publicUser(user), permissions: [...(await this.deps.authenticator.permissionsOf(user))] });
    if (unchanged) return { profile: await this.get(userId) };
    if (valid.password !== undefined) {
      if (valid.currentPassword === undefined) {
        throw badRequest('Invalid request body: currentPassword is required to change the password', [{ field: 'currentPassword', message: 'is required' }]);
      }
      if (!(await this.deps.auth.verifyCurrentPassword(user, valid.currentPassword, request))) {
        // 400, not 401: the session is fine, only this field is wrong.
        throw badRequest('Invalid request body: currentPassword is wrong', [{ field: 'currentPassword', message: 'is wrong' }]);
      }
    } else if (valid.currentPassword !== undefined) {
      throw badRequest('Invalid request body: currentPassword is only used together with password', [{ field: 'currentPassword', message: 'needs password' }]);
    }
    const { currentPassword: _current, ...changes } = valid;
    const updated = await this.deps.users.apply(user, changes);
    await this.deps.audit.record({ action: 'user_updated', message: `User ${user.login} updated their profile`, source: 'profile', userId, statusCode: 200, ...request });
    const profile = await this.get(userId);
    if (valid.password === undefined) return { profile };
    const { user: _user, ...tokens } = await this.deps.auth.issue(updated);
    return { profile, tokens };
  }
}
