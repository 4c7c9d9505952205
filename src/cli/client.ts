import type { EndpointDoc } from '../model/endpoint.ts';
import type { LogDoc } from '../model/records.ts';
import type { ApplyResult, ImportResult } from '../project/apply.ts';
import type { Bundle } from '../project/bundle.ts';
import type { Change, ChangeAction } from '../project/diff.ts';
import type { PublicApiKey } from '../services/api-keys.ts';
import type { PublicCronJob } from '../services/cron-jobs.ts';
import type { publicCronRun } from '../services/cron-runs.ts';
import type { PublicWebhook } from '../services/webhooks.ts';
import type { publicDelivery } from '../services/webhook-deliveries.ts';
import type { LoginResult, TokenPair } from '../services/auth.ts';
import { ApiError, NetworkError } from './errors.ts';

/**
 * The one way dynctl talks to a dyn server: fetch, the `{success, data, meta?}` envelope, the
 * credentials, and the refresh of an expired session. Commands call the typed methods; `send`
 * is for `dynctl call`, which wants the raw answer whatever its status.
 *
 * Credentials, in the order `context.ts` picks them: an API key (`X-API-Key`), a bearer token
 * given from outside (never refreshed), or the stored session, whose access token is refreshed
 * once per command with its refresh token when it has expired (seen from its `exp` claim, or
 * from a 401) — the new pair is handed to `onSessionRefreshed` to be saved.
 */
export type Credentials =
  | { kind: 'none' }
  | { kind: 'apiKey'; key: string }
  | { kind: 'token'; token: string }
  | { kind: 'session'; accessToken: string; refreshToken: string };

export interface ClientOptions {
  server: string;
  credentials: Credentials;
  onSessionRefreshed?: (pair: TokenPair) => Promise<void>;
  /** The message for a 401 sent without credentials (which server, what to run). */
  notLoggedIn?: string;
  timeoutMs?: number;
}

export interface RequestOptions {
  /** JSON-encoded when not a string; a string is sent as is. */
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  /** false: send no credentials (login, health). */
  auth?: boolean;
  /** Overrides the client's timeout for this request (big exports and imports). */
  timeoutMs?: number;
  /** Called as the body is sent (it is streamed in chunks): bytes so far, and the total. */
  onUploadProgress?: (sent: number, total: number) => void;
  /** Called as the answer arrives (it is read as a stream): bytes so far, and Content-Length if given. */
  onDownloadProgress?: (received: number, total: number | undefined) => void;
}

export interface RawResponse {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  /** Parsed JSON when the body is JSON, else undefined (see `text`). */
  body: unknown;
  text: string;
  durationMs: number;
}

export interface Page<T> {
  items: T[];
  page: number;
  limit: number;
  total: number;
}

/** Wire shapes: the stored documents as JSON (dates as ISO strings). */
export type ApiKey = PublicApiKey;
export type CreatedApiKey = PublicApiKey & { key: string };
export type Endpoint = EndpointDoc;
export type CronJob = PublicCronJob;
export type CronRun = ReturnType<typeof publicCronRun>;
export type Webhook = PublicWebhook;
export type WebhookDelivery = ReturnType<typeof publicDelivery>;
export type LogEntry = LogDoc;
export interface EndpointGroup {
  _id: string;
  name: string;
}
export interface Health {
  success: boolean;
  status: string;
  timestamp: string;
}
/** The project routes (/api/project/*): see src/project/bundle.ts and apply.ts. */
export type ProjectBundle = Bundle;
export type ProjectChange = Change;
export type ProjectSummary = Record<ChangeAction, number>;
export interface ProjectPlan {
  changes: ProjectChange[];
  summary: ProjectSummary;
}
export type ProjectApplyResult = ApplyResult;
export type ProjectImportResult = ImportResult;
export interface ProjectExportQuery {
  data?: boolean;
  settings?: boolean;
}
/** Transfers of whole projects (records included) get longer than ordinary requests. */
export interface TransferOptions {
  onUploadProgress?: RequestOptions['onUploadProgress'];
  onDownloadProgress?: RequestOptions['onDownloadProgress'];
}
export interface ApiKeyInput {
  name: string;
  permissions: string[];
  expiresAt?: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** Export and import with records: the body itself may take long to transfer. */
const TRANSFER_TIMEOUT_MS = 600_000;
/** Uploads with progress are sent in chunks of this size. */
const UPLOAD_CHUNK_BYTES = 64 * 1024;
/** Refresh a little early: the clocks of client and server differ. */
const EXPIRY_SKEW_MS = 10_000;
const PAGE_LIMIT = 100;
const MAX_PAGES = 1_000;

export class DynClient {
  readonly server: string;
  private credentials: Credentials;
  private readonly onSessionRefreshed: ((pair: TokenPair) => Promise<void>) | undefined;
  private readonly timeoutMs: number;
  private readonly notLoggedIn: string;
  private refreshed = false;
  private sessionEnded = false;

  constructor(options: ClientOptions) {
    this.server = options.server;
    this.credentials = options.credentials;
    this.onSessionRefreshed = options.onSessionRefreshed;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.notLoggedIn = options.notLoggedIn ?? 'not logged in: run dynctl login, or set DYNCTL_TOKEN or DYNCTL_API_KEY';
  }

  get credentialKind(): Credentials['kind'] {
    return this.credentials.kind;
  }

  // ---- typed API -------------------------------------------------------------------------

  /** GET /api/health, which answers outside the `data` envelope. */
  async health(): Promise<Health> {
    const response = await this.request('GET', '/api/health', { auth: false });
    const body = response.body as Partial<Health> | undefined;
    if (response.status !== 200 || typeof body?.status !== 'string') {
      throw new ApiError(response.status >= 400 ? response.status : 502, `health check failed: HTTP ${response.status}${body?.status ? ` (${body.status})` : ''}`);
    }
    return body as Health;
  }

  async login(login: string, password: string): Promise<LoginResult> {
    return this.data<LoginResult>('POST', '/api/auth/login', { body: { login, password }, auth: false });
  }

  /** Ends the session on the server; sends the refresh token too (it names this session, and works when the access token has expired). */
  async logout(): Promise<void> {
    const credentials = this.credentials;
    const body = credentials.kind === 'session' ? { refreshToken: credentials.refreshToken } : undefined;
    await this.data('POST', '/api/auth/logout', { body, auth: true });
  }

  listApiKeys(): Promise<ApiKey[]> {
    return this.listAll<ApiKey>('/api/api-keys');
  }

  createApiKey(input: ApiKeyInput): Promise<CreatedApiKey> {
    return this.data<CreatedApiKey>('POST', '/api/api-keys', { body: input });
  }

  revokeApiKey(id: string): Promise<ApiKey> {
    return this.data<ApiKey>('DELETE', `/api/api-keys/${encodeURIComponent(id)}`);
  }

  listCronJobs(): Promise<CronJob[]> {
    return this.listAll<CronJob>('/api/cron');
  }

  /** Runs a job now (by id or name) and answers with the run. */
  runCronJob(idOrName: string): Promise<CronRun> {
    return this.data<CronRun>('POST', `/api/cron/${encodeURIComponent(idOrName)}/run`);
  }

  cronRuns(idOrName: string, query: { page?: number; limit?: number }): Promise<Page<CronRun>> {
    return this.page<CronRun>(`/api/cron/${encodeURIComponent(idOrName)}/runs`, query);
  }

  listWebhooks(): Promise<Webhook[]> {
    return this.listAll<Webhook>('/api/webhooks');
  }

  testWebhook(idOrName: string): Promise<WebhookDelivery> {
    return this.data<WebhookDelivery>('POST', `/api/webhooks/${encodeURIComponent(idOrName)}/test`);
  }

  webhookDeliveries(idOrName: string, query: { page?: number; limit?: number }): Promise<Page<WebhookDelivery>> {
    return this.page<WebhookDelivery>(`/api/webhooks/${encodeURIComponent(idOrName)}/deliveries`, query);
  }

  listEndpoints(search?: string): Promise<Endpoint[]> {
    return this.listAll<Endpoint>('/api/endpoints', { search });
  }

  listEndpointGroups(): Promise<EndpointGroup[]> {
    return this.listAll<EndpointGroup>('/api/endpoints/groups');
  }

  logs(query: { page?: number; limit?: number; action?: string; search?: string }): Promise<Page<LogEntry>> {
    return this.page<LogEntry>('/api/dashboard/logs', query);
  }

  /** `data` of GET /api/project/status, or null when this server has no project routes (404). */
  async projectStatus(): Promise<unknown> {
    const response = await this.request('GET', '/api/project/status');
    if (response.status === 404) return null;
    return this.check<unknown>(response, true).data;
  }

  /** POST /api/project/plan: what applying `bundle` would change; writes nothing. */
  planProject(bundle: ProjectBundle, options: { prune: boolean }): Promise<ProjectPlan> {
    return this.data<ProjectPlan>('POST', '/api/project/plan', { body: bundle, query: { prune: String(options.prune) } });
  }

  /** POST /api/project/apply (definitions only); `dryRun` is the plan in the same shape. */
  applyProject(bundle: ProjectBundle, options: { prune: boolean; dryRun: boolean }): Promise<ProjectApplyResult> {
    return this.data<ProjectApplyResult>('POST', '/api/project/apply', { body: bundle, query: { prune: String(options.prune), dryRun: String(options.dryRun) } });
  }

  /**
   * GET /api/project/export as the server writes it: YAML text (or the `{success, data}` JSON
   * text with `format: 'json'`), byte for byte.
   */
  async exportProjectText(query: ProjectExportQuery & { format: 'yaml' | 'json' }, options: TransferOptions = {}): Promise<string> {
    const response = await this.request('GET', '/api/project/export', { query: exportQuery(query), timeoutMs: TRANSFER_TIMEOUT_MS, ...options });
    if (response.status < 200 || response.status >= 300) this.check<never>(response, true);
    return response.text;
  }

  /** GET /api/project/export?format=json: the bundle. */
  async exportProject(query: ProjectExportQuery, options: TransferOptions = {}): Promise<ProjectBundle> {
    const response = await this.request('GET', '/api/project/export', { query: { ...exportQuery(query), format: 'json' }, timeoutMs: TRANSFER_TIMEOUT_MS, ...options });
    return this.check<ProjectBundle>(response, true).data;
  }

  /**
   * POST /api/project/import: a bundle object (sent as JSON), or the text of a bundle file
   * (`{text, type}`: JSON or YAML, sent as it is).
   */
  importProject(bundle: ProjectBundle | { text: string; type: 'json' | 'yaml' }, options: { mode: 'merge' | 'replace' } & TransferOptions): Promise<ProjectImportResult> {
    const isText = 'text' in bundle && typeof bundle.text === 'string';
    const { mode, ...transfer } = options;
    return this.data<ProjectImportResult>('POST', '/api/project/import', {
      body: isText ? (bundle as { text: string }).text : JSON.stringify(bundle),
      headers: { 'content-type': isText && (bundle as { type: string }).type === 'yaml' ? 'application/yaml' : 'application/json' },
      query: { mode },
      timeoutMs: TRANSFER_TIMEOUT_MS,
      ...transfer,
    });
  }

  // ---- building blocks -------------------------------------------------------------------

  /** Calls a management route and returns `data`; any non-2xx answer is an ApiError. */
  async data<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return this.check<T>(await this.request(method, path, options), options.auth !== false).data;
  }

  async page<T>(path: string, query: Record<string, string | number | undefined> = {}): Promise<Page<T>> {
    const { data, meta } = this.check<T[]>(await this.request('GET', path, { query }), true);
    return {
      items: data,
      page: Number(meta?.page ?? query.page ?? 1),
      limit: Number(meta?.limit ?? data.length),
      total: Number(meta?.total ?? data.length),
    };
  }

  /** Every page of a paged list route. */
  async listAll<T>(path: string, query: Record<string, string | number | undefined> = {}): Promise<T[]> {
    const items: T[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      const result = await this.page<T>(path, { ...query, page, limit: PAGE_LIMIT });
      items.push(...result.items);
      if (result.items.length === 0 || items.length >= result.total) break;
    }
    return items;
  }

  /**
   * One HTTP request with the credentials (unless `auth: false`), whatever the answer's status.
   * Throws NetworkError only. Refreshes the stored session once when its access token has
   * expired: before sending when the token says so, or after a 401 (then the request is sent again).
   */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<RawResponse> {
    const auth = options.auth !== false;
    if (auth && this.credentials.kind === 'session' && !this.refreshed && tokenExpired(this.credentials.accessToken)) {
      await this.refreshSession();
    }
    const response = await this.send(method, path, options, auth);
    if (response.status === 401 && auth && this.credentials.kind === 'session' && !this.refreshed) {
      if (await this.refreshSession()) return this.send(method, path, options, auth);
    }
    return response;
  }

  /** unwrap, with a 401 to an authenticated request explained in terms of what to do about it. */
  private check<T>(response: RawResponse, auth: boolean): Envelope<T> {
    try {
      return unwrap<T>(response);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 401 || !auth) throw error;
      const hint =
        this.credentials.kind === 'none'
          ? this.notLoggedIn
          : this.credentials.kind === 'session' && this.sessionEnded
            ? 'the stored session has ended: run dynctl login'
            : undefined;
      throw hint ? new ApiError(401, `${hint} (${error.message})`, error.details) : error;
    }
  }

  /** Exchanges the refresh token for a new pair; false when the server refuses it (session over). */
  private async refreshSession(): Promise<boolean> {
    if (this.credentials.kind !== 'session') return false;
    this.refreshed = true;
    const response = await this.send('POST', '/api/auth/refresh', { body: { refreshToken: this.credentials.refreshToken } }, false);
    if (response.status === 401 || response.status === 403) {
      this.sessionEnded = true;
      return false;
    }
    const pair = unwrap<TokenPair>(response).data;
    this.credentials = { kind: 'session', accessToken: pair.accessToken, refreshToken: pair.refreshToken };
    await this.onSessionRefreshed?.(pair);
    return true;
  }

  private async send(method: string, path: string, options: RequestOptions, auth: boolean): Promise<RawResponse> {
    const url = this.url(path, options.query);
    const headers: Record<string, string> = { accept: 'application/json' };
    let body: string | ReadableStream<Uint8Array> | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
      if (options.onUploadProgress) body = uploadStream(Buffer.from(body, 'utf8'), options.onUploadProgress);
    }
    if (auth) Object.assign(headers, authHeaders(this.credentials));
    for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;

    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const started = performance.now();
    let response: Response;
    let text: string;
    try {
      // A stream body needs duplex: 'half' (fetch sends it chunked).
      const init: RequestInit & { duplex?: 'half' } = { method, headers, body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) };
      if (typeof body === 'object') init.duplex = 'half';
      response = await fetch(url, init);
      text = options.onDownloadProgress ? await readWithProgress(response, options.onDownloadProgress) : await response.text();
    } catch (error) {
      throw new NetworkError(describeNetworkError(error, this.server, timeoutMs));
    }
    const durationMs = Math.round((performance.now() - started) * 10) / 10;
    return {
      status: response.status,
      statusText: response.statusText,
      headers: Object.fromEntries(response.headers.entries()),
      body: parseJson(text),
      text,
      durationMs,
    };
  }

  private url(path: string, query: RequestOptions['query']): URL {
    const url = new URL(this.server + (path.startsWith('/') ? path : `/${path}`));
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== '') url.searchParams.set(name, String(value));
    }
    return url;
  }
}

function exportQuery(query: ProjectExportQuery & { format?: string }): Record<string, string | undefined> {
  return { data: query.data ? 'true' : undefined, settings: query.settings ? 'true' : undefined, format: query.format };
}

/** The body as a stream of chunks, reporting each chunk as fetch takes it. */
function uploadStream(bytes: Buffer, onProgress: (sent: number, total: number) => void): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) {
        controller.close();
        return;
      }
      const chunk = bytes.subarray(offset, offset + UPLOAD_CHUNK_BYTES);
      offset += chunk.length;
      controller.enqueue(new Uint8Array(chunk));
      onProgress(offset, bytes.length);
    },
  });
}

/** The answer's text, read chunk by chunk so that progress can be shown. */
async function readWithProgress(response: Response, onProgress: (received: number, total: number | undefined) => void): Promise<string> {
  if (!response.body) return response.text();
  const length = Number(response.headers.get('content-length'));
  const total = Number.isFinite(length) && length > 0 ? length : undefined;
  const chunks: Uint8Array[] = [];
  let received = 0;
  for await (const chunk of response.body) {
    chunks.push(chunk);
    received += chunk.length;
    onProgress(received, total);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function authHeaders(credentials: Credentials): Record<string, string> {
  switch (credentials.kind) {
    case 'apiKey':
      return { 'x-api-key': credentials.key };
    case 'token':
      return { authorization: `Bearer ${credentials.token}` };
    case 'session':
      return { authorization: `Bearer ${credentials.accessToken}` };
    case 'none':
      return {};
  }
}

interface Envelope<T> {
  data: T;
  meta?: { page?: number; limit?: number; total?: number };
}

/** The `{success: true, data}` of a 2xx answer, or an ApiError with the server's message. */
function unwrap<T>(response: RawResponse): Envelope<T> {
  const body = response.body as { success?: boolean; data?: T; meta?: Envelope<T>['meta']; error?: unknown; details?: unknown } | undefined;
  if (response.status >= 200 && response.status < 300) {
    if (!body || typeof body !== 'object' || !('data' in body)) {
      throw new ApiError(502, `unexpected answer from the server (HTTP ${response.status}, not the dyn JSON envelope)`);
    }
    return body.meta ? { data: body.data as T, meta: body.meta } : { data: body.data as T };
  }
  const message = typeof body?.error === 'string' ? body.error : response.statusText || `HTTP ${response.status}`;
  const details = Array.isArray(body?.details) ? (body.details as Array<{ field: string; message: string }>) : undefined;
  throw new ApiError(response.status, message, details);
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** True when a JWT's `exp` has passed (or is about to); false when it cannot be read. */
export function tokenExpired(token: string, now = Date.now()): boolean {
  const payload = token.split('.')[1];
  if (!payload) return false;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' && claims.exp * 1000 <= now + EXPIRY_SKEW_MS;
  } catch {
    return false;
  }
}

const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed by the server',
};

function describeNetworkError(error: unknown, server: string, timeoutMs: number): string {
  if (error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `no answer from ${server} within ${timeoutMs / 1000} s`;
  }
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code;
  // OpenSSL's own text (file names, hex error codes) helps nobody: say what most likely happened.
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') {
    return `cannot reach ${server}: the server does not speak TLS (https); is it ${server.replace(/^https:/, 'http:')}?`;
  }
  if (code?.startsWith('ERR_SSL_') || code?.startsWith('ERR_TLS_') || /CERT|SELF_SIGNED/.test(code ?? '')) {
    return `cannot reach ${server}: TLS failed (${code})`;
  }
  const reason = (code && NETWORK_CODES[code]) ?? cause?.message ?? (error as Error).message;
  return `cannot reach ${server}: ${reason}${code && NETWORK_CODES[code] ? ` (${code})` : ''}`;
}
