import { DynClient } from '../client.ts';
import { DEFAULT_SERVER, normalizeServer, updateConfig, writeConfig } from '../config-store.ts';
import type { CommandModule } from '../context.ts';
import { ApiError, authError, CliError, exitCodeOf, messageOf, usageError } from '../errors.ts';
import { ask, readStdin } from '../prompt.ts';

/** `dynctl login` and `dynctl logout`: the stored session in the config file. */
export const sessionCommands: CommandModule = {
  register(program, context) {
    program
      .command('login')
      .description('sign in and store the session (server, access and refresh token) in the config file')
      .option('--server <url>', `server URL (default: DYNCTL_SERVER, the stored server, or ${DEFAULT_SERVER})`)
      .option('--login <login>', 'user to sign in as (asked on a terminal when omitted)')
      .option('--password-stdin', 'read the password from stdin instead of asking for it')
      .addHelpText('after', '\nExamples:\n  dynctl login --server http://127.0.0.1:3000 --login admin\n  printf %s "$PASSWORD" | dynctl login --login ci --password-stdin')
      .action(async (options: { server?: string; login?: string; passwordStdin?: boolean }) => {
        const stored = await context.readConfig();
        const server = options.server ? normalizeServer(options.server) : context.serverFrom(stored);
        const login = (options.login ?? (await askOnTerminal('Login: ', false))).trim();
        if (!login) throw usageError('the login is empty');
        const password = options.passwordStdin ? passwordFromStdin(await readStdin()) : await askOnTerminal('Password: ', true);
        if (!password) throw usageError(options.passwordStdin ? 'no password on stdin' : 'the password is empty');

        const client = new DynClient({ server, credentials: { kind: 'none' } });
        let result;
        try {
          result = await client.login(login, password);
        } catch (error) {
          // Lockout (429) is an authentication failure too, as far as a script is concerned.
          if (error instanceof ApiError && (error.status === 401 || error.status === 429)) throw authError(`login failed: ${error.message}`);
          throw error;
        }
        await writeConfig(context.configPath, { server, accessToken: result.accessToken, refreshToken: result.refreshToken });
        const user = { login: result.user.login, permissions: result.user.permissions };
        context.out.result({ server, user, config: context.configPath }, () => {
          context.out.success(`Logged in to ${server} as ${context.out.paint('bold', user.login)}`);
          context.out.note(`Permissions: ${user.permissions.join(', ') || 'none'}. Session stored in ${context.configPath}.`);
        });
      });

    program
      .command('logout')
      .description('end the session on the server (POST /api/auth/logout) and forget the stored tokens')
      .action(async () => {
        const stored = await context.readConfig();
        const hasSession = Boolean(stored.accessToken && stored.refreshToken);
        // The stored session if there is one; otherwise a DYNCTL_TOKEN given for this run.
        const client = await context.client({ storedSessionOnly: hasSession });
        if (client.credentialKind === 'none') throw authError('not logged in (no stored session and no DYNCTL_TOKEN)');
        if (client.credentialKind === 'apiKey') throw usageError('an API key has no session to end; revoke it with dynctl keys revoke');
        let alreadyEnded = false;
        try {
          await client.logout();
        } catch (error) {
          if (!(error instanceof ApiError && error.status === 401)) {
            if (hasSession) throw new CliError(`${messageOf(error)}; the stored tokens were kept (try again, or delete ${context.configPath})`, exitCodeOf(error));
            throw error;
          }
          alreadyEnded = true;
        }
        if (hasSession) await updateConfig(context.configPath, ({ server }) => (server ? { server } : {}));
        context.out.result({ loggedOut: true, sessionAlreadyEnded: alreadyEnded }, () => {
          context.out.success(alreadyEnded ? 'Logged out (the session had already ended on the server)' : 'Logged out');
        });
      });
  },
};

async function askOnTerminal(question: string, hidden: boolean): Promise<string> {
  if (!process.stdin.isTTY) {
    throw usageError(hidden ? 'no terminal to ask for the password on: use --password-stdin' : 'no terminal to ask for the login on: use --login');
  }
  return ask(question, { hidden });
}

/** The password is stdin minus one trailing newline (`echo pw |` adds one). */
function passwordFromStdin(text: string): string {
  return text.replace(/\r?\n$/, '');
}

