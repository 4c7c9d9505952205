/**
 * What can go wrong with an administrator's handler. HandlerCompileError is a client error (the code
 * was rejected at save time) and HandlerDbError a unique clash a db write reported (an AppError, 409);
 * the others describe one run and are 5xx material for the engine.
 */
import { AppError } from '../lib/errors.ts';

/** The code does not compile (or does not define `handler`). Thrown by compileHandler, at save time. */
export class HandlerCompileError extends AppError {
  readonly line: number | undefined;
  readonly column: number | undefined;

  constructor(message: string, position: { line?: number; column?: number } = {}) {
    super(400, message, { details: [{ field: 'handler.code', message }] });
    this.name = 'HandlerCompileError';
    this.line = position.line;
    this.column = position.column;
  }
}

/**
 * The handler threw. The message is the handler's own; the stack holds only frames of the handler's
 * code (`handler.js:line:column`), never host frames or file paths.
 */
export class HandlerError extends Error {
  constructor(message: string, handlerFrames: readonly string[] = []) {
    super(message);
    this.name = 'HandlerError';
    this.stack = [`${this.name}: ${message}`, ...handlerFrames.map((frame) => `    ${frame}`)].join('\n');
  }
}

/**
 * A db write was refused because it repeats a unique value, and the handler let it escape. It
 * answers as the same write would on a plain endpoint: 409 and the message naming the field. A
 * handler that wants another answer catches it (the error carries `status` in the sandbox).
 */
export class HandlerDbError extends AppError {
  constructor(status: number, message: string) {
    super(status, message);
    this.name = 'HandlerDbError';
  }
}

/** The run exceeded `timeoutMs` (busy loop, slow or never-settling promise, slow db calls). */
export class HandlerTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HandlerTimeoutError';
  }
}

/** The isolate exceeded `memoryMb` and was discarded; the next run gets a fresh one. */
export class HandlerMemoryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HandlerMemoryError';
  }
}

/** The handler returned something other than `{ status: integer 200-599, data: JSON }`. */
export class HandlerResultError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HandlerResultError';
  }
}

/** isolated-vm's own timeout stopped the code (the isolate stays usable). */
export function isTimedOut(error: unknown): boolean {
  return error instanceof Error && error.message === 'Script execution timed out.';
}

/** Keeps the frames of a sandbox stack that point into the handler's code (named `handler.js`). */
export function handlerFrames(stack: unknown, filename: string): string[] {
  if (typeof stack !== 'string') return [];
  return stack
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('at ') && line.includes(`${filename}:`))
    .slice(0, 20);
}
