import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliError, usageError } from './errors.ts';

/**
 * The per-user config file: named contexts, kubectl-style, each a server and the session
 * `dynctl login` stored for it, and which context is current:
 *
 *     {"currentContext": "default", "contexts": {"default": {server, accessToken, refreshToken}, "staging": {...}}}
 *
 * A file of the first format (`{server, accessToken, refreshToken}`, one session) is read as the
 * context "default" and written in the new format at the next change. It holds credentials, so
 * its directory is created 0700 and the file is written 0600 (to a temporary file first, then
 * renamed, so a crash never leaves half a file).
 *
 * | source                        | wins over                                   |
 * |-------------------------------|---------------------------------------------|
 * | `DYNCTL_CONFIG`               | the default path                            |
 * | `$XDG_CONFIG_HOME`            | `~/.config`                                 |
 * | `--context`, `DYNCTL_CONTEXT` | the current context                         |
 * | `--server`, `DYNCTL_SERVER`   | the context's server (and then its tokens)  |
 * | `DYNCTL_API_KEY`              | `DYNCTL_TOKEN`, stored tokens               |
 * | `DYNCTL_TOKEN`                | stored tokens                               |
 */
export interface StoredSession {
  server?: string;
  accessToken?: string;
  refreshToken?: string;
}

export interface StoredConfig {
  currentContext?: string;
  contexts: Record<string, StoredSession>;
}

export type Env = Record<string, string | undefined>;

export const DEFAULT_SERVER = 'http://127.0.0.1:3000';
export const DEFAULT_CONTEXT = 'default';

export function configPath(env: Env = process.env): string {
  if (env.DYNCTL_CONFIG) return env.DYNCTL_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'dynctl', 'config.json');
}

/** A context name: what kubectl would accept and a shell needs no quotes for. */
export function checkContextName(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/.test(name)) throw usageError(`invalid context name "${name}": letters, digits, "_", "." and "-", at most 63`);
  return name;
}

export async function readConfig(path: string): Promise<StoredConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { contexts: {} };
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError(`${path} is not valid JSON; fix it or run dynctl login again`);
  }
  if (!isObject(parsed)) throw new CliError(`${path} must hold a JSON object`);
  // The first format: one session at the top level.
  if (!('contexts' in parsed)) {
    const session = sessionOf(parsed);
    return Object.keys(session).length > 0 ? { currentContext: DEFAULT_CONTEXT, contexts: { [DEFAULT_CONTEXT]: session } } : { contexts: {} };
  }
  if (!isObject(parsed.contexts)) throw new CliError(`${path}: "contexts" must be an object`);
  const contexts: Record<string, StoredSession> = {};
  for (const [name, value] of Object.entries(parsed.contexts)) if (isObject(value)) contexts[name] = sessionOf(value);
  const current = typeof parsed.currentContext === 'string' && parsed.currentContext ? parsed.currentContext : undefined;
  return current ? { currentContext: current, contexts } : { contexts };
}

function sessionOf(value: Record<string, unknown>): StoredSession {
  const session: StoredSession = {};
  for (const key of ['server', 'accessToken', 'refreshToken'] as const) {
    const item = value[key];
    if (typeof item === 'string' && item) session[key] = item;
  }
  return session;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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

/** Reads, changes and writes back: what login, a token refresh, logout and `context use` do. */
export async function updateConfig(path: string, change: (config: StoredConfig) => StoredConfig): Promise<void> {
  await writeConfig(path, change(await readConfig(path)));
}

/** Reads, changes one context's session and writes back (the context is created if new). */
export async function updateSession(path: string, name: string, change: (session: StoredSession) => StoredSession): Promise<void> {
  await updateConfig(path, (config) => ({ ...config, contexts: { ...config.contexts, [name]: change(config.contexts[name] ?? {}) } }));
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
