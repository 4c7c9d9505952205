/**
 * Exit codes, one per kind of failure, so scripts can tell them apart:
 *
 * | code | meaning                                                                 |
 * |------|-------------------------------------------------------------------------|
 * | 0    | success                                                                 |
 * | 1    | validation failure, differences found, apply failed, other 4xx answers  |
 * | 2    | usage: unknown command or flag, bad flag value                          |
 * | 3    | authentication: not logged in, 401 or 403 from the server               |
 * | 4    | server or network: connection refused, timeout, 5xx                     |
 * | 130  | interrupted at a prompt (Ctrl-C), as shells report SIGINT               |
 */
export const EXIT = { ok: 0, failure: 1, usage: 2, auth: 3, server: 4, interrupted: 130 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * A failure with its exit code and a one-line message for the user. `resultPrinted`: the
 * command has already printed its result (`dynctl call` showing a 404), so with --json no
 * `{"error"}` document follows it on stdout — only the line on stderr.
 */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  readonly resultPrinted: boolean;
  constructor(message: string, exitCode: ExitCode = EXIT.failure, options: { resultPrinted?: boolean } = {}) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
    this.resultPrinted = options.resultPrinted ?? false;
  }
}

export const usageError = (message: string): CliError => new CliError(message, EXIT.usage);
export const authError = (message: string): CliError => new CliError(message, EXIT.auth);

/** The server answered with an error status. */
export class ApiError extends Error {
  readonly status: number;
  readonly details: Array<{ field: string; message: string }> | undefined;
  constructor(status: number, message: string, details?: Array<{ field: string; message: string }>) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.details = details;
  }
}

/** The server could not be reached (refused, reset, timed out, bad address). */
export class NetworkError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NetworkError';
  }
}

export function exitCodeForStatus(status: number): ExitCode {
  if (status < 400) return EXIT.ok;
  if (status === 401 || status === 403) return EXIT.auth;
  if (status >= 500) return EXIT.server;
  return EXIT.failure;
}

export function exitCodeOf(error: unknown): ExitCode {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof ApiError) return exitCodeForStatus(error.status);
  if (error instanceof NetworkError) return EXIT.server;
  return EXIT.failure;
}

/**
 * One line, whatever the error. For a server refusal: its message, the first validation detail
 * the message does not already say, and the status. A message that ends in a colon (a parser's
 * `... at line 2, column 1:` whose excerpt the server left out) loses the colon.
 */
export function messageOf(error: unknown): string {
  if (error instanceof ApiError) {
    const detail = error.details?.find((d) => !error.message.includes(d.message));
    const message = error.message.replace(/:\s*$/, '');
    const text = detail ? `${message} (${detail.field}: ${detail.message})` : message;
    return `${text} [HTTP ${error.status}]`;
  }
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] || 'unknown error';
}
