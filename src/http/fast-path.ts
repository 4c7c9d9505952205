// Dynamic reads without Koa. GET and HEAD on a dynamic endpoint are what a deployed service
// serves most, and the management chain's middleware (admin UI, body parsing, CSRF, the router)
// does nothing for them but cost. This request listener answers them on node:http directly, by
// the same steps the Koa chain takes for such a request, in its order:
//
// | Koa middleware       | here                                                               |
// |----------------------|--------------------------------------------------------------------|
// | securityHeaders      | the same pairs (securityHeaderPairs), first                        |
// | errorHandler         | a failure is rendered by errorResponse, a 5xx logged and audited   |
// | cors                 | corsPolicy.headersFor (a GET/HEAD is never a preflight)             |
// | requestContext       | settings (peeked, loaded if stale) and clientIpOf                  |
// | rateLimit            | the same limiter, headers and 429                                  |
// | adminUi, jsonBody,   | nothing to do: /admin is a reserved path (handed to Koa), reads     |
// | csrfProtection       | carry no body, CSRF guards unsafe methods only                     |
// | authenticate         | resolveCredentials, the function the middleware calls              |
// | dynamicEndpoints     | engine.handle, then the response Koa would write, headers at once  |
//
// Everything else — other methods (OPTIONS and preflights too), management and admin paths, a
// URL that is not a plain origin-form path — goes to Koa's callback untouched, before anything is
// counted. Revisions are checked by engine.handle exactly as on the Koa path, so a definition saved
// on another instance is served on the next request. test/http/fast-path.test.ts sends the same
// requests both ways and compares status, headers and body byte for byte.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import { clientIpOf } from '../lib/client-ip.ts';
import { tooManyRequests } from '../lib/errors.ts';
import type { Logger } from '../lib/logger.ts';
import { isReservedConcretePath } from '../model/reserved-paths.ts';
import type { Engine, EngineRequest, EngineResponse } from '../runtime/engine.ts';
import { errorResponse } from '../runtime/error-response.ts';
import { JsonText } from '../runtime/json-text.ts';
import type { Principal } from '../model/principal.ts';
import type { RateLimiter } from '../services/rate-limiter.ts';
import type { ActiveSettings, SettingsService } from '../services/settings.ts';
import { ACCESS_COOKIE, resolveCredentials, type AuthDeps, type Credentials } from './middleware/authenticate.ts';
import { corsPolicy } from './middleware/cors.ts';
import { securityHeaderPairs } from './middleware/security-headers.ts';
import { recordFailure } from './record-failure.ts';

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

export interface FastPathDeps extends AuthDeps {
  engine: Engine;
  settings: SettingsService;
  rateLimiter: RateLimiter;
  logger: Logger;
  config: { nodeEnv: string; corsOrigins: readonly string[] };
}

/** Characters after which parseurl (Koa's URL parser) takes its slow path; such URLs go to Koa. */
const UNUSUAL_URL = /[\t\n\f\r #\u00a0\ufeff]/;
/** Statuses sent without a body (Koa strips the body and its headers). */
const EMPTY_STATUS = new Set([204, 205, 304]);
const JSON_TYPE = 'application/json; charset=utf-8';
const NO_QUERY: Record<string, string | string[] | undefined> = Object.freeze({}) as Record<string, string | string[] | undefined>;

/** One request on its way through the fast path: what its steps read and what they learn. */
interface Call {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  readonly path: string;
  readonly queryString: string | null;
  /** The response's header list so far, as Koa's middleware would have set it. */
  readonly head: string[];
  ip: string;
  principal: Principal | undefined;
}

/** A listener that answers dynamic GET and HEAD requests itself and hands every other request to `fallback` (Koa). */
export function dynamicFastPath(deps: FastPathDeps, fallback: RequestListener): RequestListener {
  const security = securityHeaderPairs({ production: deps.config.nodeEnv === 'production' }).flat();
  const cors = corsPolicy(deps.config.corsOrigins);

  /**
   * Answers one request. Each step answers at once where it can (settings and the route table
   * current, credentials that need no lookup, a record read from the embedded store), so a GET by
   * id is answered without a promise; from the first step that must wait, the rest runs
   * asynchronously and the promise is returned.
   */
  const answer = (call: Call): Promise<void> | undefined => {
    try {
      const settings = deps.settings.peek();
      const pending = settings === null ? deps.settings.get().then((loaded) => admit(call, loaded)) : admit(call, settings);
      return pending?.catch((error: unknown) => fail(call, error));
    } catch (error) {
      fail(call, error);
      return undefined;
    }
  };

  /** Client address, rate limit, credentials: what the Koa chain does before the endpoint. */
  const admit = (call: Call, settings: ActiveSettings): Promise<void> | undefined => {
    const headers = call.req.headers;
    call.ip = clientIpOf(call.req.socket, (headers['x-forwarded-for'] as string | undefined) || undefined, settings.trustedProxyMatcher);
    if (settings.rateLimitEnabled) {
      const decision = deps.rateLimiter.hit(call.ip, settings.rateLimitMax, settings.rateLimitWindowSeconds);
      call.head.push('RateLimit-Limit', String(settings.rateLimitMax), 'RateLimit-Remaining', String(decision.remaining));
      if (!decision.allowed) throw tooManyRequests('Too many requests; slow down', decision.retryAfterSeconds);
    }
    const credentials = resolveCredentials(deps, {
      authorization: headers.authorization ?? '',
      apiKeyHeader: (headers['x-api-key'] as string | undefined) ?? '',
      cookie: () => readCookie(headers.cookie, ACCESS_COOKIE),
      ip: call.ip,
      method: call.method,
      path: call.path,
    });
    return credentials instanceof Promise ? credentials.then((resolved) => dispatch(call, settings, resolved)) : dispatch(call, settings, credentials);
  };

  /** The engine's answer: at once where it gives one (`handleNow`), else through `handle`. */
  const dispatch = (call: Call, settings: ActiveSettings, credentials: Credentials): Promise<void> | undefined => {
    call.principal = credentials.principal;
    const request: EngineRequest = {
      method: call.method,
      path: call.path,
      headers: call.req.headers as Record<string, string | undefined>,
      query: call.queryString ? parseQuery(call.queryString) : NO_QUERY,
      body: undefined,
      ip: call.ip,
      principal: call.principal,
      authError: credentials.authError,
      settings,
      acceptsJsonText: true,
      source: 'http',
    };
    const now = deps.engine.handleNow(request);
    if (now === null) return deps.engine.handle(request).then((response) => send(call.res, call.method, call.head, response));
    send(call.res, call.method, call.head, now);
    return undefined;
  };

  /** A failure before or while answering, rendered and recorded as Koa's error handler would (recordFailure). */
  const fail = (call: Call, error: unknown): void => {
    const rendered = errorResponse(error);
    const refused = { method: call.method, path: call.path, ip: call.ip, principal: call.principal, settings: deps.settings.peek() ?? undefined };
    void recordFailure(deps, refused, rendered, error);
    if (!call.res.headersSent) send(call.res, call.method, call.head, rendered);
  };

  // Only writing the answer itself can fail here (`answer` renders the failures before it).
  const lost = (call: Call, error: unknown): void => {
    deps.logger.error('request failed', { method: call.method, path: call.path, error });
    if (!call.res.headersSent) call.res.destroy();
  };

  return (req, res) => {
    const method = req.method;
    const url = req.url;
    if ((method !== 'GET' && method !== 'HEAD') || url === undefined || url.charCodeAt(0) !== 47 /* / */ || UNUSUAL_URL.test(url)) {
      fallback(req, res);
      return;
    }
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (isReservedConcretePath(path)) {
      fallback(req, res);
      return;
    }
    // The header list as Koa's middleware would have set it: security, then CORS, then rate limit.
    const head = security.slice();
    const corsPairs = cors.headersFor(req.headers.origin);
    if (corsPairs) for (const [name, value] of corsPairs) head.push(name, value);
    const call: Call = { req, res, method, path, queryString: q === -1 ? null : url.slice(q + 1), head, ip: req.socket.remoteAddress ?? '', principal: undefined };
    try {
      answer(call)?.catch((error: unknown) => lost(call, error));
    } catch (error) {
      lost(call, error);
    }
  };
}

/**
 * Writes what Koa writes for the same response: the headers set so far, the response's own
 * (`Allow`, `Retry-After`), then the body's type and length — a JSON body as JSON.stringify
 * writes it, JSON text as it is, no body (but its length) for HEAD, none at all for an empty status.
 */
function send(res: ServerResponse, method: string, head: string[], response: Pick<EngineResponse, 'status' | 'body' | 'headers'>): void {
  const status = response.status;
  if (response.headers) for (const name in response.headers) head.push(name, response.headers[name] as string);
  if (EMPTY_STATUS.has(status)) {
    res.writeHead(status, head);
    res.end();
    return;
  }
  const body = response.body;
  let text: string;
  if (body instanceof JsonText) {
    text = body.text;
    head.push('Content-Type', JSON_TYPE);
  } else if (body === null || body === undefined) {
    // Koa's answer for a status without a body: its message as text.
    text = STATUS_CODES[status] ?? String(status);
    head.push('Content-Type', 'text/plain; charset=utf-8');
  } else {
    text = JSON.stringify(body);
    head.push('Content-Type', JSON_TYPE);
  }
  head.push('Content-Length', String(Buffer.byteLength(text)));
  res.writeHead(status, head);
  if (method === 'HEAD') res.end();
  else res.end(text);
}

/** The query as Koa parses it (URLSearchParams; a repeated name is an array). */
function parseQuery(queryString: string): Record<string, string | string[]> {
  const params = new URLSearchParams(queryString);
  const query: Record<string, string | string[]> = {};
  for (const key of params.keys()) {
    if (Object.hasOwn(query, key)) continue;
    const values = params.getAll(key);
    Object.defineProperty(query, key, { value: values.length <= 1 ? values[0] : values, writable: true, enumerable: true, configurable: true });
  }
  return query;
}

/** A cookie's value as the `cookies` package (Koa's ctx.cookies) reads an unsigned one. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  const match = cookiePattern(name).exec(header);
  if (!match) return undefined;
  const value = match[1] as string;
  return value[0] === '"' ? value.slice(1, -1) : value;
}

const patterns = new Map<string, RegExp>();
function cookiePattern(name: string): RegExp {
  let pattern = patterns.get(name);
  if (!pattern) {
    pattern = new RegExp(`(?:^|;) *${name.replace(/[|\\{}()[\]^$+*?.]/g, '\\$&')}=([^;]*)`);
    patterns.set(name, pattern);
  }
  return pattern;
}
