import type { TokenPair } from '../../services/auth.ts';
import { DynClient } from '../client.ts';
import { DEFAULT_SERVER, normalizeServer, updateSession } from '../config-store.ts';
import type { CommandModule } from '../context.ts';
import { ApiError, authError, CliError, exitCodeOf, messageOf, usageError } from '../errors.ts';
import { ask, readStdin } from '../prompt.ts';

/**
 * `dynctl login`, `dynctl logout` and `dynctl passwd`: the session stored in a context of the
 * config file (the current context, or `--context NAME`).
 */
export const sessionCommands: CommandModule = {
  register(program, context) {
    program
      .command('login')
      .description('sign in and store the session (server, access and refresh token) in a context of the config file')
      .option('--login <login>', 'user to sign in as (asked on a terminal when omitted)')
      .option('--password-stdin', 'read the password from stdin instead of asking for it')
      .addHelpText(
        'after',
        `\nThe server: --server, else DYNCTL_SERVER, else the context's stored server, else ${DEFAULT_SERVER}.\nThe session goes to the context named by --context (default: the current one, else "default");\nthe first context stored becomes the current one.\n\nExamples:\n  dynctl login --server http://127.0.0.1:3000 --login admin\n  dynctl login --context staging --server https://staging.example.com --login admin\n  printf %s "$PASSWORD" | dynctl login --login ci --password-stdin`,
      )
      .action(async (options: { login?: string; passwordStdin?: boolean }) => {
        const config = await context.readConfig();
        const name = context.contextName(config);
        const storedServer = config.contexts[name]?.server;
        const server = context.explicitServer() ?? (storedServer ? normalizeServer(storedServer) : DEFAULT_SERVER);
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
        await context.saveSession(name, { server, accessToken: result.accessToken, refreshToken: result.refreshToken });
        const user = { login: result.user.login, permissions: result.user.permissions };
        context.out.result({ server, context: name, user, config: context.configPath }, () => {
          context.out.success(`Logged in to ${server} as ${context.out.paint('bold', user.login)} (context "${name}")`);
          context.out.note(`Permissions: ${user.permissions.join(', ') || 'none'}. Session stored in ${context.configPath}.`);
        });
      });

    program
      .command('logout')
      .description('end this session on the server (POST /api/auth/logout) and forget the stored tokens')
      .action(async () => {
        const target = await context.target();
        const hasSession = target.session !== undefined;
        // The stored session if there is one for this server; otherwise a DYNCTL_TOKEN given for this run.
        const client = await context.client({ storedSessionOnly: hasSession });
        if (client.credentialKind === 'none') throw authError(`not logged in to ${client.server} (no stored session for it and no DYNCTL_TOKEN)`);
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
        if (hasSession) await updateSession(context.configPath, target.name, ({ server }) => (server ? { server } : {}));
        context.out.result({ loggedOut: true, sessionAlreadyEnded: alreadyEnded }, () => {
          context.out.success(alreadyEnded ? 'Logged out (the session had already ended on the server)' : 'Logged out');
        });
      });

    program
      .command('passwd')
      .description('change your password (PUT /api/profile) and stay signed in: the new session is stored')
      .option('--password-stdin', 'read the current password and the new one from stdin, one per line')
      .addHelpText('after', '\nOn a terminal it asks for the current password and twice for the new one, without echo.\nEvery other session of the user ends (other devices sign in again).\n\nExample:\n  printf "%s\\n%s\\n" "$OLD" "$NEW" | dynctl passwd --password-stdin')
      .action(async (options: { passwordStdin?: boolean }) => {
        const target = await context.target();
        const client = await context.client();
        if (client.credentialKind === 'apiKey') throw usageError('an API key has no password; unset DYNCTL_API_KEY and log in as the user');
        if (client.credentialKind === 'none') throw authError(`not logged in to ${client.server}: run dynctl login --server ${client.server}`);
        const { current, next } = options.passwordStdin ? passwordsFromStdin(await readStdin()) : await askNewPassword();
        const result = await client.data<{ login: string; tokens?: TokenPair }>('PUT', '/api/profile', { body: { currentPassword: current, password: next } });
        const stored = client.credentialKind === 'session' && result.tokens !== undefined;
        if (stored && result.tokens) {
          const { accessToken, refreshToken } = result.tokens;
          await updateSession(context.configPath, target.name, (session) => ({ ...session, accessToken, refreshToken }));
        }
        context.out.result({ changed: true, login: result.login, sessionStored: stored }, () => {
          context.out.success(`Password of ${context.out.paint('bold', result.login)} changed${stored ? '; you are still signed in' : ''}`);
          if (!stored) context.out.note('The token in DYNCTL_TOKEN no longer works: sign in again.');
        });
      });
  },
};

/** Asked on the terminal: the current password, then the new one twice. */
async function askNewPassword(): Promise<{ current: string; next: string }> {
  const current = await askOnTerminal('Current password: ', true);
  const next = await askOnTerminal('New password: ', true);
  const again = await askOnTerminal('New password again: ', true);
  if (!current || !next) throw usageError('a password is empty; nothing was changed');
  if (next !== again) throw usageError('the two new passwords differ; nothing was changed');
  return { current, next };
}

function passwordsFromStdin(text: string): { current: string; next: string } {
  const [current, next] = text.split(/\r?\n/);
  if (!current || !next) throw usageError('--password-stdin needs two lines on stdin: the current password, then the new one');
  return { current, next };
}

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

