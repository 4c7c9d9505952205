/**
 * The contract between the engine and the handler sandbox: what a handler receives, what it may call
 * on the host, and what it must return. Everything crossing the boundary is plain JSON.
 */

/** Settings `handlerMemoryMb` (default 64) and `handlerTimeoutMs` (default 5000). */
export interface HandlerLimits {
  /** Heap limit of each of the handler's isolates, shared by the runs in it (isolated-vm minimum: 8). */
  memoryMb: number;
  /** Wall-clock budget of one run, including the time its db calls take. */
  timeoutMs: number;
  /** How long an extra isolate stays unused before it is disposed (default 30 s). */
  idleIsolateMs?: number;
}

/**
 * How many db calls one run may have under way at once (started and not yet answered). A handler that
 * awaits its calls, even in batches, stays far below it; one that starts calls in a loop without
 * awaiting them would otherwise queue work on the host past its own time limit (README: handler limits).
 */
export const MAX_PENDING_DB_CALLS = 1000;

/**
 * The largest answer a handler may give, in characters of its data's JSON (16 Mi). The host
 * parses the answer and writes it again, several times its size in memory; without a bound a
 * few calls to a handler answering hundreds of MB took the process to gigabytes.
 */
export const MAX_HANDLER_ANSWER_CHARS = 16 * 1024 * 1024;

export interface HandlerUser {
  id: string;
  login: string;
  groupIds: string[];
}

export interface HandlerRequest {
  method: string;
  path: string;
  /** The path's `:params`, plus `id` = the record id on an item route unless the path has an `:id` of its own. */
  params: Record<string, string>;
  /** The record id of an item route (`M P/:id`), null on `M P`. */
  recordId: string | null;
  query: Record<string, string | string[]>;
  body: unknown;
  user: HandlerUser | null;
  headers: Record<string, string>;
}

export interface HandlerFindOptions {
  limit?: number;
  skip?: number;
  sort?: Record<string, 1 | -1>;
}

/** Host side, supplied per call and scoped by the engine to the endpoint's resourcePath; all values JSON. */
export interface HandlerDb {
  findOne(filter: Record<string, unknown>): Promise<unknown>;
  find(filter: Record<string, unknown>, options?: HandlerFindOptions): Promise<unknown[]>;
  create(data: Record<string, unknown>): Promise<unknown>;
  update(id: string, data: Record<string, unknown>): Promise<unknown>;
  delete(id: string): Promise<boolean>;
}

export interface HandlerResult {
  status: number;
  data: unknown;
}

export interface CompiledHandler {
  /** Runs the handler once in a fresh context. Rejects with one of the Handler*Error classes. */
  run(request: HandlerRequest, db: HandlerDb): Promise<HandlerResult>;
  /** Releases the isolate once in-flight runs have settled; later runs are refused. Idempotent. */
  dispose(): void;
}
