import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliError, usageError } from './errors.ts';

/**
 * The per-user config file: `{server, accessToken, refreshToken}` as written by `dynctl login`.
 * It holds credentials, so its directory is created 0700 and the file is written 0600 (to a
 * temporary file first, then renamed, so a crash never leaves half a file).
 *
 * | source                | wins over                     |
 * |-----------------------|-------------------------------|
 * | `DYNCTL_CONFIG`       | the default path              |
 * | `$XDG_CONFIG_HOME`    | `~/.config`                   |
 * | `DYNCTL_SERVER`       | the stored server             |
 * | `DYNCTL_API_KEY`      | `DYNCTL_TOKEN`, stored tokens |
 * | `DYNCTL_TOKEN`        | stored tokens                 |
 */
export interface StoredConfig {
  server?: string;
  accessToken?: string;
  refreshToken?: string;
}

export type Env = Record<string, string | undefined>;

export const DEFAULT_SERVER = 'http://127.0.0.1:3000';

export function configPath(env: Env = process.env): string {
  if (env.DYNCTL_CONFIG) return env.DYNCTL_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'dynctl', 'config.json');
}

export async function readConfig(path: string): Promise<StoredConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError(`${path} is not valid JSON; fix it or run dynctl login again`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new CliError(`${path} must hold a JSON object`);
  const config: StoredConfig = {};
  for (const key of ['server', 'accessToken', 'refreshToken'] as const) {
    const value = (parsed as Record<string, unknown>)[key];
    if (typeof value === 'string' && value) config[key] = value;
  }
  return config;
}

export async function writeConfig(path: string, config: StoredConfig): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
    // The mode passed to writeFile is filtered by the umask; make it exact.
    await chmod(temporary, 0o600);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new CliError(`cannot write ${path}: ${(error as Error).message}`);
  }
}

/** Reads, changes and writes back: what a token refresh and logout do. */
export async function updateConfig(path: string, change: (config: StoredConfig) => StoredConfig): Promise<void> {
  await writeConfig(path, change(await readConfig(path)));
}

/** `http://host:port` without a trailing slash; anything that is not http(s) is a usage error. */
export function normalizeServer(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.includes('://') ? raw : `http://${raw}`);
  } catch {
    throw usageError(`invalid server URL "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError(`invalid server URL "${raw}": use http:// or https://`);
  if (url.search || url.hash) throw usageError(`invalid server URL "${raw}": no query or fragment`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}
