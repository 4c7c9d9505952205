import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/lib/errors.ts';
import { errorResponse, notServed } from '../../src/runtime/error-response.ts';
import { HandlerError, HandlerTimeoutError } from '../../src/sandbox/handler-errors.ts';
import { DuplicateKeyError, InvalidFilterError, StoreError } from '../../src/store/types.ts';

/** The one mapping from failures to answers, used by management routes and dynamic calls alike. */
describe('errorResponse', () => {
  it.each([
    { name: 'an AppError keeps its status, message, details and headers', error: new AppError(429, 'Slow down', { headers: { 'Retry-After': '3' }, details: [{ field: 'x', message: 'y' }] }), status: 429, body: { success: false, error: 'Slow down', details: [{ field: 'x', message: 'y' }] }, headers: { 'Retry-After': '3' }, log: null },
    { name: 'a bad filter is a 400', error: new InvalidFilterError('unsupported filter operator "$where"'), status: 400, body: { success: false, error: 'unsupported filter operator "$where"' }, headers: {}, log: null },
    { name: 'a duplicate is a 409 that names no index', error: new DuplicateKeyError('users', ['loginKey']), status: 409, body: { success: false, error: 'A record with these values already exists' }, headers: {}, log: null },
    { name: 'a busy database is a 503 with Retry-After: 1', error: new StoreError('busy', 'SQLITE_BUSY'), status: 503, body: { success: false, error: 'The database is busy; try again' }, headers: { 'Retry-After': '1' }, log: null },
    { name: 'an unreachable database is a 503 with Retry-After: 5', error: new StoreError('unavailable', 'connection refused 10.0.0.5'), status: 503, body: { success: false, error: 'The database is unavailable' }, headers: { 'Retry-After': '5' }, log: null },
    { name: 'an internal store error is a generic 500', error: new StoreError('internal', 'logs.action must be a string'), status: 500, body: { success: false, error: 'Internal server error' }, headers: {}, log: 'error' },
    { name: 'a handler that threw is a 500 with its own message', error: new HandlerError('boom'), status: 500, body: { success: false, error: 'boom' }, headers: {}, log: 'warn' },
    { name: 'a stopped handler is a 500 saying why', error: new HandlerTimeoutError('Handler timed out after 50 ms'), status: 500, body: { success: false, error: 'Handler timed out after 50 ms' }, headers: {}, log: 'warn' },
    { name: 'an exposed 4xx HTTP error keeps its message', error: Object.assign(new Error('Unsupported charset'), { status: 415, expose: true }), status: 415, body: { success: false, error: 'Unsupported charset' }, headers: {}, log: null },
    { name: 'anything else is a generic 500 to be logged', error: new Error('password=hunter2'), status: 500, body: { success: false, error: 'Internal server error' }, headers: {}, log: 'error' },
  ])('$name', ({ error, status, body, headers, log }) => {
    expect(errorResponse(error)).toEqual({ status, body, headers, log });
  });
});

describe('notServed', () => {
  it.each([
    { method: 'GET', path: '/api/x', allowed: [], status: 404, body: { success: false, error: 'No route for GET /api/x' }, headers: {} },
    { method: 'GET', path: '/x', allowed: [], status: 404, body: { success: false, error: 'Not found' }, headers: {} },
    { method: 'DELETE', path: '/api/x', allowed: ['GET', 'HEAD', 'OPTIONS'], status: 405, body: { success: false, error: 'Method DELETE is not allowed on /api/x' }, headers: { Allow: 'GET, HEAD, OPTIONS' } },
    { method: 'OPTIONS', path: '/api/x', allowed: ['GET', 'HEAD', 'OPTIONS'], status: 204, body: null, headers: { Allow: 'GET, HEAD, OPTIONS' } },
  ])('$method $path served with [$allowed] → $status', ({ method, path, allowed, status, body, headers }) => {
    expect(notServed(method, path, allowed)).toMatchObject({ status, body, headers });
  });
});
