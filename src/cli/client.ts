import type { EndpointDoc } from '../model/endpoint.ts';
import type { LogDoc } from '../model/records.ts';
import type { ApplyResult } from '../project/apply.ts';
import type { ImportResult } from '../project/import.ts';
import type { Bundle } from '../project/bundle.ts';
import type { Change, ChangeAction } from '../project/diff.ts';
import type { PublicApiKey } from '../services/api-keys.ts';
import type { PublicCronJob } from '../services/cron-jobs.ts';
import type { publicCronRun } from '../services/cron-runs.ts';
import type { PublicWebhook } from '../services/webhooks.ts';
import type { publicDelivery } from '../services/webhook-deliveries.ts';
import type { LoginResult, TokenPair } from '../services/auth.ts';
import type { Profile } from '../services/profile.ts';
import type { PublicUser } from '../services/users.ts';
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
  /**
   * A client that outlives one command (`dynctl tui`): the session is refreshed whenever its
   * access token expires (at most once per request), not once per client.
   */
  longLived?: boolean;
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
  /** Cancels the request (the TUI's Esc); the rejection is the signal's reason, not a NetworkError. */
  signal?: AbortSignal;
}

/** What the typed calls take: a signal to cancel them. */
export interface CallOptions {
  signal?: AbortSignal;
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
export type { LoginResult };
export type User = PublicUser;
export type UserProfile = Profile;
export interface UserGroup {
  _id: string;
  name: string;
  description?: string;
  permissions: string[];
  isSystem?: boolean;
}
/** GET /api/dashboard/stats (README, Dashboard). */
export interface DashboardStats {
  users: number;
  endpoints: number;
  /** How many of `endpoints` are the platform's own (older servers leave it out). */
  systemEndpoints?: number;
  requests: number;
  errors: number;
  automation: { cronJobs: number; webhooks: number; apiKeys: number; mcpTools: number };
  series: { days: string[]; requests: number[]; errors: number[]; logins: number[]; webhookDeliveries: number[]; cronRuns: number[]; trafficBySource?: Record<string, number[]> };
  /** `failingWebhooks` comes with the webhook routes (hooks with `health: "failing"`). */
  automationHealth: { failedCronJobs: number; failingWebhooks?: number; webhookErrors: number; unusedApiKeys: number };
}
/** POST /api/endpoints/:id/test: the input (all optional) and what the run answered. */
export interface EndpointTestInput {
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  params?: Record<string, string>;
  recordId?: string;
  clientIp?: string;
  applyNetworkAccess?: boolean;
}
export interface EndpointTestResult {
  request: { method: string; path: string; clientIp: string; networkRulesApplied: boolean };
  status: number;
  body: unknown;
  durationMs: number;
}
/** A stored record as the raw collection browser shows it (`endpointdatas`). */
export interface StoredRecord {
  _id: string;
  endpointId: string;
  resourcePath: string;
  data: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  expiresAt?: string | null;
}
export interface PageQuery {
  page?: number;
  limit?: number;
  search?: string;
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
  private readonly longLived: boolean;
  private refreshed = false;
  private sessionEnded = false;
  /** The refresh under way: parallel requests share it (a refresh token works once). */
  private refreshing: Promise<boolean> | undefined;

  constructor(options: ClientOptions) {
    this.server = options.server;
    this.credentials = options.credentials;
    this.onSessionRefreshed = options.onSessionRefreshed;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.longLived = options.longLived ?? false;
    this.notLoggedIn = options.notLoggedIn ?? 'not logged in: run dynctl login, or set DYNCTL_TOKEN or DYNCTL_API_KEY';
  }

  get credentialKind(): Credentials['kind'] {
    return this.credentials.kind;
  }

  /** Signs in again on an existing client (the TUI's password prompt): the new session replaces the old one and is saved. */
  async relogin(login: string, password: string): Promise<LoginResult> {
    const result = await this.login(login, password);
    this.credentials = { kind: 'session', accessToken: result.accessToken, refreshToken: result.refreshToken };
    this.sessionEnded = false;
    this.refreshed = false;
    await this.onSessionRefreshed?.(result);
    return result;
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

  /** GET /api/profile: the signed-in user with their permissions (not for an API key). */
  profile(options: CallOptions = {}): Promise<UserProfile> {
    return this.data<UserProfile>('GET', '/api/profile', options);
  }

  dashboardStats(options: CallOptions = {}): Promise<DashboardStats> {
    return this.data<DashboardStats>('GET', '/api/dashboard/stats', options);
  }

  listApiKeys(options: CallOptions = {}): Promise<ApiKey[]> {
    return this.listAll<ApiKey>('/api/api-keys', {}, options);
  }

  createApiKey(input: ApiKeyInput, options: CallOptions = {}): Promise<CreatedApiKey> {
    return this.data<CreatedApiKey>('POST', '/api/api-keys', { body: input, ...options });
  }

  revokeApiKey(id: string, options: CallOptions = {}): Promise<ApiKey> {
    return this.data<ApiKey>('DELETE', `/api/api-keys/${encodeURIComponent(id)}`, options);
  }

  listCronJobs(options: CallOptions = {}): Promise<CronJob[]> {
    return this.listAll<CronJob>('/api/cron', {}, options);
  }

  /** Runs a job now (by id or name) and answers with the run. */
  runCronJob(idOrName: string, options: CallOptions = {}): Promise<CronRun> {
    return this.data<CronRun>('POST', `/api/cron/${encodeURIComponent(idOrName)}/run`, options);
  }

  cronRuns(idOrName: string, query: { page?: number; limit?: number }, options: CallOptions = {}): Promise<Page<CronRun>> {
    return this.page<CronRun>(`/api/cron/${encodeURIComponent(idOrName)}/runs`, query, options);
  }

  listWebhooks(): Promise<Webhook[]> {
    return this.listAll<Webhook>('/api/webhooks');
  }

  listEndpoints(search?: string, options: CallOptions = {}): Promise<Endpoint[]> {
    return this.listAll<Endpoint>('/api/endpoints', { search }, options);
  }

  getEndpoint(id: string, options: CallOptions = {}): Promise<Endpoint> {
    return this.data<Endpoint>('GET', `/api/endpoints/${encodeURIComponent(id)}`, options);
  }

  /** GET /api/endpoints/:id/examples: sample requests (with bodies) and answers for the definition. */
  endpointExamples(id: string, options: CallOptions = {}): Promise<{ examples?: Array<{ name: string; request: { method: string; url: string; body?: unknown } }> }> {
    return this.data('GET', `/api/endpoints/${encodeURIComponent(id)}/examples`, options);
  }

  /** POST /api/endpoints/:id/test: runs the endpoint as a live call would, as the caller. */
  testEndpoint(id: string, input: EndpointTestInput, options: CallOptions = {}): Promise<EndpointTestResult> {
    return this.data<EndpointTestResult>('POST', `/api/endpoints/${encodeURIComponent(id)}/test`, { body: input, ...options });
  }

  listEndpointGroups(options: CallOptions = {}): Promise<EndpointGroup[]> {
    return this.listAll<EndpointGroup>('/api/endpoints/groups', {}, options);
  }

  /** Stored records whose resource path contains `path` (the raw collection browser; `manage_users`). */
  records(path: string, query: { page?: number; limit?: number }, options: CallOptions = {}): Promise<Page<StoredRecord>> {
    return this.page<StoredRecord>('/api/database/collections/endpointdatas', { ...query, search: path }, options);
  }

  deleteRecord(id: string, options: CallOptions = {}): Promise<unknown> {
    return this.data('DELETE', `/api/database/collections/endpointdatas/${encodeURIComponent(id)}`, options);
  }

  users(query: PageQuery, options: CallOptions = {}): Promise<Page<User>> {
    return this.page<User>('/api/users', { ...query }, options);
  }

  /** PUT /api/users/:id with a new status: disabling ends every session of the user. */
  setUserStatus(id: string, status: User['status'], options: CallOptions = {}): Promise<User> {
    return this.data<User>('PUT', `/api/users/${encodeURIComponent(id)}`, { body: { status }, ...options });
  }

  unlockUser(id: string, options: CallOptions = {}): Promise<User & { wasLocked: boolean }> {
    return this.data('POST', `/api/users/${encodeURIComponent(id)}/unlock`, options);
  }

  listGroups(options: CallOptions = {}): Promise<UserGroup[]> {
    return this.listAll<UserGroup>('/api/groups', {}, options);
  }

  webhooks(query: PageQuery, options: CallOptions = {}): Promise<Page<Webhook>> {
    return this.page<Webhook>('/api/webhooks', { ...query }, options);
  }

  webhookDeliveries(id: string, query: PageQuery, options: CallOptions = {}): Promise<Page<WebhookDelivery>> {
    return this.page<WebhookDelivery>(`/api/webhooks/${encodeURIComponent(id)}/deliveries`, { ...query }, options);
  }

  /** POST /api/webhooks/:id/test: sends a test event now; answers with the delivery. */
  testWebhook(id: string, options: CallOptions = {}): Promise<WebhookDelivery> {
    return this.data<WebhookDelivery>('POST', `/api/webhooks/${encodeURIComponent(id)}/test`, options);
  }

  logs(query: { page?: number; limit?: number; action?: string; search?: string }, options: CallOptions = {}): Promise<Page<LogEntry>> {
    return this.page<LogEntry>('/api/dashboard/logs', query, options);
  }

  /** `data` of GET /api/project/status, or null when this server has no project routes (404). */
  async projectStatus(options: CallOptions = {}): Promise<unknown> {
    const response = await this.request('GET', '/api/project/status', options);
    if (response.status === 404) return null;
    return this.check<unknown>(response, true).data;
  }

  /** POST /api/project/plan: what applying `bundle` would change; writes nothing. */
  planProject(bundle: ProjectBundle, options: { prune: boolean } & CallOptions): Promise<ProjectPlan> {
    return this.data<ProjectPlan>('POST', '/api/project/plan', { body: bundle, query: { prune: String(options.prune) }, signal: options.signal });
  }

  /** POST /api/project/apply (definitions only); `dryRun` is the plan in the same shape. */
  applyProject(bundle: ProjectBundle, options: { prune: boolean; dryRun: boolean } & CallOptions): Promise<ProjectApplyResult> {
    return this.data<ProjectApplyResult>('POST', '/api/project/apply', { body: bundle, query: { prune: String(options.prune), dryRun: String(options.dryRun) }, signal: options.signal });
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

  /**
   * GET /api/project/export as a stream (`jsonl` or `json` with records are written by the server
   * as it reads them): the body is the caller's to read. A non-2xx answer is an ApiError.
   */
  async exportProjectStream(query: ProjectExportQuery & { format: 'yaml' | 'json' | 'jsonl' }, options: CallOptions = {}): Promise<ReadableStream<Uint8Array>> {
    const response = await this.openStream('GET', '/api/project/export', { query: exportQuery(query), ...options });
    if (!response.ok || !response.body) await this.failStream(response);
    return response.body as ReadableStream<Uint8Array>;
  }

  /**
   * POST /api/project/import with a JSON Lines body sent as it is read (any size). The server
   * answers progress lines (records staged, bytes read) to `onProgress`, then the result line.
   */
  async importProjectStream(body: ReadableStream<Uint8Array>, options: { mode: 'merge' | 'replace'; onProgress?: (progress: { records: number; bytes: number }) => void } & CallOptions): Promise<ProjectImportResult> {
    const response = await this.openStream('POST', '/api/project/import', {
      query: { mode: options.mode },
      headers: { 'content-type': 'application/x-ndjson', accept: 'application/x-ndjson' },
      body,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (!response.ok || !response.body) await this.failStream(response);
    if (!/ndjson/.test(response.headers.get('content-type') ?? '')) {
      const text = await response.text();
      return this.check<ProjectImportResult>({ status: response.status, statusText: response.statusText, headers: {}, body: parseJson(text), text, durationMs: 0 }, true).data;
    }
    let last: unknown;
    let pending = '';
    const decoder = new TextDecoder();
    const take = (line: string): void => {
      if (line.trim() === '') return;
      const value = JSON.parse(line) as { progress?: { records: number; bytes: number } };
      if (value.progress) options.onProgress?.(value.progress);
      else last = value;
    };
    try {
      for await (const chunk of response.body as ReadableStream<Uint8Array>) {
        pending += decoder.decode(chunk, { stream: true });
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        lines.forEach(take);
      }
      take(pending + decoder.decode());
    } catch (error) {
      throw new NetworkError(`the connection to ${this.server} ended before the import's result: ${(error as Error).message}`);
    }
    const result = last as { success?: boolean; data?: ProjectImportResult; error?: unknown; details?: unknown; status?: number } | undefined;
    if (result?.success === true && result.data) return result.data;
    if (result?.success === false) return unwrap<never>({ status: result.status ?? 500, statusText: '', headers: {}, body: result, text: '', durationMs: 0 }).data;
    throw new NetworkError(`the connection to ${this.server} ended before the import's result`);
  }

  // ---- building blocks -------------------------------------------------------------------

  /**
   * A request whose body or answer is streamed: the credentials as for `request` (an expired
   * session is refreshed before sending: a streamed body cannot be sent twice), no overall timeout.
   */
  private async openStream(method: string, path: string, options: { query?: RequestOptions['query']; headers?: Record<string, string>; body?: ReadableStream<Uint8Array>; signal?: AbortSignal }): Promise<Response> {
    if (this.credentials.kind === 'session' && this.mayRefresh() && tokenExpired(this.credentials.accessToken)) await this.refreshSession();
    const headers: Record<string, string> = { accept: 'application/json', ...authHeaders(this.credentials) };
    for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
    const init: RequestInit & { duplex?: 'half' } = { method, headers, redirect: 'manual', ...(options.signal ? { signal: options.signal } : {}) };
    if (options.body) {
      init.body = options.body;
      init.duplex = 'half';
    }
    try {
      return await fetch(this.url(path, options.query), init);
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      throw new NetworkError(describeNetworkError(error, this.server, 0));
    }
  }

  /** Reads a failed streamed answer and throws it as check() would. */
  private async failStream(response: Response): Promise<never> {
    const text = await response.text().catch(() => '');
    const raw: RawResponse = { status: response.status, statusText: response.statusText, headers: Object.fromEntries(response.headers.entries()), body: parseJson(text), text, durationMs: 0 };
    this.check<never>(raw.status >= 200 && raw.status < 300 ? { ...raw, status: 502 } : raw, true);
    throw new ApiError(502, `unexpected answer from the server (HTTP ${response.status})`);
  }

  /** Calls a management route and returns `data`; any non-2xx answer is an ApiError. */
  async data<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return this.check<T>(await this.request(method, path, options), options.auth !== false).data;
  }

  async page<T>(path: string, query: Record<string, string | number | undefined> = {}, options: CallOptions = {}): Promise<Page<T>> {
    const { data, meta } = this.check<T[]>(await this.request('GET', path, { query, signal: options.signal }), true);
    return {
      items: data,
      page: Number(meta?.page ?? query.page ?? 1),
      limit: Number(meta?.limit ?? data.length),
      total: Number(meta?.total ?? data.length),
    };
  }

  /** Every page of a paged list route. */
  async listAll<T>(path: string, query: Record<string, string | number | undefined> = {}, options: CallOptions = {}): Promise<T[]> {
    const items: T[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      const result = await this.page<T>(path, { ...query, page, limit: PAGE_LIMIT }, options);
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
    let refreshedNow = false;
    if (auth && this.credentials.kind === 'session' && this.mayRefresh() && tokenExpired(this.credentials.accessToken)) {
      refreshedNow = true;
      await this.refreshSession();
    }
    const response = await this.send(method, path, options, auth);
    if (response.status === 401 && auth && this.credentials.kind === 'session' && this.mayRefresh() && !refreshedNow) {
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

  /** Once per client for a command; for a long-lived client, whenever the session is not known to have ended. */
  private mayRefresh(): boolean {
    return this.longLived ? !this.sessionEnded : !this.refreshed;
  }

  /** Exchanges the refresh token for a new pair; false when the server refuses it (session over). */
  private refreshSession(): Promise<boolean> {
    this.refreshing ??= this.exchangeRefreshToken().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async exchangeRefreshToken(): Promise<boolean> {
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
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      const init: RequestInit & { duplex?: 'half' } = { method, headers, body, redirect: 'manual', signal };
      if (typeof body === 'object') init.duplex = 'half';
      response = await fetch(url, init);
      text = options.onDownloadProgress ? await readWithProgress(response, options.onDownloadProgress) : await response.text();
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason ?? error;
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
