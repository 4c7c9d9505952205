import { parse, stringify } from 'yaml';
import { AppError, badRequest } from '../lib/errors.ts';
import { BUNDLE_MAX_DEPTH } from '../project/data.ts';
import type { DynContext } from './state.ts';
import { BODY_MAX_DEPTH } from '../lib/body-limits.ts';

/**
 * Bodies of the project routes: a bundle as JSON (parsed by the body middleware) or as YAML text
 * with `Content-Type: application/yaml` (also `application/x-yaml`, `text/yaml`), read here
 * from the raw request within the same BODY_LIMIT, with the same key and depth rules as JSON.
 * The import also takes JSON Lines (`application/x-ndjson`), which the route reads as a stream.
 */
const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'];
/** JSON Lines (the streamed project format): read as a stream by the import route, never whole. */
export const JSON_LINES_TYPE = 'application/x-ndjson';
const JSON_LINES_TYPES = [JSON_LINES_TYPE, 'application/jsonl', 'application/jsonlines', 'application/json-lines'];
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
/** The nesting limit of any request body (middleware/body.ts). */

/**
 * A bundle's records (under `data`) sit three levels down and may be as deep as a record's body:
 * BUNDLE_MAX_DEPTH there. Its definitions keep the limit of any body, so that what a bundle stores
 * can be saved again through the API. `check` walks one top-level member with its limit.
 */
export function inspectBundle(body: unknown, check: (value: unknown, depth: number, path: string, maxDepth: number) => void): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return check(body, 0, '', BODY_MAX_DEPTH);
  for (const [key, value] of Object.entries(body)) {
    if (FORBIDDEN_KEYS.has(key)) return check(body, 0, '', BODY_MAX_DEPTH);
    check(value, 1, key, key === 'data' ? BUNDLE_MAX_DEPTH : BODY_MAX_DEPTH);
  }
}

export function isYamlRequest(ctx: DynContext): boolean {
  return typeof ctx.is(YAML_TYPES) === 'string';
}

export function isJsonLinesRequest(ctx: DynContext): boolean {
  return typeof ctx.is(JSON_LINES_TYPES) === 'string';
}

/** True when the client asked for JSON Lines back (`Accept: application/x-ndjson`). */
export function acceptsJsonLines(ctx: DynContext): boolean {
  return ctx.accepts(JSON_LINES_TYPES) !== false && /ndjson|jsonl|json-lines|jsonlines/i.test(ctx.get('accept'));
}

export async function readBundleBody(ctx: DynContext, limitBytes: number): Promise<unknown> {
  if (!isYamlRequest(ctx)) {
    if (ctx.is('application/json') === null) throw badRequest('A bundle is required: send it as application/json or application/yaml');
    if (typeof ctx.is('application/json') !== 'string') throw new AppError(415, 'Unsupported content type; send a bundle as application/json or application/yaml');
    return (ctx.request as { body?: unknown }).body;
  }
  const text = await readText(ctx, limitBytes);
  let value: unknown;
  try {
    value = parse(text, { maxAliasCount: 100 });
  } catch (error) {
    throw badRequest(`Malformed YAML body: ${(error as Error).message.split('\n')[0]}`);
  }
  // As for JSON: under `data`, keys below a record's top are data (project/data.ts checks the top).
  // The YAML parser makes such a key an own property, never a prototype.
  inspectBundle(value, (inner, depth, path, maxDepth) => inspect(inner, depth, path, maxDepth, path !== 'data'));
  return value;
}

/** YAML as export writes it: no line folding (handler code stays readable), no anchors. */
export function toYaml(value: unknown): string {
  return stringify(value, { lineWidth: 0, aliasDuplicateObjects: false });
}

async function readText(ctx: DynContext, limitBytes: number): Promise<string> {
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limitBytes) throw new AppError(413, `Request body is larger than the limit of ${limitBytes} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) throw new AppError(413, `Request body is larger than the limit of ${limitBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function inspect(value: unknown, depth: number, path: string, maxDepth: number, forbid: boolean): void {
  if (typeof value !== 'object' || value === null) return;
  if (depth > maxDepth) throw badRequest(`Request body is nested more than ${maxDepth} levels deep`);
  for (const [key, inner] of Object.entries(value)) {
    const at = Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    if (forbid && !Array.isArray(value) && FORBIDDEN_KEYS.has(key)) throw badRequest(`Request body contains the forbidden key "${key}"`, [{ field: at, message: 'is a forbidden key' }]);
    inspect(inner, depth + 1, at, maxDepth, forbid);
  }
}
