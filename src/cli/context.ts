import type { Command } from 'commander';
import { DynClient, type Credentials } from './client.ts';
import { configPath, DEFAULT_SERVER, normalizeServer, readConfig, updateConfig, type Env, type StoredConfig } from './config-store.ts';
import { Output } from './output.ts';

/**
 * What every command gets: the environment, the output (its `--json` mode is known once
 * commander has parsed the global options) and a client built from the config file and the
 * environment overrides.
 */
export interface CommandModule {
  /** Adds the command (or command group) to the program. */
  register(program: Command, context: CliContext): void;
}

export class CliContext {
  readonly env: Env;
  out: Output;

  constructor(env: Env = process.env) {
    this.env = env;
    this.out = new Output({ env });
  }

  setJson(json: boolean): void {
    this.out = new Output({ json, env: this.env });
  }

  get configPath(): string {
    return configPath(this.env);
  }

  readConfig(): Promise<StoredConfig> {
    return readConfig(this.configPath);
  }

  /** The server: DYNCTL_SERVER, else the stored one, else the default. */
  serverFrom(stored: StoredConfig): string {
    return normalizeServer(this.env.DYNCTL_SERVER || stored.server || DEFAULT_SERVER);
  }

  /**
   * A client for the configured server. Credentials: DYNCTL_API_KEY, else DYNCTL_TOKEN, else
   * the stored session (refreshed and saved back when its access token has expired), else none.
   */
  async client(options: { anonymous?: boolean; storedSessionOnly?: boolean } = {}): Promise<DynClient> {
    const stored = await this.readConfig();
    const credentials: Credentials = options.anonymous ? { kind: 'none' } : this.credentialsFrom(stored, options.storedSessionOnly ?? false);
    return new DynClient({
      server: this.serverFrom(stored),
      credentials,
      onSessionRefreshed: async (pair) => {
        await updateConfig(this.configPath, (config) => ({ ...config, accessToken: pair.accessToken, refreshToken: pair.refreshToken }));
      },
    });
  }

  private credentialsFrom(stored: StoredConfig, storedSessionOnly: boolean): Credentials {
    if (!storedSessionOnly && this.env.DYNCTL_API_KEY) return { kind: 'apiKey', key: this.env.DYNCTL_API_KEY };
    if (!storedSessionOnly && this.env.DYNCTL_TOKEN) return { kind: 'token', token: this.env.DYNCTL_TOKEN };
    if (stored.accessToken && stored.refreshToken) return { kind: 'session', accessToken: stored.accessToken, refreshToken: stored.refreshToken };
    return { kind: 'none' };
  }
}

/** How a client's credentials are described to a person (status, errors). */
export const CREDENTIAL_SOURCES: Record<Credentials['kind'], string> = {
  apiKey: 'API key from DYNCTL_API_KEY',
  token: 'bearer token from DYNCTL_TOKEN',
  session: 'stored session (dynctl login)',
  none: 'none (not logged in)',
};
