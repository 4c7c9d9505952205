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
// | requestContext       | settings (peeked, loaded if stale) and resolveClientIp             |
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
import { resolveClientIp } from '../lib/client-ip.ts';
import { tooManyRequests } from '../lib/errors.ts';
import type { Logger } from '../lib/logger.ts';
import { isReservedConcretePath } from '../model/reserved-paths.ts';
import type { Engine, EngineResponse } from '../runtime/engine.ts';
import { errorResponse } from '../runtime/error-response.ts';
import { JsonText } from '../runtime/json-text.ts';
import type { Principal } from '../model/principal.ts';
import type { RateLimiter } from '../services/rate-limiter.ts';
import type { SettingsService } from '../services/settings.ts';
import { ACCESS_COOKIE, resolveCredentials, type AuthDeps } from './middleware/authenticate.ts';
import { corsPolicy } from './middleware/cors.ts';
import { securityHeaderPairs } from './middleware/security-headers.ts';

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

/** A listener that answers dynamic GET and HEAD requests itself and hands every other request to `fallback` (Koa). */
export function dynamicFastPath(deps: FastPathDeps, fallback: RequestListener): RequestListener {
  const security = securityHeaderPairs({ production: deps.config.nodeEnv === 'production' }).flat();
  const cors = corsPolicy(deps.config.corsOrigins);

  const answer = async (req: IncomingMessage, res: ServerResponse, method: string, path: string, queryString: string | null): Promise<void> => {
    const headers = req.headers;
    // The header list as Koa's middleware would have set it: security, then CORS, then rate limit.
    const head = security.slice();
    const corsPairs = cors.headersFor(headers.origin);
    if (corsPairs) for (const [name, value] of corsPairs) head.push(name, value);
    let ip = req.socket.remoteAddress ?? '';
    let principal: Principal | undefined;
    try {
      const settings = deps.settings.peek() ?? (await deps.settings.get());
      const forwardedFor = headers['x-forwarded-for'] as string | undefined;
      ip = resolveClientIp(req.socket.remoteAddress, forwardedFor || undefined, settings.trustedProxyMatcher);
      if (settings.rateLimitEnabled) {
        const decision = deps.rateLimiter.hit(ip, settings.rateLimitMax, settings.rateLimitWindowSeconds);
        head.push('RateLimit-Limit', String(settings.rateLimitMax), 'RateLimit-Remaining', String(decision.remaining));
        if (!decision.allowed) throw tooManyRequests('Too many requests; slow down', decision.retryAfterSeconds);
      }
      const pending = resolveCredentials(deps, {
        authorization: headers.authorization ?? '',
        apiKeyHeader: (headers['x-api-key'] as string | undefined) ?? '',
        cookie: () => readCookie(headers.cookie, ACCESS_COOKIE),
        ip,
        method,
        path,
      });
      const credentials = pending instanceof Promise ? await pending : pending;
      principal = credentials.principal;
      const response = await deps.engine.handle({
        method,
        path,
        headers: headers as Record<string, string | undefined>,
        query: queryString ? parseQuery(queryString) : NO_QUERY,
        body: undefined,
        ip,
        principal,
        authError: credentials.authError,
        settings,
        acceptsJsonText: true,
        source: 'http',
      });
      send(res, method, head, response);
    } catch (error) {
      const rendered = errorResponse(error);
      if (rendered.status >= 500) {
        deps.logger.error('request failed', { method, path, error });
        deps.audit.enqueue({
          action: 'error',
          message: `${method} ${path} failed with ${rendered.status}`,
          source: 'http',
          ip,
          userId: principal?.kind === 'user' ? principal.userId : null,
          method,
          path,
          statusCode: rendered.status,
        });
      }
      if (!res.headersSent) send(res, method, head, rendered);
    }
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
    answer(req, res, method, path, q === -1 ? null : url.slice(q + 1)).catch((error: unknown) => {
      // Only writing the answer itself can fail here (failures before it are rendered above).
      deps.logger.error('request failed', { method, path, error });
      if (!res.headersSent) res.destroy();
    });
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
