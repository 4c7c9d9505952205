/**
 * Runs administrators' endpoint handlers in isolated-vm.
 *
 * Lifecycle, compiled once per code revision:
 *   compileHandler   → one isolate (memoryMb) + the compiled handler script + the compiled prelude.
 *                      A syntax error is a HandlerCompileError here, at save time.
 *   run (each call)  → a fresh Context in one of the handler's isolates: prelude, then the handler's
 *                      code, then `invoke`. Nothing survives a call; the context, references and db
 *                      bridge are released in `finally`. Code runs on the isolate's own thread, never
 *                      the host's.
 *   pool             → a run takes an isolate no other run is using; while every isolate is busy, a new
 *                      one is opened, up to MAX_ISOLATES (fewer for large memoryMb, so one handler's
 *                      isolates stay within ISOLATE_POOL_MB together). So a run that loops until its time
 *                      limit or runs out of memory takes down only its own isolate, not the runs beside
 *                      it. Past that, runs share the least busy isolate (and its heap, hence a cap on
 *                      how many execute in one). An isolate is busy while a run uses it and while an
 *                      answered run's db calls may still resume code in it (a call it did not await).
 *                      An isolate idle for IDLE_ISOLATE_MS is disposed, except the last one.
 *   dispose          → the isolates are disposed once in-flight runs have settled.
 *
 * Limits:
 *   - Every piece of the handler's code runs inside a host call that carries isolated-vm's `timeout`,
 *     which stops it and leaves the isolate usable: the top level, the handler up to its first db call,
 *     and each resumption by a db reply (delivered by the db bridge, see db-bridge.ts), with the
 *     microtasks that follow each.
 *   - A promise that never settles runs no code but would keep the run waiting; so would code that
 *     isolated-vm somehow fails to stop. A host watchdog (timeoutMs + a small grace, so the gentler
 *     path above wins when it applies) therefore fails the run and disposes the isolate, which also
 *     rejects promises the host would otherwise wait on forever.
 *   - Running out of memory makes isolated-vm dispose the isolate itself.
 *   A disposed isolate is replaced lazily by a later run. Runs that shared it (only when more runs were
 *   under way than the pool has isolates) fail with the same kind of error: that is the price of a
 *   bounded pool instead of creating an isolate (~2.5 ms) per call.
 *
 *   - A db call still under way when its run answers (the handler did not await it) resumes handler code
 *     with no run waiting for it: the bridge delivers that reply with the time limit counted from the
 *     answer, so the resumed code is stopped like a run that loops; calls it starts are never done.
 *   - What one run may have in flight on the host is capped (MAX_PENDING_DB_CALLS), and calls arriving
 *     past the run's deadline are dropped, so a run cannot keep the server busy beyond its time limit.
 */
import ivm from 'isolated-vm';
import { openDbBridge, type DbDeliver } from './db-bridge.ts';
import {
  HandlerCompileError,
  HandlerDbError,
  HandlerError,
  HandlerMemoryError,
  HandlerResultError,
  HandlerTimeoutError,
  handlerFrames,
  isTimedOut,
} from './handler-errors.ts';
import { RunSlots } from './run-slots.ts';
import { HANDLER_FILENAME, PRELUDE_FILENAME, PRELUDE_SOURCE, type Envelope } from './handler-prelude.ts';
import { MAX_HANDLER_ANSWER_CHARS, type CompiledHandler, type HandlerDb, type HandlerLimits, type HandlerRequest, type HandlerResult } from './handler-types.ts';

export * from './handler-types.ts';
export { HandlerCompileError, HandlerDbError, HandlerError, HandlerMemoryError, HandlerResultError, HandlerTimeoutError } from './handler-errors.ts';

/** How long the watchdog waits past timeoutMs, so isolated-vm's own (non-destructive) timeout fires first. */
const WATCHDOG_GRACE_MS = 50;
/**
 * Heap budgeted per concurrently executing run: a context alone takes ~170 KB, and without a cap a burst
 * of a few hundred concurrent calls exhausts the shared heap and every one of them fails. Runs beyond
 * memoryMb / MB_PER_RUN wait for a slot (their time limit keeps running), so overload becomes timeouts.
 * A released context's memory comes back only when the isolate collects it, which lags behind under
 * CPU pressure: 2 MB per run still ran a busy 32 MB isolate out of memory, hence the wide margin.
 */
const MB_PER_RUN = 4;
/** At most this many isolates per compiled handler... */
const MAX_ISOLATES = 4;
/** ...and at most this much memory limit across them (a handler given 256 MB or more has one isolate). */
const ISOLATE_POOL_MB = 256;
/** An isolate idle this long is disposed, unless it is the handler's last one. */
const IDLE_ISOLATE_MS = 30_000;
/** isolated-vm refuses smaller heaps. */
const MIN_MEMORY_MB = 8;
/** A cheap save-time check; code that defines `handler` some other way still runs. */
const DEFINES_HANDLER = /\bfunction\s+handler\s*\(|\b(?:const|let|var)\s+handler\s*=/;

/**
 * Every isolate this process opened that may still be live, for `liveIsolateCount` (how tests and
 * operators see that isolates are released). Disposed ones are pruned when counted, and whenever
 * the set has doubled since the last prune, so it stays as small as the live isolates.
 */
const opened = new Set<ivm.Isolate>();
let pruneAt = 64;

function track(isolate: ivm.Isolate): ivm.Isolate {
  opened.add(isolate);
  if (opened.size >= pruneAt) pruneAt = Math.max(64, 2 * liveIsolateCount());
  return isolate;
}

/** How many handler isolates are live (not disposed) in this process. */
export function liveIsolateCount(): number {
  for (const isolate of opened) if (isolate.isDisposed) opened.delete(isolate);
  return opened.size;
}

/** Compiles `code` (which must define `async function handler(req, db)`) for repeated runs. */
export function compileHandler(code: string, limits: HandlerLimits): CompiledHandler {
  checkLimits(limits);
  const sandbox = openSandboxSync(code, limits);
  if (!DEFINES_HANDLER.test(code)) {
    sandbox.isolate.dispose();
    throw new HandlerCompileError('Handler code must define async function handler(req, db)');
  }
  return new IsolateHandler(code, limits, sandbox);
}

interface Sandbox {
  readonly isolate: ivm.Isolate;
  readonly prelude: ivm.Script;
  readonly code: ivm.Script;
  /** Set when the runner disposed the isolate; a disposed isolate without it ran out of memory. */
  retiredForTimeout?: boolean;
  /** Runs currently using this isolate. */
  runs: number;
  /** Answered runs whose db calls may still resume code here (see db-bridge.ts). */
  lingering: number;
  /** When runs and lingering last dropped to 0 (performance.now() clock). */
  idleSince: number;
}

/** How much is going on in an isolate: a lingering run is cheap but still shares its thread. */
function load(sandbox: Sandbox): number {
  return sandbox.runs + sandbox.lingering;
}

/** What the watchdog and the run it guards share. */
interface RunState {
  sandbox: Sandbox | undefined;
  expired: boolean;
}

class IsolateHandler implements CompiledHandler {
  readonly #code: string;
  readonly #limits: HandlerLimits;
  /** Live isolates (a disposed one is dropped when the next run looks for one). */
  #pool: Sandbox[];
  readonly #openings = new Set<Promise<unknown>>();
  readonly #maxIsolates: number;
  readonly #runsPerIsolate: number;
  readonly #slots: RunSlots;
  #trimTimer: NodeJS.Timeout | undefined;
  #inFlight = 0;
  #disposed = false;

  constructor(code: string, limits: HandlerLimits, sandbox: Sandbox) {
    this.#code = code;
    this.#limits = limits;
    this.#pool = [sandbox];
    this.#maxIsolates = Math.max(1, Math.min(MAX_ISOLATES, Math.floor(ISOLATE_POOL_MB / limits.memoryMb)));
    this.#runsPerIsolate = Math.max(2, Math.floor(limits.memoryMb / MB_PER_RUN));
    this.#slots = new RunSlots(this.#maxIsolates * this.#runsPerIsolate);
  }

  async run(request: HandlerRequest, db: HandlerDb): Promise<HandlerResult> {
    if (this.#disposed) throw new Error('This compiled handler has been disposed');
    this.#inFlight++;
    try {
      return await this.#guarded(JSON.stringify(request), db);
    } finally {
      this.#inFlight--;
      if (this.#disposed && this.#inFlight === 0) this.#releaseSandboxes();
    }
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    if (this.#inFlight === 0) this.#releaseSandboxes();
  }

  /** Races the run against the watchdog. */
  async #guarded(requestJson: string, db: HandlerDb): Promise<HandlerResult> {
    const { timeoutMs } = this.#limits;
    const state: RunState = { sandbox: undefined, expired: false };
    let watchdog: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_resolve, reject) => {
      watchdog = setTimeout(() => {
        state.expired = true;
        if (state.sandbox) this.#retire(state.sandbox);
        reject(new HandlerTimeoutError(`Handler exceeded its time limit of ${timeoutMs} ms`));
      }, timeoutMs + WATCHDOG_GRACE_MS);
    });
    try {
      return await Promise.race([this.#attempt(requestJson, db, state, performance.now() + timeoutMs), expired]);
    } finally {
      clearTimeout(watchdog);
    }
  }

  async #attempt(requestJson: string, db: HandlerDb, state: RunState, deadline: number): Promise<HandlerResult> {
    await this.#slots.acquire();
    try {
      // The watchdog may have fired while this run waited; it must not start after being reported.
      if (state.expired) throw new HandlerTimeoutError('Handler run expired before it started');
      const sandbox = await this.#acquire(state);
      try {
        if (state.expired) throw new HandlerTimeoutError('Handler run expired before it started');
        state.sandbox = sandbox;
        return await this.#execute(sandbox, requestJson, db, deadline);
      } finally {
        this.#leave(sandbox);
      }
    } finally {
      this.#slots.release();
    }
  }

  async #execute(sandbox: Sandbox, requestJson: string, db: HandlerDb, deadline: number): Promise<HandlerResult> {
    const timeout = (): number => Math.max(1, Math.ceil(deadline - performance.now()));
    // A db reply whose delivery the time limit stopped leaves `invoke` pending forever: this ends the run.
    let stop: (error: unknown) => void = () => {};
    const stopped = new Promise<never>((_resolve, reject) => {
      stop = reject;
    });
    stopped.catch(() => {});
    const bridge = openDbBridge(db, {
      deadline,
      timeoutMs: this.#limits.timeoutMs,
      onTimeout: stop,
      retire: () => this.#retire(sandbox),
      onReleased: () => {
        sandbox.lingering--;
        this.#quieted(sandbox);
      },
    });
    sandbox.lingering++;
    let context: ivm.Context | undefined;
    let setup: ivm.Reference | undefined;
    let ports: ivm.Reference | undefined;
    let invoke: ivm.Reference | undefined;
    let completion: ivm.Reference | undefined;
    let inHandlerCode = false;
    try {
      context = await sandbox.isolate.createContext();
      setup = await sandbox.prelude.run(context, { reference: true, timeout: timeout() });
      ports = await setup.apply(undefined, [bridge.reference], { result: { reference: true }, timeout: timeout() });
      invoke = await ports.get('invoke', { reference: true });
      bridge.connect((await ports.get('deliver', { reference: true })) as ivm.Reference<DbDeliver>);
      inHandlerCode = true;
      // The completion value of the top level is of no use; a reference avoids copying it out.
      completion = await sandbox.code.run(context, { reference: true, timeout: timeout() });
      const answer = invoke.apply(undefined, [requestJson], { result: { promise: true, copy: true }, timeout: timeout() });
      const envelope: unknown = await Promise.race([answer, stopped]);
      return readEnvelope(envelope);
    } catch (error) {
      throw this.#failure(error, sandbox, inHandlerCode);
    } finally {
      // The bridge keeps the prelude's `deliver` for replies still on their way, and releases it itself.
      bridge.finish();
      releaseAll(completion, invoke, ports, setup, context);
    }
  }

  /** Maps whatever a run rejected with onto the Handler*Error classes. */
  #failure(error: unknown, sandbox: Sandbox, inHandlerCode: boolean): unknown {
    if (isHandlerError(error)) return error;
    const { timeoutMs, memoryMb } = this.#limits;
    if (sandbox.isolate.isDisposed) {
      if (sandbox.retiredForTimeout) {
        return new HandlerTimeoutError(`Handler run was stopped: a concurrent run exceeded the time limit of ${timeoutMs} ms`);
      }
      // isolated-vm disposes an isolate on its own only when it exceeds its memory limit.
      return new HandlerMemoryError(`Handler exceeded its memory limit of ${memoryMb} MB`);
    }
    if (isTimedOut(error)) {
      return new HandlerTimeoutError(`Handler exceeded its time limit of ${timeoutMs} ms`);
    }
    // Thrown by the top level of the handler's code (a throw inside `handler` comes back as an envelope).
    if (inHandlerCode) return thrownByHandler(error);
    return error;
  }

  /** An isolate for one run, counted as used by it (`runs`) until `#leave`. */
  async #acquire(state: RunState): Promise<Sandbox> {
    for (;;) {
      if (state.expired) throw new HandlerTimeoutError('Handler run expired before it started');
      if (this.#disposed) throw new Error('This compiled handler has been disposed');
      this.#pool = this.#pool.filter((sandbox) => !sandbox.isolate.isDisposed);
      let least: Sandbox | undefined;
      for (const sandbox of this.#pool) if (!least || load(sandbox) < load(least)) least = sandbox;
      if (least && load(least) === 0) return this.#enter(least);
      if (this.#pool.length + this.#openings.size < this.#maxIsolates) return await this.#open();
      if (least && (least.runs < this.#runsPerIsolate || this.#openings.size === 0)) return this.#enter(least);
      // Every isolate is full and the rest are still opening: look again once one has.
      await Promise.race(this.#openings);
    }
  }

  async #open(): Promise<Sandbox> {
    const opening = openSandbox(this.#code, this.#limits);
    const settled = opening.then(
      () => undefined,
      () => undefined,
    );
    this.#openings.add(settled);
    try {
      const sandbox = await opening;
      // Claimed for this run as it joins the pool, before another run can see it idle; dispose() frees
      // it with the rest once this run is done.
      sandbox.runs = 1;
      this.#pool.push(sandbox);
      return sandbox;
    } finally {
      this.#openings.delete(settled);
    }
  }

  #enter(sandbox: Sandbox): Sandbox {
    sandbox.runs++;
    return sandbox;
  }

  #leave(sandbox: Sandbox): void {
    sandbox.runs--;
    // A run its watchdog gave up on may open an isolate after dispose() released the rest.
    if (this.#disposed) {
      if (this.#inFlight === 0) this.#releaseSandboxes();
      return;
    }
    this.#quieted(sandbox);
  }

  /** Notes when an isolate fell idle, and makes sure someone comes back to dispose it if it stays so. */
  #quieted(sandbox: Sandbox): void {
    if (load(sandbox) > 0 || this.#disposed) return;
    sandbox.idleSince = performance.now();
    if (this.#pool.length > 1 && !this.#trimTimer) this.#scheduleTrim(this.#idleMs());
  }

  #idleMs(): number {
    return this.#limits.idleIsolateMs ?? IDLE_ISOLATE_MS;
  }

  #scheduleTrim(delayMs: number): void {
    this.#trimTimer = setTimeout(() => this.#trimIdle(), Math.max(1, delayMs));
    this.#trimTimer.unref();
  }

  /**
   * Disposes the isolates idle for idleIsolateMs, keeping at least one live isolate, so a quiet
   * handler still answers without opening one; the one kept is the most recently used.
   */
  #trimIdle(): void {
    this.#trimTimer = undefined;
    if (this.#disposed) return;
    const now = performance.now();
    const idleMs = this.#idleMs();
    this.#pool = this.#pool.filter((sandbox) => !sandbox.isolate.isDisposed);
    const expired = this.#pool.filter((sandbox) => load(sandbox) === 0 && now - sandbox.idleSince >= idleMs).sort((a, b) => a.idleSince - b.idleSince);
    let live = this.#pool.length;
    for (const sandbox of expired) {
      if (live <= 1) break;
      sandbox.isolate.dispose();
      live--;
    }
    this.#pool = this.#pool.filter((sandbox) => !sandbox.isolate.isDisposed);
    if (this.#pool.length <= 1) return;
    // Come back when the next idle one is due; a busy one reschedules through #quieted when it idles.
    const idleSinces = this.#pool.filter((sandbox) => load(sandbox) === 0).map((sandbox) => sandbox.idleSince);
    if (idleSinces.length > 0) this.#scheduleTrim(Math.min(...idleSinces) + idleMs - now);
  }

  #retire(sandbox: Sandbox): void {
    sandbox.retiredForTimeout = true;
    if (!sandbox.isolate.isDisposed) sandbox.isolate.dispose();
  }

  #releaseSandboxes(): void {
    clearTimeout(this.#trimTimer);
    this.#trimTimer = undefined;
    for (const sandbox of this.#pool) if (!sandbox.isolate.isDisposed) sandbox.isolate.dispose();
    this.#pool = [];
  }
}

function openSandboxSync(code: string, limits: HandlerLimits): Sandbox {
  const isolate = track(new ivm.Isolate({ memoryLimit: limits.memoryMb }));
  let opened = false;
  try {
    const script = compileOrExplain(() => isolate.compileScriptSync(code, { filename: HANDLER_FILENAME }));
    const prelude = isolate.compileScriptSync(PRELUDE_SOURCE, { filename: PRELUDE_FILENAME });
    const sandbox = { isolate, code: script, prelude, runs: 0, lingering: 0, idleSince: performance.now() };
    opened = true;
    return sandbox;
  } finally {
    if (!opened) isolate.dispose();
  }
}

/** Opens the replacement of a disposed isolate, compiling off the host thread (the code compiled once already). */
async function openSandbox(code: string, limits: HandlerLimits): Promise<Sandbox> {
  const isolate = track(new ivm.Isolate({ memoryLimit: limits.memoryMb }));
  let opened = false;
  try {
    const [script, prelude] = await Promise.all([
      isolate.compileScript(code, { filename: HANDLER_FILENAME }),
      isolate.compileScript(PRELUDE_SOURCE, { filename: PRELUDE_FILENAME }),
    ]);
    opened = true;
    return { isolate, code: script, prelude, runs: 0, lingering: 0, idleSince: performance.now() };
  } finally {
    if (!opened) isolate.dispose();
  }
}

const SYNTAX_ERROR_AT = new RegExp(`^(.*) \\[${HANDLER_FILENAME.replaceAll('.', '\\.')}:(\\d+):(\\d+)\\]$`, 's');

/** Turns isolated-vm's `Unexpected token '}' [handler.js:3:1]` into a client-facing message with a position. */
function compileOrExplain(compile: () => ivm.Script): ivm.Script {
  try {
    return compile();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const match = SYNTAX_ERROR_AT.exec(message);
    if (!match) throw new HandlerCompileError(`Handler code does not compile: ${message}`);
    const [, reason, line, column] = match;
    throw new HandlerCompileError(`Syntax error in handler code at line ${line}, column ${column}: ${reason}`, {
      line: Number(line),
      column: Number(column),
    });
  }
}

type KeysOfEach<Union> = Union extends unknown ? keyof Union : never;
type EnvelopeField = KeysOfEach<Envelope>;

/** The host re-checks what the prelude reported: the handler may have tampered with the prelude's built-ins. */
function readEnvelope(value: unknown): HandlerResult {
  const envelope: Partial<Record<EnvelopeField, unknown>> = value !== null && typeof value === 'object' ? value : {};
  if (envelope.ok === true) {
    const { status, body } = envelope;
    if (!isStatus(status) || typeof body !== 'string') throw new HandlerResultError('Handler result is invalid');
    // Checked again here: the envelope comes from the isolate, whose built-ins the handler may have changed.
    if (body.length > MAX_HANDLER_ANSWER_CHARS) throw new HandlerResultError(`Handler result is invalid: data is larger than ${MAX_HANDLER_ANSWER_CHARS} characters of JSON`);
    try {
      return { status, data: JSON.parse(body) as unknown };
    } catch {
      throw new HandlerResultError('Handler result is invalid: data is not JSON');
    }
  }
  const message = typeof envelope.message === 'string' ? envelope.message : 'Handler result is invalid';
  if (envelope.kind !== 'throw') throw new HandlerResultError(message);
  if (envelope.status === UNIQUE_CLASH) throw new HandlerDbError(envelope.status, message);
  throw new HandlerError(message, handlerFrames(envelope.stack, HANDLER_FILENAME));
}

function thrownByHandler(error: unknown): HandlerError {
  // isolated-vm rejects with the thrown value itself when it is a primitive (`throw 'oops'`).
  if (!(error instanceof Error)) return new HandlerError(String(error));
  return new HandlerError(error.message, handlerFrames(error.stack, HANDLER_FILENAME));
}

/** What a handler may answer: 1xx are interim responses, never an answer (101 would switch protocols). */
function isStatus(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 200 && value <= 599;
}

/**
 * The one db refusal an uncaught handler answers with as it is: a write repeating a unique value,
 * which is the caller's data clashing, as on a plain endpoint. The others (an invalid filter, a
 * malformed call, a record the handler built wrong) are the handler's own mistakes: 500s, as any
 * error it lets escape.
 */
const UNIQUE_CLASH = 409;

function isHandlerError(error: unknown): boolean {
  return (
    error instanceof HandlerError ||
    error instanceof HandlerDbError ||
    error instanceof HandlerTimeoutError ||
    error instanceof HandlerMemoryError ||
    error instanceof HandlerResultError
  );
}

function checkLimits({ memoryMb, timeoutMs }: HandlerLimits): void {
  if (!Number.isInteger(memoryMb) || memoryMb < MIN_MEMORY_MB) throw new RangeError(`memoryMb must be an integer of at least ${MIN_MEMORY_MB}`);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new RangeError('timeoutMs must be a positive integer');
}

/** Releasing a handle of an isolate that is already disposed has nothing left to free; never mask the run's outcome. */
function releaseAll(...handles: ({ release(): void } | undefined)[]): void {
  for (const handle of handles) {
    try {
      handle?.release();
    } catch {
      // already released with its isolate
    }
  }
}
