/**
 * The trusted half of a handler run, as JavaScript source compiled into every handler isolate.
 *
 * Each run evaluates it in the fresh context *before* the administrator's code, passing it the db
 * bridge Reference; it captures the built-ins it needs and returns `invoke`, which the host calls once
 * the administrator's code has defined `handler`. The bridge Reference lives only in this closure:
 * the handler sees `db` as plain functions of its own realm, so walking `db.find.constructor...` ends
 * at the sandbox's own Function. `invoke` never rejects: it reports a throw, an invalid result or a
 * success as an envelope of strings and numbers, which the host re-checks (the handler may have
 * tampered with the sandbox's built-ins; the envelope is only data, so that cannot reach the host).
 */

/** Filename the administrator's code is compiled under; stack frames and syntax errors name it. */
export const HANDLER_FILENAME = 'handler.js';

/** What `invoke` resolves to. */
export type Envelope =
  | { ok: true; status: number; body: string }
  | { ok: false; kind: 'throw'; message: string; stack: string }
  | { ok: false; kind: 'result'; message: string };

export const PRELUDE_FILENAME = 'dyn-prelude.js';

export const PRELUDE_SOURCE = String.raw`(function setup(bridge) {
  'use strict';
  const { parse, stringify } = JSON;
  const { apply } = Reflect;
  const { freeze } = Object;
  const { isInteger } = Number;
  const ErrorClass = Error;
  const TypeErrorClass = TypeError;
  const StringClass = String;
  const bridgeApply = bridge.apply;
  const transfer = freeze({ arguments: freeze({ copy: true }), result: freeze({ promise: true, copy: true }) });
  const MAX_TEXT = 4000;

  async function call(operation, args) {
    const reply = await apply(bridgeApply, bridge, [undefined, [operation, stringify(args)], transfer]);
    if (reply.ok === true) return parse(reply.value);
    const error = new ErrorClass(reply.message);
    if (reply.status !== undefined) error.status = reply.status;
    throw error;
  }

  const db = freeze({
    findOne: async (filter) => call('findOne', [filter]),
    find: async (filter, options) => call('find', [filter, options]),
    create: async (data) => call('create', [data]),
    update: async (id, data) => call('update', [id, data]),
    delete: async (id) => call('delete', [id]),
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
    try {
      if (error !== null && (typeof error === 'object' || typeof error === 'function')) {
        if (error.message !== undefined) message = error.message;
        if (typeof error.stack === 'string') stack = error.stack.slice(0, MAX_TEXT);
      }
    } catch {}
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
    if (typeof status !== 'number' || !isInteger(status) || status < 100 || status > 599) {
      return invalid('status must be an integer from 100 to 599, got ' + shown(status));
    }
    let body;
    try {
      body = stringify(value.data === undefined ? null : value.data, jsonOnly);
    } catch (error) {
      return invalid('data is not JSON-serialisable: ' + thrown(error).message);
    }
    if (typeof body !== 'string') return invalid('data is not JSON-serialisable');
    return { ok: true, status, body };
  }

  return async function invoke(requestJson) {
    let value;
    try {
      if (typeof handler !== 'function') throw new ErrorClass('The code must define async function handler(req, db)');
      value = await handler(parse(requestJson), db);
    } catch (error) {
      return thrown(error);
    }
    return result(value);
  };
})`;
