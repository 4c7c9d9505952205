import type { Command } from 'commander';
import { DynClient, type Credentials } from './client.ts';
import {
  checkContextName,
  configPath,
  DEFAULT_CONTEXT,
  normalizeServer,
  readConfig,
  updateConfig,
  updateSession,
  type Env,
  type StoredConfig,
  type StoredSession,
} from './config-store.ts';
import { authError } from './errors.ts';
import { Output } from './output.ts';

/**
 * What every command gets: the environment, the output (its `--json` mode is known once
 * commander has parsed the global options), the global `--context` and `--server`, and a client
 * built from the config file and the environment overrides.
 *
 * Stored tokens are tied to their server: they are sent only to the server they were stored
 * for. `--server` or `DYNCTL_SERVER` naming another server means no stored token is used.
 */
export interface CommandModule {
  /** Adds the command (or command group) to the program. */
  register(program: Command, context: CliContext): void;
}

export interface GlobalOptions {
  json?: boolean;
  context?: string;
  server?: string;
}

/** The context a command works with: its name, what is stored for it, and the server to talk to. */
export interface Target {
  name: string;
  stored: StoredSession;
  /** `--server`, else DYNCTL_SERVER, else the context's server; undefined when none is known. */
  server: string | undefined;
  /** The stored tokens, when they belong to `server`. */
  session: { accessToken: string; refreshToken: string } | undefined;
}

export class CliContext {
  readonly env: Env;
  out: Output;
  private globals: GlobalOptions = {};

  constructor(env: Env = process.env) {
    this.env = env;
    this.out = new Output({ env });
  }

  setJson(json: boolean): void {
    this.out = new Output({ json, env: this.env });
  }

  /** The global options, once commander has parsed them. */
  setGlobals(globals: GlobalOptions): void {
    this.globals = globals;
    this.setJson(Boolean(globals.json));
  }

  get configPath(): string {
    return configPath(this.env);
  }

  readConfig(): Promise<StoredConfig> {
    return readConfig(this.configPath);
  }

  /** `--context`, else DYNCTL_CONTEXT, else the current context, else "default". */
  contextName(config: StoredConfig): string {
    return checkContextName(this.globals.context || this.env.DYNCTL_CONTEXT || config.currentContext || DEFAULT_CONTEXT);
  }

  /** The server named for this run (`--server`, else DYNCTL_SERVER), if any. */
  explicitServer(): string | undefined {
    const raw = this.globals.server || this.env.DYNCTL_SERVER;
    return raw ? normalizeServer(raw) : undefined;
  }

  async target(): Promise<Target> {
    const config = await this.readConfig();
    const name = this.contextName(config);
    const stored = config.contexts[name] ?? {};
    const storedServer = stored.server ? normalizeServer(stored.server) : undefined;
    const server = this.explicitServer() ?? storedServer;
    const session = stored.accessToken && stored.refreshToken && server !== undefined && server === storedServer ? { accessToken: stored.accessToken, refreshToken: stored.refreshToken } : undefined;
    return { name, stored, server, session };
  }

  /** Stores a session in a context; the first context stored becomes the current one. */
  async saveSession(name: string, session: StoredSession): Promise<void> {
    await updateConfig(this.configPath, (config) => ({
      currentContext: config.currentContext ?? name,
      contexts: { ...config.contexts, [name]: session },
    }));
  }

  /**
   * A client for the context's server. Credentials: DYNCTL_API_KEY, else DYNCTL_TOKEN, else the
   * stored session when it is for this server (refreshed and saved back when its access token
   * has expired), else none. No server at all is "not logged in" (exit 3), not a guess.
   */
  async client(options: { anonymous?: boolean; storedSessionOnly?: boolean; longLived?: boolean } = {}): Promise<DynClient> {
    const target = await this.target();
    if (target.server === undefined) throw authError(`not logged in${target.name !== DEFAULT_CONTEXT ? ` (context "${target.name}")` : ''}: run dynctl login --server URL`);
    const credentials: Credentials = options.anonymous ? { kind: 'none' } : this.credentialsFrom(target, options.storedSessionOnly ?? false);
    return new DynClient({
      server: target.server,
      credentials,
      notLoggedIn: notLoggedIn(target, target.server),
      longLived: options.longLived ?? false,
      onSessionRefreshed: async (pair) => {
        await updateSession(this.configPath, target.name, (session) => ({ ...session, accessToken: pair.accessToken, refreshToken: pair.refreshToken }));
      },
    });
  }

  private credentialsFrom(target: Target, storedSessionOnly: boolean): Credentials {
    if (!storedSessionOnly && this.env.DYNCTL_API_KEY) return { kind: 'apiKey', key: this.env.DYNCTL_API_KEY };
    if (!storedSessionOnly && this.env.DYNCTL_TOKEN) return { kind: 'token', token: this.env.DYNCTL_TOKEN };
    if (target.session) return { kind: 'session', ...target.session };
    return { kind: 'none' };
  }
}

/** What a 401 without credentials means here, said so that the fix is plain. */
function notLoggedIn(target: Target, server: string): string {
  const elsewhere = target.stored.accessToken && target.stored.server && normalizeServer(target.stored.server) !== server;
  const context = target.name !== DEFAULT_CONTEXT ? ` --context ${target.name}` : '';
  return elsewhere
    ? `not logged in to ${server} (the stored session is for ${target.stored.server}): run dynctl login${context} --server ${server}`
    : `not logged in to ${server}: run dynctl login${context} --server ${server}, or set DYNCTL_TOKEN or DYNCTL_API_KEY`;
}

/** How a client's credentials are described to a person (status, errors). */
export const CREDENTIAL_SOURCES: Record<Credentials['kind'], string> = {
  apiKey: 'API key from DYNCTL_API_KEY',
  token: 'bearer token from DYNCTL_TOKEN',
  session: 'stored session (dynctl login)',
  none: 'none (not logged in)',
};
