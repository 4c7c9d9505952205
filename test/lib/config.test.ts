import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

const SECRET = 'x'.repeat(32);

function configErrorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('has a default for everything when the environment is empty', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      dataDir: resolve('./data'),
      databaseUrl: undefined,
      projectDir: resolve('./project'),
      projectWatch: true,
      placeholderEnvPrefix: 'DYN_',
      secretFilesDir: '/run/secrets',
      defaultAdminPassword: undefined,
      jwtSecret: undefined,
      jwtRefreshSecret: undefined,
      bodyLimitBytes: 1024 * 1024,
      nodeEnv: 'development',
      logLevel: 'info',
      corsOrigins: [],
      sqliteSynchronous: 'FULL',
      bcryptRounds: 10,
      revisionCheckMs: undefined,
      webhookRetryBaseMs: 60_000,
    });
  });

  it('treats empty values as unset', () => {
    const env = Object.fromEntries(
      ['PORT', 'DATA_DIR', 'DATABASE_URL', 'PROJECT_DIR', 'DEFAULT_ADMIN_PASSWORD', 'JWT_SECRET', 'JWT_REFRESH_SECRET', 'BODY_LIMIT', 'NODE_ENV', 'LOG_LEVEL', 'CORS_ORIGINS', 'SQLITE_SYNCHRONOUS', 'BCRYPT_ROUNDS', 'REVISION_CHECK_MS'].map((name) => [name, '']),
    );
    expect(loadConfig(env)).toEqual(loadConfig({}));
  });

  it('reads and normalises every variable', () => {
    const config = loadConfig({
      PORT: '0',
      HOST: ' ::1 ',
      DATA_DIR: '/tmp/dyn-data',
      DATABASE_URL: 'mongodb+srv://user:pw@cluster.example.net/dyn',
      PROJECT_DIR: 'proj',
      DEFAULT_ADMIN_PASSWORD: 'password-1',
      JWT_SECRET: SECRET,
      JWT_REFRESH_SECRET: SECRET + 'y',
      BODY_LIMIT: '512kb',
      NODE_ENV: 'production',
      LOG_LEVEL: 'DEBUG',
      CORS_ORIGINS: 'https://admin.example.com, http://localhost:5173 ,*',
      SQLITE_SYNCHRONOUS: 'normal',
      BCRYPT_ROUNDS: '4',
      REVISION_CHECK_MS: '250',
      WEBHOOK_RETRY_BASE_MS: '500',
    });
    expect(config).toEqual({
      port: 0,
      host: '::1',
      dataDir: '/tmp/dyn-data',
      databaseUrl: 'mongodb+srv://user:pw@cluster.example.net/dyn',
      projectDir: resolve('proj'),
      projectWatch: true,
      placeholderEnvPrefix: 'DYN_',
      secretFilesDir: '/run/secrets',
      defaultAdminPassword: 'password-1',
      jwtSecret: SECRET,
      jwtRefreshSecret: SECRET + 'y',
      bodyLimitBytes: 512 * 1024,
      nodeEnv: 'production',
      logLevel: 'debug',
      corsOrigins: ['https://admin.example.com', 'http://localhost:5173', '*'],
      sqliteSynchronous: 'NORMAL',
      bcryptRounds: 4,
      revisionCheckMs: 250,
      webhookRetryBaseMs: 500,
    });
  });

  it('treats an empty or blank HOST as unset', () => {
    expect(loadConfig({ HOST: '   ' }).host).toBe('127.0.0.1');
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['PORT', '0x50'],
    ['DATABASE_URL', 'postgres://x'],
    ['DATABASE_URL', 'mongodb://'],
    ['BODY_LIMIT', 'lots'],
    ['BODY_LIMIT', '0'],
    ['CORS_ORIGINS', 'ftp://files.example.com'],
    ['CORS_ORIGINS', 'https://admin.example.com/path'],
    ['DEFAULT_ADMIN_PASSWORD', 'short'],
    ['JWT_SECRET', 'short'],
    ['JWT_REFRESH_SECRET', 'x'.repeat(31)],
    ['NODE_ENV', 'staging'],
    ['LOG_LEVEL', 'loud'],
    ['SQLITE_SYNCHRONOUS', 'OFF'],
    ['BCRYPT_ROUNDS', '3'],
    ['BCRYPT_ROUNDS', '16'],
    ['REVISION_CHECK_MS', '-5'],
    ['REVISION_CHECK_MS', '60001'],
  ])('refuses %s=%j with a ConfigError naming the variable', (variable, value) => {
    const error = configErrorOf({ [variable]: value });
    expect(error.variable).toBe(variable);
    expect(error.message.startsWith(`${variable}: `)).toBe(true);
  });

  it('does not echo a rejected secret in the error message', () => {
    for (const variable of ['JWT_SECRET', 'JWT_REFRESH_SECRET', 'DEFAULT_ADMIN_PASSWORD']) {
      expect(configErrorOf({ [variable]: 'hunter2' }).message).not.toContain('hunter2');
    }
  });

  it('refuses one secret for both tokens, without echoing it', () => {
    const same = 'x'.repeat(40);
    const error = configErrorOf({ JWT_SECRET: same, JWT_REFRESH_SECRET: same });
    expect(error.variable).toBe('JWT_REFRESH_SECRET');
    expect(error.message).toBe('JWT_REFRESH_SECRET: must differ from JWT_SECRET');
  });

  it('accepts the bounds of the numeric ranges', () => {
    expect(loadConfig({ PORT: '65535', BCRYPT_ROUNDS: '15', REVISION_CHECK_MS: '0' })).toMatchObject({ port: 65535, bcryptRounds: 15, revisionCheckMs: 0 });
  });
});
