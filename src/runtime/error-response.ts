// The one mapping from a failure to what a client sees, shared by the management routes (the
// HTTP error handler) and every dynamic call (the engine), so both answer a failure alike:
//
// | failure                                   | status      | error message                      | headers
// |-------------------------------------------|-------------|------------------------------------|-----------------
// | AppError                                  | its own     | its own (+ details)                | its own (Allow, Retry-After)
// | InvalidFilterError                        | 400         | its own                            |
// | DuplicateKeyError                         | 409         | A record with these values already exists |
// | StoreError busy                           | 503         | The database is busy; try again    | Retry-After: 1
// | StoreError unavailable                    | 503         | The database is unavailable        | Retry-After: 5
// | handler threw / stopped / bad result      | 500         | the handler's own message          |
// | an HTTP error with a 4xx status (Koa's)   | its own     | its message if exposed, else "Bad request" |
// | anything else (StoreError internal too)   | 500         | Internal server error              |
//
// `log` says what the caller should log: unexpected failures are errors (stack in the server log
// only), handler failures are warnings about an administrator's code.
import { AppError, type ErrorDetail } from '../lib/errors.ts';
import { HandlerError, HandlerMemoryError, HandlerResultError, HandlerTimeoutError } from '../sandbox/handler-errors.ts';
import { DuplicateKeyError, InvalidFilterError, StoreError } from '../store/types.ts';

export interface ErrorResponse {
  status: number;
  body: { success: false; error: string; details?: ErrorDetail[] };
  headers: Record<string, string>;
  log: 'error' | 'warn' | null;
}

const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

function response(status: number, message: string, options: { details?: ErrorDetail[] | undefined; headers?: Record<string, string> | undefined; log?: ErrorResponse['log'] } = {}): ErrorResponse {
  return {
    status,
    body: { success: false, error: message, ...(options.details ? { details: options.details } : {}) },
    headers: options.headers ?? NO_HEADERS,
    log: options.log ?? null,
  };
}

export function errorResponse(error: unknown): ErrorResponse {
  if (error instanceof AppError) return response(error.status, error.message, { details: error.details, headers: error.headers });
  if (error instanceof InvalidFilterError) return response(400, error.message);
  if (error instanceof DuplicateKeyError) return response(409, 'A record with these values already exists');
  if (error instanceof StoreError && error.code === 'busy') return response(503, 'The database is busy; try again', { headers: { 'Retry-After': '1' } });
  if (error instanceof StoreError && error.code === 'unavailable') return response(503, 'The database is unavailable', { headers: { 'Retry-After': '5' } });
  // A handler's message is the administrator's own text, never host details (see handler-errors.ts).
  if (error instanceof HandlerError || error instanceof HandlerTimeoutError || error instanceof HandlerMemoryError || error instanceof HandlerResultError) {
    return response(500, error.message, { log: 'warn' });
  }
  const httpError = error as { status?: unknown; expose?: unknown } | null;
  if (typeof httpError?.status === 'number' && httpError.status >= 400 && httpError.status < 500) {
    return response(httpError.status, httpError.expose ? String((error as Error).message) : 'Bad request');
  }
  return response(500, 'Internal server error', { log: 'error' });
}

/**
 * The answer for a path nothing serves with this method: 404 when nothing serves it at all, a
 * 405 naming the methods that do (`Allow`), and for OPTIONS a 204 with `Allow`. Used for
 * management paths (the HTTP layer) and dynamic paths (the engine) alike.
 */
export function notServed(method: string, path: string, allowed: readonly string[]): ErrorResponse | { status: 204; body: null; headers: Record<string, string>; log: null } {
  if (allowed.length === 0) return response(404, path.startsWith('/api') ? `No route for ${method} ${path}` : 'Not found');
  const headers = { Allow: allowed.join(', ') };
  if (method === 'OPTIONS') return { status: 204, body: null, headers, log: null };
  return response(405, `Method ${method} is not allowed on ${path}`, { headers });
}
