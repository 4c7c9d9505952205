// Runs a cron job's script (`async function run()`) once, in an isolate of its own that is disposed
// when the run ends, whatever happened. Cron runs are rare (at most one a second per job), so a fresh
// isolate per run (~3 ms) buys complete separation: nothing survives from one run to the next, and a
// run that has to be killed takes nothing else down with it.
//
// The script sees no host objects: only `console.log/info/warn/error`, which copy strings out to a
// bounded buffer. Limits, as for handlers: synchronous code (and the microtasks it queues) under
// isolated-vm's timeout; a promise that never settles is ended by a host watchdog that disposes the
// isolate; a memory bomb makes isolated-vm dispose the isolate itself.
import ivm from 'isolated-vm';

export interface ScriptLimits {
  memoryMb: number;
  timeoutMs: number;
}

export interface ScriptResult {
  ok: boolean;
  /** run()'s return value as JSON text (its first 4,096 characters), when ok. */
  value: string | null;
  /** Whether `value` was cut (it is then no longer JSON). */
  valueTruncated: boolean;
  error: string | null;
  logs: string[];
  logsTruncated: boolean;
}

export class ScriptCompileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScriptCompileError';
  }
}

const FILENAME = 'job.js';
const MAX_LOG_LINES = 100;
const MAX_LOG_BYTES = 16 * 1024;
const MAX_LINE = 2000;
const MAX_VALUE = 4096;
const WATCHDOG_GRACE_MS = 50;
const DEFINES_RUN = /\bfunction\s+run\s*\(|\b(?:const|let|var)\s+run\s*=/;

// Evaluated before the job's code: `console` over the log callback, and the invoker, which reports
// an envelope of strings (the host re-checks it). The callback is removed from the global object.
const PRELUDE = String.raw`(function () {
  'use strict';
  const log = globalThis.__dynLog;
  delete globalThis.__dynLog;
  // A WebAssembly.Memory is allocated outside the isolate's heap, beyond its memory limit: gone.
  delete globalThis.WebAssembly;
  const { stringify } = JSON;
  const StringClass = String;
  const text = (value) => {
    if (typeof value === 'string') return value;
    try { const json = stringify(value); return json === undefined ? StringClass(value) : json; } catch { try { return StringClass(value); } catch { return '?'; } }
  };
  const write = (level) => (...args) => { log(level, args.map(text).join(' ')); };
  globalThis.console = Object.freeze({ log: write('log'), info: write('info'), warn: write('warn'), error: write('error') });
  const invoke = async () => {
    try {
      if (typeof run !== 'function') return { ok: false, message: 'The code must define async function run()' };
      const value = await run();
      let json;
      try { json = stringify(value === undefined ? null : value); } catch (error) { return { ok: false, message: 'The result cannot be stored as JSON: ' + text(error && error.message) }; }
      return { ok: true, value: typeof json === 'string' ? json : 'null' };
    } catch (error) {
      let message = error;
      try { if (error !== null && typeof error === 'object' && error.message !== undefined) message = error.message; } catch {}
      return { ok: false, message: text(message) };
    }
  };
  return invoke;
})()`;

/** Save-time check: the code compiles and defines `run`. Throws ScriptCompileError. */
export function checkScript(code: string): void {
  if (!DEFINES_RUN.test(code)) throw new ScriptCompileError('The code must define async function run()');
  const isolate = new ivm.Isolate({ memoryLimit: 8 });
  try {
    isolate.compileScriptSync(code, { filename: FILENAME });
  } catch (error) {
    throw new ScriptCompileError(`The code does not compile: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    isolate.dispose();
  }
}

export async function runScript(code: string, limits: ScriptLimits): Promise<ScriptResult> {
  const logs: string[] = [];
  let logBytes = 0;
  let logsTruncated = false;
  const onLog = (level: unknown, line: unknown): void => {
    const text = String(line);
    // A line cut to MAX_LINE is output cut too: flagged as dropped lines are.
    if (text.length > MAX_LINE) logsTruncated = true;
    const entry = `${String(level) === 'log' ? '' : `[${String(level)}] `}${text.slice(0, MAX_LINE)}`;
    if (logs.length >= MAX_LOG_LINES || logBytes + entry.length > MAX_LOG_BYTES) {
      logsTruncated = true;
      return;
    }
    logs.push(entry);
    logBytes += entry.length;
  };
  const result = (ok: boolean, value: string | null, error: string | null, valueTruncated = false): ScriptResult => ({ ok, value, valueTruncated, error, logs, logsTruncated });

  const isolate = new ivm.Isolate({ memoryLimit: limits.memoryMb });
  const deadline = performance.now() + limits.timeoutMs;
  const remaining = (): number => Math.max(1, Math.ceil(deadline - performance.now()));
  let timedOut = false;
  let watchdog: NodeJS.Timeout | undefined;
  let context: ivm.Context | undefined;
  let invoke: ivm.Reference | undefined;
  try {
    context = await isolate.createContext();
    await context.global.set('__dynLog', new ivm.Callback(onLog));
    invoke = await context.eval(PRELUDE, { reference: true, timeout: remaining() });
    const script = await isolate.compileScript(code, { filename: FILENAME });
    await script.run(context, { timeout: remaining() });
    const expired = new Promise<never>((_resolve, reject) => {
      watchdog = setTimeout(() => {
        timedOut = true;
        if (!isolate.isDisposed) isolate.dispose();
        reject(new Error('expired'));
      }, remaining() + WATCHDOG_GRACE_MS);
    });
    const envelope: unknown = await Promise.race([invoke.apply(undefined, [], { result: { promise: true, copy: true }, timeout: remaining() }), expired]);
    const { ok, value, message } = (envelope ?? {}) as { ok?: unknown; value?: unknown; message?: unknown };
    if (ok === true && typeof value === 'string') return value.length > MAX_VALUE ? result(true, value.slice(0, MAX_VALUE), null, true) : result(true, value, null);
    return result(false, null, typeof message === 'string' ? message.slice(0, MAX_LINE) : 'The run failed');
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (timedOut || message === 'Script execution timed out.') return result(false, null, `The run exceeded its time limit of ${limits.timeoutMs} ms`);
    if (isolate.isDisposed) return result(false, null, `The run exceeded its memory limit of ${limits.memoryMb} MB`);
    return result(false, null, message.slice(0, MAX_LINE));
  } finally {
    clearTimeout(watchdog);
    for (const handle of [invoke, context]) {
      try {
        handle?.release();
      } catch {
        // released with its isolate
      }
    }
    if (!isolate.isDisposed) isolate.dispose();
  }
}
