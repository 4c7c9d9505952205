/**
 * The trusted half of a handler run, as JavaScript source compiled into every handler isolate.
 *
 * Each run evaluates it in the fresh context *before* the administrator's code, passing it the db
 * bridge Reference; it captures the built-ins it needs and returns `{invoke, deliver}`. The host calls
 * `invoke` once the administrator's code has defined `handler`. The bridge Reference lives only in this
 * closure: the handler sees `db` as plain functions of its own realm, so walking `db.find.constructor...`
 * ends at the sandbox's own Function. `invoke` never rejects: it reports a throw, an invalid result or a
 * success as an envelope of strings and numbers, which the host re-checks (the handler may have
 * tampered with the sandbox's built-ins; the envelope is only data, so that cannot reach the host).
 *
 * Why db replies come back through `deliver` rather than as the promise of a Reference call: the
 * handler code a reply resumes then runs inside a host `apply` that carries isolated-vm's `timeout`.
 * A continuation that loops, during the run or after the run has answered (a db call the handler did
 * not await), is stopped by that timeout like any other code of the run, instead of spinning on the
 * isolate's thread with nothing watching it.
 */
import { MAX_HANDLER_ANSWER_CHARS, MAX_PENDING_DB_CALLS } from './handler-types.ts';

/** Filename the administrator's code is compiled under; stack frames and syntax errors name it. */
export const HANDLER_FILENAME = 'handler.js';

/** What `invoke` resolves to. `status` on a throw: the uncaught error is a db call's client error (4xx). */
export type Envelope =
  | { ok: true; status: number; body: string }
  | { ok: false; kind: 'throw'; message: string; stack: string; status?: number }
  | { ok: false; kind: 'result'; message: string };

/** What the host passes to `deliver` for one db call. */
export type DbReply = { ok: true; value: string } | { ok: false; message: string; status?: number };

export const PRELUDE_FILENAME = 'dyn-prelude.js';

export const PRELUDE_SOURCE = String.raw`(function setup(bridge) {
  'use strict';
  // A WebAssembly.Memory is allocated outside the isolate's heap, beyond its memory limit: gone.
  delete globalThis.WebAssembly;
  const { parse, stringify } = JSON;
  const { apply } = Reflect;
  const { freeze } = Object;
  const { isInteger } = Number;
  const ErrorClass = Error;
  const TypeErrorClass = TypeError;
  const StringClass = String;
  const bridgeSend = bridge.applyIgnored;
  const PromiseClass = Promise;
  const promiseThen = Promise.prototype.then;
  const WeakMapClass = WeakMap;
  const weakGet = WeakMap.prototype.get;
  const weakSet = WeakMap.prototype.set;
  const MAX_TEXT = 4000;
  const MAX_PENDING = ${MAX_PENDING_DB_CALLS};
  const MAX_ANSWER = ${MAX_HANDLER_ANSWER_CHARS};

  // Calls sent to the host and not yet answered, by call id (no prototype: nothing the handler can patch).
  const waiting = Object.create(null);
  let pending = 0;
  let lastId = 0;
  // Errors this prelude made from a db client error, with the status and message the host sent.
  const dbErrors = new WeakMapClass();

  // One settled promise per operation answers every refused call: a fresh rejection per call costs the
  // isolate's rejection tracking time that grows with the number of calls (100,000 took seconds).
  const refusals = Object.create(null);

  function rejected(error) {
    const promise = new PromiseClass((_resolve, reject) => reject(error));
    apply(promiseThen, promise, [undefined, () => {}]);
    return promise;
  }

  // A run that starts calls without awaiting them could queue work on the host faster than the host
  // does it, and keep the whole server busy past the run's time limit: the cap bounds what one run has
  // in flight, far above what a handler that awaits its calls (even in batches) ever reaches.
  function call(operation, args) {
    if (pending >= MAX_PENDING) {
      if (refusals[operation] === undefined) {
        refusals[operation] = rejected(new ErrorClass('db.' + operation + ' refused: ' + MAX_PENDING + ' db calls of this run are already under way; await some before starting more'));
      }
      return refusals[operation];
    }
    let argsJson;
    try {
      argsJson = stringify(args);
    } catch (error) {
      return rejected(error);
    }
    const id = ++lastId;
    return new PromiseClass((resolve, reject) => {
      waiting[id] = { resolve, reject };
      pending++;
      apply(bridgeSend, bridge, [undefined, [id, operation, argsJson]]);
    });
  }

  function deliver(id, reply) {
    const waiter = waiting[id];
    if (waiter === undefined) return;
    delete waiting[id];
    pending--;
    if (reply.ok === true) {
      waiter.resolve(parse(reply.value));
      return;
    }
    const error = new ErrorClass(reply.message);
    if (reply.status !== undefined) {
      error.status = reply.status;
      apply(weakSet, dbErrors, [error, { status: reply.status, message: reply.message }]);
    }
    waiter.reject(error);
  }

  // Not async functions: each would wrap the promise that call returns in one more (see refusals).
  const db = freeze({
    findOne: (filter) => call('findOne', [filter]),
    find: (filter, options) => call('find', [filter, options]),
    create: (data) => call('create', [data]),
    update: (id, data) => call('update', [id, data]),
    delete: (id) => call('delete', [id]),
  });

  function text(value) {
    try {
      const string = StringClass(value);
      return string.length > MAX_TEXT ? string.slice(0, MAX_TEXT) : string;
    } catch {
      return '(a value that cannot be converted to a string)';
    }
  }

  function shown(value) {
    if (typeof value === 'string') return stringify(value.length > 40 ? value.slice(0, 40) + '...' : value);
    if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return StringClass(value);
    return 'a value of type ' + typeof value;
  }

  function thrown(error) {
    let message = error;
    let stack = '';
    let dbError;
    try {
      if (error !== null && (typeof error === 'object' || typeof error === 'function')) {
        dbError = apply(weakGet, dbErrors, [error]);
        if (error.message !== undefined) message = error.message;
        if (typeof error.stack === 'string') stack = error.stack.slice(0, MAX_TEXT);
      }
    } catch {}
    // A db client error the handler let through: its status and the host's message go to the host,
    // which decides how it answers (a unique clash 409, any other a 500; handler-runner's readEnvelope).
    if (dbError !== undefined) return { ok: false, kind: 'throw', message: dbError.message, stack, status: dbError.status };
    return { ok: false, kind: 'throw', message: text(message), stack };
  }

  function invalid(message) {
    return { ok: false, kind: 'result', message: 'Handler result is invalid: ' + message };
  }

  function jsonOnly(key, value) {
    const type = typeof value;
    if (type === 'function' || type === 'symbol') {
      throw new TypeErrorClass('it contains a ' + type + (key === '' ? '' : ' at key ' + stringify(key)));
    }
    return value;
  }

  function result(value) {
    if (value === null || typeof value !== 'object') return invalid('expected an object { status, data }, got ' + shown(value));
    const status = value.status;
    // 1xx are interim responses, not answers: Node would send 101 as a protocol switch and hold the
    // connection open on 100.
    if (typeof status !== 'number' || !isInteger(status) || status < 200 || status > 599) {
      return invalid('status must be an integer from 200 to 599, got ' + shown(status));
    }
    let body;
    // Counted as it is written, so an answer far over the bound stops early, not once built whole.
    let size = 0;
    const tooLarge = 'data is larger than ' + MAX_ANSWER + ' characters of JSON';
    const bounded = (key, item) => {
      size += (typeof key === 'string' ? key.length : 0) + (typeof item === 'string' ? item.length : 4);
      if (size > MAX_ANSWER) throw new ErrorClass(tooLarge);
      return jsonOnly(key, item);
    };
    try {
      body = stringify(value.data === undefined ? null : value.data, bounded);
    } catch (error) {
      if (size > MAX_ANSWER) return invalid(tooLarge);
      return invalid('data is not JSON-serialisable: ' + thrown(error).message);
    }
    if (typeof body !== 'string') return invalid('data is not JSON-serialisable');
    if (body.length > MAX_ANSWER) return invalid(tooLarge);
    return { ok: true, status, body };
  }

  async function invoke(requestJson) {
    let value;
    try {
      if (typeof handler !== 'function') throw new ErrorClass('The code must define async function handler(req, db)');
      value = await handler(parse(requestJson), db);
    } catch (error) {
      return thrown(error);
    }
    return result(value);
  }

  return freeze({ invoke, deliver });
})`;
