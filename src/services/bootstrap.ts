import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EventBus } from '../events/bus.ts';
import type { Logger } from '../lib/logger.ts';
import type { UserDoc } from '../model/records.ts';
import type { Store } from '../store/types.ts';
import type { GroupsService } from './groups.ts';
import type { UsersService } from './users.ts';

/** First start: secrets, the Administrators group and the `admin` user. */
export interface Secrets {
  access: string;
  refresh: string;
}

export class StartupError extends Error {}

/**
 * JWT secrets come from JWT_SECRET / JWT_REFRESH_SECRET; where unset (outside production) they
 * are generated once and kept in DATA_DIR/secrets.json, readable by the owner only. Several
 * instances must share the same secrets, so multi-instance deployments set both variables.
 */
export function resolveSecrets(options: { jwtSecret?: string | undefined; jwtRefreshSecret?: string | undefined; dataDir: string; production: boolean }): Secrets {
  if (options.production && (!options.jwtSecret || !options.jwtRefreshSecret)) {
    throw new StartupError('NODE_ENV=production requires JWT_SECRET and JWT_REFRESH_SECRET to be set');
  }
  if (options.jwtSecret && options.jwtRefreshSecret) return { access: options.jwtSecret, refresh: options.jwtRefreshSecret };
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const file = join(options.dataDir, 'secrets.json');
  if (!existsSync(file)) {
    const generated = { access: randomBytes(48).toString('base64url'), refresh: randomBytes(48).toString('base64url') };
    // Written aside, then linked into place (atomic, fails if present): of two processes
    // starting together on one DATA_DIR, one wins and both read the same complete file.
    const draft = `${file}.${process.pid}.tmp`;
    writeFileSync(draft, JSON.stringify(generated, null, 2) + '\n', { mode: 0o600 });
    try {
      linkSync(draft, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(draft);
    }
  }
  const stored = JSON.parse(readFileSync(file, 'utf8')) as Partial<Secrets>;
  if (!stored.access || !stored.refresh) throw new StartupError(`${file} is damaged: delete it to generate new secrets`);
  const secrets = { access: options.jwtSecret ?? stored.access, refresh: options.jwtRefreshSecret ?? stored.refresh };
  if (secrets.access === secrets.refresh) throw new StartupError('JWT_SECRET and JWT_REFRESH_SECRET must differ');
  return secrets;
}

export async function ensureFirstStart(deps: {
  store: Store;
  users: UsersService;
  groups: GroupsService;
  logger: Logger;
  dataDir: string;
  defaultAdminPassword: string | undefined;
  production: boolean;
}): Promise<void> {
  const admins = await deps.groups.ensureAdministrators();
  const users = deps.store.collection<UserDoc>('users');
  if ((await users.count({})) === 0) {
    const generated = deps.defaultAdminPassword === undefined;
    const password = deps.defaultAdminPassword ?? randomBytes(12).toString('base64url');
    try {
      await deps.users.create({ login: 'admin', password, name: 'Administrator', groupIds: [admins._id] }, { initialPassword: true });
      if (generated) {
        const file = join(deps.dataDir, 'initial-admin-password');
        mkdirSync(deps.dataDir, { recursive: true });
        writeFileSync(file, password + '\n', { mode: 0o600 });
        // Printed exactly once, at creation, so a newcomer can sign in; change it afterwards. Not in
        // production, whose logs are shipped and kept: there the file (owner only) holds it alone.
        if (deps.production) deps.logger.warn(`created user "admin" with a generated password, in ${file} (readable by its owner only); sign in with it and change it`);
        else deps.logger.warn(`created user "admin" with the generated password ${password} (also in ${file}); change it after signing in`);
      } else {
        deps.logger.info('created user "admin" with the password from DEFAULT_ADMIN_PASSWORD');
      }
    } catch (error) {
      // Another process on the same store created it first (users.create reports that as a 409).
      if (!(await users.findOne({ loginKey: 'admin' }))) throw error;
    }
  }
  const admin = await users.findOne({ loginKey: 'admin' });
  if (deps.production && admin?.initialPassword) {
    deps.logger.warn('user "admin" still has its initial password: change it (PUT /api/profile)');
  }
}

/**
 * DATA_DIR/initial-admin-password is for the first sign-in only. Once the admin's initial
 * password has been changed (PUT /api/profile, PUT /api/users/:id, on any instance) it is stale:
 * it is deleted then, and at every start. The check costs one stat per user change and a read
 * of the admin only while the file exists.
 */
export async function forgetInitialPasswordOnceChanged(deps: { store: Store; events: EventBus; logger: Logger; dataDir: string }): Promise<void> {
  const file = join(deps.dataDir, 'initial-admin-password');
  const check = async (): Promise<void> => {
    if (!existsSync(file)) return;
    const admin = await deps.store.collection<UserDoc>('users').findOne({ loginKey: 'admin' });
    if (!admin || admin.initialPassword) return;
    try {
      unlinkSync(file);
      deps.logger.info(`the admin password has been changed: deleted ${file}`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') deps.logger.warn(`cannot delete ${file}`, { error });
    }
  };
  deps.events.on('user.updated', check);
  await check();
}
