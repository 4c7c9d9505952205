import type { Next } from 'koa';
import { koaBody } from 'koa-body';
import { AppError, badRequest } from '../../lib/errors.ts';
import { isReservedConcretePath } from '../../model/reserved-paths.ts';
import { inspectBundle, isJsonLinesRequest, isYamlRequest } from '../bundle-body.ts';
import type { DynContext } from '../state.ts';
import { BODY_MAX_DEPTH } from '../../lib/body-limits.ts';

/**
 * JSON bodies only, up to BODY_LIMIT (413 beyond it, 400 when malformed). Parsed bodies are
 * then checked for nesting depth. Keys that could reach an object's prototype when a body is
 * later merged into another object (`__proto__`, `constructor`, `prototype`) are refused in
 * management bodies; in a dynamic endpoint's body they are left to the record schema, which
 * stores them as data inside `json` values and refuses them everywhere else. Either way the body
 * is parsed as JSON.parse does: a `__proto__` key is an own data property, never a prototype.
 */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * `rawPaths` read their bodies themselves (MCP answers malformed JSON with a JSON-RPC error).
 * `streamPaths` read a JSON Lines body themselves, as a stream of any size (the project import);
 * any other body sent to them is parsed here as usual, within the limit. `bundlePaths` take
 * bundles, whose records sit deeper than a record's own body (BUNDLE_MAX_DEPTH).
 */
export function jsonBody(limitBytes: number, options: { rawPaths?: readonly string[]; streamPaths?: readonly string[]; bundlePaths?: readonly string[] } = {}) {
  const rawPaths = new Set(options.rawPaths);
  const streamPaths = new Set(options.streamPaths);
  const bundlePaths = new Set(options.bundlePaths);
  const listed = (paths: Set<string>, path: string): boolean => paths.size > 0 && (paths.has(path) || (path.endsWith('/') && paths.has(path.slice(0, -1))));
  const parse = koaBody({
    json: true,
    urlencoded: false,
    text: false,
    multipart: false,
    jsonLimit: limitBytes,
    jsonStrict: true,
    parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] as never[],
    onError: (error, ctx) => {
      // co-body's parser (bourne) refuses `__proto__` outright; a dynamic endpoint's json field
      // may hold one as data (and so may the records of a bundle, which export such values), so
      // the text it already read is parsed again by JSON.parse (an own property, no prototype).
      const text = (error as Error & { body?: unknown }).body;
      if (/forbidden prototype property/.test(error.message) && typeof text === 'string' && (!isReservedConcretePath(ctx.path) || listed(bundlePaths, ctx.path))) {
        (ctx.request as { body?: unknown }).body = JSON.parse(text);
        return;
      }
      throw parseFailure(error, limitBytes);
    },
  });
  return async (ctx: DynContext, next: Next): Promise<void> => {
    if (!BODY_METHODS.has(ctx.method)) return next(); // reads carry no body: skip the parser
    if (listed(rawPaths, ctx.path)) return next();
    if (listed(streamPaths, ctx.path) && isJsonLinesRequest(ctx)) return next();
    const management = isReservedConcretePath(ctx.path);
    const bundle = listed(bundlePaths, ctx.path);
    // A dynamic endpoint checks network rules and access before it looks at the body (the spec's
    // order): a body it cannot read is handed on as `bodyError`, for the engine to refuse after
    // them, so a caller the rules keep out learns nothing about what it sent.
    let parsed = false;
    try {
      assertJsonType(ctx);
      await parse(ctx as never, async () => {
        const body = (ctx.request as { body?: unknown }).body;
        // Under `data`, keys below a record's top are data (project/data.ts checks the top).
        if (bundle) inspectBundle(body, (value, depth, path, maxDepth) => inspect(value, depth, path, management && path !== 'data', maxDepth));
        else inspect(body, 0, '', management, BODY_MAX_DEPTH);
        parsed = true;
        await next();
      });
    } catch (error) {
      if (parsed || management) throw error;
      ctx.state.bodyError = error;
      (ctx.request as { body?: unknown }).body = undefined;
      await next();
    }
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

/** The checks made on every parsed management body, for routes that parse their own (throws a 400). */
export function inspectParsedBody(value: unknown): void {
  inspect(value, 0, '', true, BODY_MAX_DEPTH);
}

function inspect(value: unknown, depth: number, path: string, management: boolean, maxDepth: number): void {
  if (typeof value !== 'object' || value === null) return;
  if (depth > maxDepth) throw badRequest(`Request body is nested more than ${maxDepth} levels deep`);
  if (Array.isArray(value)) {
    value.forEach((item, index) => inspect(item, depth + 1, `${path}[${index}]`, management, maxDepth));
    return;
  }
  for (const [key, inner] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (management && FORBIDDEN_KEYS.has(key)) throw badRequest(`Request body contains the forbidden key "${key}"`, [{ field: at, message: 'is a forbidden key' }]);
    inspect(inner, depth + 1, at, management, maxDepth);
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
