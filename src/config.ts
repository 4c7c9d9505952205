import { resolve } from 'node:path';
import { parseByteSize } from './lib/bytes.ts';
import { LOG_LEVELS, type LogLevel } from './lib/logger.ts';

/** Everything the process reads from its environment, validated once at startup. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  projectDir: string;
  /** Whether this instance reads and writes PROJECT_DIR (one writer per directory). */
  projectWatch: boolean;
  /** Placeholders in project bundles: `${env:NAME}` needs this prefix, `${file:...}` this directory. */
  placeholderEnvPrefix: string;
  secretFilesDir: string;
  defaultAdminPassword: string | undefined;
  jwtSecret: string | undefined;
  jwtRefreshSecret: string | undefined;
  bodyLimitBytes: number;
  nodeEnv: 'development' | 'production' | 'test';
  logLevel: LogLevel;
  corsOrigins: string[];
  sqliteSynchronous: 'FULL' | 'NORMAL';
  bcryptRounds: number;
  revisionCheckMs: number | undefined;
  /** First webhook retry delay (WEBHOOK_RETRY_BASE_MS, default 60 s); later ones triple it. */
  webhookRetryBaseMs: number;
}

export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.variable = variable;
  }
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max} (got "${raw}")`);
  }
  return Number(raw);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T, normalize = (s: string) => s): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = normalize(raw.trim()) as T;
  if (!allowed.includes(value)) throw new ConfigError(name, `must be one of ${allowed.join(', ')} (got "${raw}")`);
  return value;
}

function secret(env: Env, name: string, minLength: number): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < minLength) throw new ConfigError(name, `must be at least ${minLength} characters long`);
  return raw;
}

export function loadConfig(env: Env = process.env): Config {
  const host = env.HOST?.trim() || '127.0.0.1';

  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (databaseUrl && !/^mongodb(\+srv)?:\/\/\S+$/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must start with mongodb:// or mongodb+srv:// (unset it to use the embedded store)');
  }

  const bodyLimitRaw = env.BODY_LIMIT?.trim() || '1mb';
  const bodyLimitBytes = parseByteSize(bodyLimitRaw);
  if (bodyLimitBytes === null) throw new ConfigError('BODY_LIMIT', `must be a size such as 1mb, 512kb or 2048 (got "${bodyLimitRaw}")`);

  const corsOrigins = (env.CORS_ORIGINS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const origin of corsOrigins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new ConfigError('CORS_ORIGINS', `"${origin}" is not * or an origin such as https://admin.example.com`);
    }
  }

  const revisionRaw = env.REVISION_CHECK_MS;
  const jwtSecret = secret(env, 'JWT_SECRET', 32);
  const jwtRefreshSecret = secret(env, 'JWT_REFRESH_SECRET', 32);
  // One secret for both would let an access token pass as a refresh token's signature, and back.
  if (jwtSecret !== undefined && jwtSecret === jwtRefreshSecret) throw new ConfigError('JWT_REFRESH_SECRET', 'must differ from JWT_SECRET');
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host,
    dataDir: resolve(env.DATA_DIR?.trim() || './data'),
    databaseUrl,
    projectDir: resolve(env.PROJECT_DIR?.trim() || './project'),
    placeholderEnvPrefix: env.PLACEHOLDER_ENV_PREFIX?.trim() || 'DYN_',
    secretFilesDir: resolve(env.SECRET_FILES_DIR?.trim() || '/run/secrets'),
    projectWatch: oneOf(env, 'PROJECT_WATCH', ['on', 'off'] as const, 'on', (s) => ({ true: 'on', '1': 'on', false: 'off', '0': 'off' })[s.toLowerCase()] ?? s.toLowerCase()) === 'on',
    defaultAdminPassword: secret(env, 'DEFAULT_ADMIN_PASSWORD', 8),
    jwtSecret,
    jwtRefreshSecret,
    bodyLimitBytes,
    nodeEnv: oneOf(env, 'NODE_ENV', ['development', 'production', 'test'] as const, 'development'),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info', (s) => s.toLowerCase()),
    corsOrigins,
    sqliteSynchronous: oneOf(env, 'SQLITE_SYNCHRONOUS', ['FULL', 'NORMAL'] as const, 'FULL', (s) => s.toUpperCase()),
    bcryptRounds: integer(env, 'BCRYPT_ROUNDS', 10, 4, 15),
    revisionCheckMs: revisionRaw === undefined || revisionRaw === '' ? undefined : integer(env, 'REVISION_CHECK_MS', 0, 0, 60_000),
    webhookRetryBaseMs: integer(env, 'WEBHOOK_RETRY_BASE_MS', 60_000, 10, 3_600_000),
  };
}
