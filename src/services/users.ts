import { badRequest, conflict, forbidden, notFound } from '../lib/errors.ts';
import { isId } from '../lib/ids.ts';
import type { EventBus } from '../events/bus.ts';
import type { GroupDoc, UserDoc } from '../model/records.ts';
import { compileValidator } from '../model/validation.ts';
import { DuplicateKeyError, type Filter, type Page, type Store } from '../store/types.ts';
import type { CallerActor } from '../model/actor.ts';
import { assertHolds, type Principal } from '../model/principal.ts';
import type { AuditLog } from './audit-log.ts';
import type { ChangeQueue } from './change-queue.ts';
import { collect, collectAsync, validatedWithAll } from './field-problems.ts';
import { ADMINISTRATORS, permissionsOfGroups, type GroupsService } from './groups.ts';
import { MAX_PASSWORD_BYTES, PASSWORD_SCHEMA, type Passwords } from './passwords.ts';
import type { LoginLockout } from './login-lockout.ts';
import type { Sessions } from './sessions.ts';
import { assertNoIdOnCreate, assertShownUnchanged, setShownFieldsAside } from './shown-fields.ts';

/** What a user is shown with and the service keeps: ignored when sent back (shown-fields.ts). */
const SHOWN_KEPT = ['lastLoginAt', 'createdAt', 'updatedAt'];

export interface UserInput {
  login: string;
  email?: string;
  password: string;
  name?: string;
  groupIds?: string[];
  status?: 'active' | 'disabled';
}

export const LOGIN_SCHEMA = { type: 'string', minLength: 3, maxLength: 64, pattern: '^\\s*[A-Za-z0-9._@-]+\\s*$' } as const;
export const EMAIL_SCHEMA = { type: 'string', maxLength: 254, format: 'email' } as const;
export const NAME_SCHEMA = { type: 'string', maxLength: 200 } as const;

/**
 * An email that may be left out: null (what a user without one is shown with) or, after
 * `emptyEmailAsNull`, an empty string. One schema, so a bad address is one error, not three.
 */
export const OPTIONAL_EMAIL_SCHEMA = { type: ['string', 'null'], maxLength: 254, format: 'email' } as const;

/** An empty `email` in a user's input means "none", as null does. */
export function emptyEmailAsNull(input: unknown): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return input;
  const record = input as Record<string, unknown>;
  return typeof record.email === 'string' && record.email.trim() === '' ? { ...record, email: null } : input;
}

const MAX_GROUP_IDS = 100;

const userProperties = {
  login: LOGIN_SCHEMA,
  email: OPTIONAL_EMAIL_SCHEMA,
  password: PASSWORD_SCHEMA,
  name: NAME_SCHEMA,
  groupIds: { type: 'array', maxItems: MAX_GROUP_IDS, uniqueItems: true, items: { type: 'string', maxLength: 24 } },
  status: { enum: ['active', 'disabled'] },
};
const validateCreate = compileValidator<Omit<UserInput, 'email'> & { email?: string | null }>({
  type: 'object',
  additionalProperties: false,
  required: ['login', 'password'],
  properties: userProperties,
});
// On update an empty email removes it, and so does null (what a user without one is shown with).
const validateUpdate = compileValidator<Omit<Partial<UserInput>, 'email'> & { email?: string | null }>({
  type: 'object',
  additionalProperties: false,
  properties: userProperties,
});

export interface PublicUser {
  _id: string;
  login: string;
  email: string | null;
  name: string;
  groupIds: string[];
  status: 'active' | 'disabled';
  lastLoginAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The only shape in which a user leaves the service: never a hash, token or version. */
export function publicUser(doc: UserDoc): PublicUser {
  return {
    _id: doc._id,
    login: doc.login,
    email: doc.email ?? null,
    name: doc.name,
    groupIds: doc.groupIds,
    status: doc.status,
    lastLoginAt: doc.lastLoginAt ? String(doc.lastLoginAt) : null,
    createdAt: String(doc.createdAt),
    updatedAt: String(doc.updatedAt),
  };
}

/** `Admin`, ` admin ` and `admin` are one login (for uniqueness and lockout). */
export const loginKey = (login: string): string => login.trim().toLowerCase();
const emailKey = (email: string): string => email.trim().toLowerCase();

export function assertPasswordFits(password: string | undefined): void {
  if (password !== undefined && Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) {
    throw badRequest('Invalid request body: password must be at most 72 bytes', [{ field: 'password', message: 'must be at most 72 bytes' }]);
  }
}

export interface UserChanges {
  /** '' or null removes it. */
  email?: string | null;
  password?: string;
  name?: string;
  groupIds?: string[];
  status?: 'active' | 'disabled';
  login?: string;
}

export class UsersService {
  private readonly store: Store;
  private readonly groups: GroupsService;
  private readonly passwords: Passwords;
  private readonly sessions: Sessions;
  private readonly events: EventBus;
  private readonly audit: AuditLog;
  private readonly lockout: LoginLockout;
  private readonly memberships: ChangeQueue;

  constructor(deps: { store: Store; groups: GroupsService; passwords: Passwords; sessions: Sessions; events: EventBus; audit: AuditLog; lockout: LoginLockout; memberships: ChangeQueue }) {
    this.memberships = deps.memberships;
    this.audit = deps.audit;
    this.lockout = deps.lockout;
    this.store = deps.store;
    this.groups = deps.groups;
    this.passwords = deps.passwords;
    this.sessions = deps.sessions;
    this.events = deps.events;
  }

  private get users() {
    return this.store.collection<UserDoc>('users');
  }

  list(query: { page: number; limit: number; search?: string }): Promise<Page<UserDoc>> {
    return this.users.findPage({}, {
      page: query.page,
      limit: query.limit,
      sort: { createdAt: 1 },
      ...(query.search ? { search: { term: query.search, fields: ['name', 'login', 'email', 'status'] } } : {}),
    });
  }

  async get(id: string): Promise<UserDoc> {
    const user = isId(id) ? await this.users.findById(id) : null;
    if (!user) throw notFound('User not found');
    return user;
  }

  findById(id: string): Promise<UserDoc | null> {
    return isId(id) ? this.users.findById(id) : Promise.resolve(null);
  }

  findByLogin(login: string): Promise<UserDoc | null> {
    return this.users.findOne({ loginKey: loginKey(login) });
  }

  /**
   * `actor` is who asks (absent for the system itself, e.g. first start). Nobody can put a user
   * into groups that confer permissions the actor lacks, nor manage a user stronger than the
   * actor — otherwise `manage_users` alone could reach every other permission. The change is
   * audited for the actor (registration and first start audit themselves).
   */
  async create(input: unknown, options: { actor?: CallerActor; allowGroups?: boolean; initialPassword?: boolean } = {}): Promise<UserDoc> {
    const { rest, shown } = setShownFieldsAside(input, ['_id'], SHOWN_KEPT);
    assertNoIdOnCreate(shown);
    const valid = await this.validBody(() => validateCreate(emptyEmailAsNull(rest)), rest, options.allowGroups !== false);
    const groupIds = options.allowGroups === false ? [] : valid.groupIds ?? [];
    // Hashed before the memberships queue: a slow hash must not hold up other user changes.
    const passwordHash = await this.passwords.hash(valid.password);
    return this.memberships.run(() => this.insert(valid, groupIds, passwordHash, options));
  }

  private async insert(valid: Omit<UserInput, 'email'> & { email?: string | null }, groupIds: string[], passwordHash: string, options: { actor?: CallerActor; initialPassword?: boolean }): Promise<UserDoc> {
    const groups = await this.groups.requireAll(groupIds);
    if (options.actor) assertHolds(options.actor.principal, permissionsOfGroups(groups), 'put a user into groups granting');
    const now = new Date();
    try {
      const user = await this.users.insertOne({
        login: valid.login.trim(),
        loginKey: loginKey(valid.login),
        ...(valid.email ? { email: valid.email.trim(), emailKey: emailKey(valid.email) } : {}),
        name: valid.name?.trim() ?? '',
        passwordHash,
        groupIds,
        status: valid.status ?? 'active',
        tokenVersion: 0,
        ...(options.initialPassword ? { initialPassword: true } : {}),
        lastLoginAt: null,
        createdAt: now,
        updatedAt: now,
      });
      await this.events.emitDurable('user.created', { id: user._id, login: user.login, user: { ...publicUser(user) } });
      if (options.actor) await this.audit.change(options.actor, { action: 'user_created', message: `User ${user.login} created`, source: 'users', statusCode: 201 });
      return user;
    } catch (error) {
      throw duplicateUser(error);
    }
  }

  /** Admin update: any field. Password or status changes end the user's sessions. */
  async update(id: string, input: unknown, actor: CallerActor): Promise<UserDoc> {
    const { rest, shown } = setShownFieldsAside(input, ['_id'], SHOWN_KEPT);
    const changes = await this.validBody(() => validateUpdate(emptyEmailAsNull(rest)), rest, true);
    const passwordHash = changes.password === undefined ? undefined : await this.passwords.hash(changes.password);
    return this.memberships.run(async () => {
      const user = await this.get(id);
      assertShownUnchanged(shown, user);
      await this.assertCanManage(user, actor.principal);
      // As deleting one's own account: disabling it would end this very session and lock the caller out.
      if (changes.status === 'disabled' && user.status !== 'disabled' && actor.principal.kind === 'user' && actor.principal.userId === user._id) {
        throw badRequest('You cannot disable your own account', [{ field: 'status', message: 'cannot disable your own account' }]);
      }
      // The profile asks for the current password (and counts a wrong one towards lockout) so that
      // a stolen session cannot take the account over; this route must not be the way around it.
      if (changes.password !== undefined && actor.principal.kind === 'user' && actor.principal.userId === user._id) {
        throw forbidden('Forbidden: change your own password with PUT /api/profile, which asks for currentPassword');
      }
      if (changes.groupIds !== undefined) {
        const added = await this.groups.requireAll(changes.groupIds.filter((g) => !user.groupIds.includes(g)));
        assertHolds(actor.principal, permissionsOfGroups(added), 'put a user into groups granting');
      }
      const updated = await this.applyNow(user, changes, passwordHash);
      await this.audit.change(actor, { action: 'user_updated', message: `User ${updated.login} updated`, source: 'users' });
      return updated;
    });
  }

  /**
   * The body as `validate` reads it; else one 400 listing every problem at once: the schema's, a
   * password longer than 72 bytes, and (when groups may be given) group ids that do not exist.
   * The groups of a valid body are checked again in the memberships queue, against races.
   */
  private async validBody<T extends { password?: string | undefined }>(validate: () => T, input: unknown, groupsGiven: boolean): Promise<T> {
    return validatedWithAll(
      () => {
        const valid = validate();
        assertPasswordFits(valid.password);
        return valid;
      },
      input,
      async (given, problems) => {
        const password = given.password;
        if (typeof password === 'string' && !problems.some((problem) => problem.details.some((detail) => detail.field === 'password'))) collect(problems, () => assertPasswordFits(password));
        const ids = given.groupIds;
        if (groupsGiven && Array.isArray(ids) && ids.length <= MAX_GROUP_IDS && ids.every((id) => typeof id === 'string' && id.length <= 24)) {
          await collectAsync(problems, () => this.groups.requireAll(ids as string[]));
        }
      },
    );
  }

  private async assertCanManage(user: UserDoc, actor: Principal): Promise<void> {
    if (user.groupIds.length === 0) return;
    const groups = await this.store.collection<GroupDoc>('groups').find({ _id: { $in: user.groupIds } });
    assertHolds(actor, permissionsOfGroups(groups), 'manage a user holding');
  }

  /**
   * Applies validated changes (the profile route's). In the memberships queue, on the user as
   * stored then: the last-administrator rule and the group checks are reads before the write.
   */
  async apply(user: UserDoc, changes: UserChanges): Promise<UserDoc> {
    assertPasswordFits(changes.password);
    const passwordHash = changes.password === undefined ? undefined : await this.passwords.hash(changes.password);
    return this.memberships.run(async () => this.applyNow(await this.get(user._id), changes, passwordHash));
  }

  private async applyNow(user: UserDoc, changes: UserChanges, passwordHash: string | undefined): Promise<UserDoc> {
    if (changes.groupIds !== undefined) await this.groups.requireAll(changes.groupIds);
    const losesAdmin =
      (changes.status === 'disabled' && user.status === 'active') ||
      (changes.groupIds !== undefined && !(await this.isAdministratorsMember(changes.groupIds)));
    if (losesAdmin && (await this.isLastActiveAdministrator(user))) {
      throw conflict('This is the last active member of Administrators; add another administrator first');
    }

    const set: Record<string, unknown> = { updatedAt: new Date() };
    const unset: string[] = [];
    if (changes.login !== undefined) Object.assign(set, { login: changes.login.trim(), loginKey: loginKey(changes.login) });
    if (changes.name !== undefined) set.name = changes.name.trim();
    if (changes.email !== undefined) {
      if (changes.email === null || changes.email.trim() === '') unset.push('email', 'emailKey');
      else Object.assign(set, { email: changes.email.trim(), emailKey: emailKey(changes.email) });
    }
    if (changes.groupIds !== undefined) set.groupIds = changes.groupIds;
    if (changes.status !== undefined) set.status = changes.status;
    if (passwordHash !== undefined) {
      set.passwordHash = passwordHash;
      unset.push('initialPassword');
    }
    let updated: UserDoc | null;
    try {
      updated = await this.users.updateOne({ _id: user._id }, { $set: set, ...(unset.length ? { $unset: unset } : {}) });
    } catch (error) {
      throw duplicateUser(error);
    }
    if (!updated) throw notFound('User not found');
    const endsSessions = changes.password !== undefined || (changes.status === 'disabled' && user.status !== 'disabled');
    const changesAccess = changes.groupIds !== undefined || changes.status !== undefined;
    if (endsSessions) await this.sessions.revokeAll(user._id);
    else if (changesAccess) this.sessions.invalidateCached(user._id);
    const current = (await this.users.findById(user._id)) ?? updated;
    await this.events.emitDurable('user.updated', { id: updated._id, login: updated.login, user: { ...publicUser(current) } });
    return current;
  }

  /**
   * Ends a lockout at once (the user need not wait lockoutMinutes). Unlocking a login that is not
   * locked is no error: `wasLocked` says which it was.
   */
  async unlock(id: string, actor: CallerActor): Promise<{ user: UserDoc; wasLocked: boolean }> {
    const user = await this.get(id);
    // As for any change to the user: a caller cannot unlock a user stronger than themselves
    // (else manage_users alone could reset the lockout on an administrator's login and go on guessing).
    await this.assertCanManage(user, actor.principal);
    const wasLocked = await this.lockout.unlock(loginKey(user.login));
    await this.audit.change(actor, { action: 'user_unlocked', message: `User ${user.login} unlocked${wasLocked ? '' : ' (was not locked)'}`, source: 'users', statusCode: 200 });
    return { user, wasLocked };
  }

  /** In the memberships queue: two deletes at once could each leave the other the last administrator. */
  delete(id: string, actor: CallerActor): Promise<UserDoc> {
    return this.memberships.run(() => this.deleteNow(id, actor));
  }

  private async deleteNow(id: string, actor: CallerActor): Promise<UserDoc> {
    const user = await this.get(id);
    if (actor.principal.kind === 'user' && actor.principal.userId === user._id) throw badRequest('You cannot delete your own account');
    await this.assertCanManage(user, actor.principal);
    if (await this.isLastActiveAdministrator(user)) {
      throw conflict('This is the last active member of Administrators; add another administrator first');
    }
    await this.users.deleteOne({ _id: user._id });
    await this.sessions.revokeAll(user._id);
    await this.events.emitDurable('user.deleted', { id: user._id, login: user.login, user: { ...publicUser(user) } });
    await this.audit.change(actor, { action: 'user_deleted', message: `User ${user.login} deleted`, source: 'users' });
    return user;
  }

  /** Stamps the user's sign-in; returns the time written, as the store reads it back. */
  async recordLogin(userId: string): Promise<string> {
    const at = new Date();
    await this.users.updateOne({ _id: userId }, { $set: { lastLoginAt: at } });
    return at.toISOString();
  }

  private async administrators(): Promise<GroupDoc | null> {
    return this.store.collection<GroupDoc>('groups').findOne({ nameKey: ADMINISTRATORS.toLowerCase(), isSystem: true });
  }

  private async isAdministratorsMember(groupIds: readonly string[]): Promise<boolean> {
    const admins = await this.administrators();
    return admins !== null && groupIds.includes(admins._id);
  }

  private async isLastActiveAdministrator(user: UserDoc): Promise<boolean> {
    const admins = await this.administrators();
    if (!admins || user.status !== 'active' || !user.groupIds.includes(admins._id)) return false;
    const filter: Filter = { groupIds: { $has: admins._id }, status: 'active' };
    return (await this.users.count(filter)) <= 1;
  }
}

function duplicateUser(error: unknown): unknown {
  if (!(error instanceof DuplicateKeyError)) return error;
  if (error.fields.includes('emailKey')) return conflict('A user with this email already exists');
  return conflict('A user with this login already exists');
}
