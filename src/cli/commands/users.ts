import type { CommandModule } from '../context.ts';
import { CliError, EXIT } from '../errors.ts';
import { shortDate } from '../output.ts';

/** Wire shape of GET /api/users. */
interface User {
  _id: string;
  login: string;
  name: string;
  email: string | null;
  status: string;
  groupIds: string[];
  lastLoginAt: string | null;
}

/**
 * `dynctl users list` and `dynctl users unlock LOGIN` (POST /api/users/:id/unlock): an
 * administrator ends a login lockout at once instead of the user waiting lockoutMinutes.
 */
export const usersCommands: CommandModule = {
  register(program, context) {
    const users = program.command('users').description('user accounts');

    users
      .command('list')
      .description('list users (needs view or manage_users)')
      .option('--search <text>', 'only users whose login, name or email contains this')
      .action(async (options: { search?: string }) => {
        const client = await context.client();
        const list = await client.listAll<User>('/api/users', { search: options.search });
        context.out.result(list, () =>
          context.out.table(
            ['LOGIN', 'NAME', 'STATUS', 'LAST LOGIN', 'ID'],
            list.map((user) => [user.login, user.name, user.status, shortDate(user.lastLoginAt), user._id]),
            'No users.',
          ),
        );
      });

    users
      .command('unlock')
      .description('end the login lockout of a user (needs manage_users)')
      .argument('<login>', 'the user\'s login')
      .action(async (login: string) => {
        const client = await context.client();
        const wanted = login.trim().toLowerCase();
        const user = (await client.listAll<User>('/api/users', { search: login.trim() })).find((candidate) => candidate.login.toLowerCase() === wanted);
        if (!user) throw new CliError(`no user "${login}" (dynctl users list shows them)`, EXIT.failure);
        const result = await client.data<User & { wasLocked: boolean }>('POST', `/api/users/${encodeURIComponent(user._id)}/unlock`);
        context.out.result(result, () => context.out.success(result.wasLocked ? `${user.login} unlocked: they can sign in again now` : `${user.login} was not locked`));
      });
  },
};
