import type { Next } from 'koa';
import { koaBody } from 'koa-body';
import { AppError, badRequest } from '../../lib/errors.ts';
import { isYamlRequest } from '../bundle-body.ts';
import type { DynContext } from '../state.ts';

/**
 * JSON bodies only, up to BODY_LIMIT (413 beyond it, 400 when malformed). Parsed bodies are
 * then checked for nesting depth and for keys that could reach an object's prototype when a
 * body is later merged into another object.
 */
const MAX_DEPTH = 32;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export function jsonBody(limitBytes: number) {
  const parse = koaBody({
    json: true,
    urlencoded: false,
    text: false,
    multipart: false,
    jsonLimit: limitBytes,
    jsonStrict: true,
    parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] as never[],
    onError: (error) => {
      throw parseFailure(error, limitBytes);
    },
  });
  return async (ctx: DynContext, next: Next): Promise<void> => {
    if (!BODY_METHODS.has(ctx.method)) return next(); // reads carry no body: skip the parser
    assertJsonType(ctx);
    await parse(ctx as never, async () => {
      inspect((ctx.request as { body?: unknown }).body, 0, '');
      await next();
    });
  };
}

/**
 * A body sent without `Content-Type: application/json` (curl -d sends form encoding; fetch a
 * string as text/plain) would otherwise reach the route as no body at all and come back as
 * puzzling field errors. Say what is wrong instead: 415 naming the header. YAML passes for the
 * project routes, which read it themselves (bundle-body.ts).
 */
function assertJsonType(ctx: DynContext): void {
  if (ctx.request.length === 0) return; // Content-Length: 0 is no body, whatever the type
  const type = ctx.is('application/json', '+json');
  if (type === null || typeof type === 'string' || isYamlRequest(ctx)) return; // no body, or JSON / YAML
  const sent = ctx.get('content-type');
  throw new AppError(
    415,
    sent
      ? `Request body sent as "${sent.split(';')[0]?.trim()}": send JSON with the header Content-Type: application/json`
      : 'Request body has no Content-Type header: send JSON with the header Content-Type: application/json',
  );
}

function inspect(value: unknown, depth: number, path: string): void {
  if (typeof value !== 'object' || value === null) return;
  if (depth > MAX_DEPTH) throw badRequest(`Request body is nested more than ${MAX_DEPTH} levels deep`);
  if (Array.isArray(value)) {
    value.forEach((item, index) => inspect(item, depth + 1, `${path}[${index}]`));
    return;
  }
  for (const [key, inner] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (FORBIDDEN_KEYS.has(key)) throw badRequest(`Request body contains the forbidden key "${key}"`, [{ field: at, message: 'is a forbidden key' }]);
    inspect(inner, depth + 1, at);
  }
}

function parseFailure(error: Error, limitBytes: number): AppError {
  const status = (error as { status?: number }).status;
  if (status === 413) return new AppError(413, `Request body is larger than the limit of ${limitBytes} bytes`);
  if (status === 415) return new AppError(415, 'Unsupported content type; send application/json');
  if (/only supports object and array/.test(error.message)) return badRequest('Malformed JSON body: expected an object or an array');
  // The JSON parser itself refuses `__proto__` (and `constructor.prototype`) before inspect() sees them.
  if (/forbidden prototype property/.test(error.message)) return badRequest('Request body contains a forbidden key: "__proto__", "constructor" and "prototype" are not allowed');
  return badRequest('Malformed JSON body');
}
