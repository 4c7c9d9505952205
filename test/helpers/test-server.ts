import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/config.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { startServer, type RunningServer } from '../../src/server.ts';

/**
 * A real server on an ephemeral loopback port over a fresh embedded store in a temp directory.
 * Tests talk to it over real HTTP with `api()`.
 */
export const ADMIN_PASSWORD = 'admin-password-1';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  rawBody?: string;
  token?: string;
  apiKey?: string;
  headers?: Record<string, string>;
}

export interface TestServer {
  url: string;
  dataDir: string;
  server: RunningServer;
  api<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  login(login?: string, password?: string): Promise<{ accessToken: string; refreshToken: string; accessTokenExpiresAt: string; refreshTokenExpiresAt: string; user: any }>;
  adminToken(): Promise<string>;
  close(): Promise<void>;
}

export async function startTestServer(env: Record<string, string> = {}, dataDir?: string): Promise<TestServer> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'dyn-test-'));
  const config: Config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dir,
    PROJECT_DIR: join(dir, 'project'),
    DEFAULT_ADMIN_PASSWORD: ADMIN_PASSWORD,
    BCRYPT_ROUNDS: '4',
    LOG_LEVEL: 'silent',
    NODE_ENV: 'test',
    PROJECT_WATCH: 'off',
    ...env,
  });
  const server = await startServer(config, createLogger(config.logLevel));
  let adminToken: string | undefined;

  const api = async <T>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.apiKey) headers['x-api-key'] = options.apiKey;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const response = await fetch(server.url + path, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  };

  const login = async (name = 'admin', password = ADMIN_PASSWORD) => {
    const response = await api<any>('POST', '/api/auth/login', { body: { login: name, password } });
    if (response.status !== 200) throw new Error(`login as ${name} failed: ${response.status} ${response.text}`);
    return response.body.data;
  };

  return {
    url: server.url,
    dataDir: dir,
    server,
    api,
    login,
    async adminToken() {
      adminToken ??= (await login()).accessToken;
      return adminToken as string;
    },
    async close() {
      await server.close();
      if (!dataDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Creates a group with the given permissions and a user in it; returns the user's token. */
export async function createUserWith(
  t: TestServer,
  permissions: string[],
  login = `user${Math.random().toString(36).slice(2, 8)}`,
): Promise<{ token: string; userId: string; login: string; password: string; groupId: string | null }> {
  const admin = await t.adminToken();
  let groupId: string | null = null;
  if (permissions.length > 0) {
    const group = await t.api('POST', '/api/groups', { token: admin, body: { name: `g-${login}`, permissions } });
    if (group.status !== 201) throw new Error(`group create failed: ${group.text}`);
    groupId = group.body.data._id;
  }
  const password = 'user-password-1';
  const user = await t.api('POST', '/api/users', { token: admin, body: { login, password, groupIds: groupId ? [groupId] : [] } });
  if (user.status !== 201) throw new Error(`user create failed: ${user.text}`);
  const session = await t.login(login, password);
  return { token: session.accessToken, userId: user.body.data._id, login, password, groupId };
}

/**
 * Gives a definition a path the API now refuses (one taking another definition's requests: see
 * the README, Paths), as a store written before that rule holds it: the path goes into the store,
 * and a save through the API (a new description) bumps the endpoints revision, so the route table
 * is built again with it.
 */
export async function giveLegacyPath(t: TestServer, id: string, path: string): Promise<void> {
  const endpoints = t.server.services.store.collection<{ _id: string; revision: number }>('endpoints');
  const doc = await endpoints.findById(id);
  if (!doc) throw new Error(`no definition ${id}`);
  await endpoints.updateOne({ _id: id }, { $set: { path, revision: doc.revision + 1 } });
  const saved = await t.api('PUT', `/api/endpoints/${id}`, { token: await t.adminToken(), body: { description: `saved before the path-shape rule: ${path}` } });
  if (saved.status !== 200 || saved.body.data.path !== path) throw new Error(`legacy path not kept: ${saved.status} ${saved.text}`);
}
