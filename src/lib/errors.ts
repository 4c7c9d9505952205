/** One error type for everything a client may be told about. 5xx messages are never shown. */
export interface ErrorDetail {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly status: number;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(status: number, message: string, options: { details?: ErrorDetail[]; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = 'AppError';
    this.status = status;
    this.details = options.details;
    this.headers = options.headers;
  }
}

export const badRequest = (message: string, details?: ErrorDetail[]): AppError =>
  new AppError(400, message, details ? { details } : {});
/** What a 401 must name (RFC 9110): the schemes that authenticate, a JWT and an API key. */
export const AUTH_CHALLENGE = 'Bearer realm="dyn", ApiKey realm="dyn"';
export const unauthorized = (message = 'Authentication required'): AppError => new AppError(401, message, { headers: { 'WWW-Authenticate': AUTH_CHALLENGE } });
export const forbidden = (message = 'Forbidden: insufficient permissions'): AppError => new AppError(403, message);
export const notFound = (message = 'Not found'): AppError => new AppError(404, message);
export const conflict = (message: string): AppError => new AppError(409, message);
export const tooManyRequests = (message: string, retryAfterSeconds: number): AppError =>
  new AppError(429, message, { headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) } });
