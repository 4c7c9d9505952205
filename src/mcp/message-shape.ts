// How deep a JSON-RPC message may nest and which keys its params may hold, checked before the
// SDK sees it, so that a tool call takes the body a direct call takes (http/middleware/body.ts
// checks an HTTP body the same way):
//
// | part of the message                  | nesting                                  | keys `__proto__`, `constructor`, `prototype` |
// |--------------------------------------|------------------------------------------|------------------------------------------|
// | `params.arguments.body` (tools/call) | 32 levels below the body, as on HTTP     | left to the record schema, as on HTTP    |
// | the rest of `params`                 | the same bound, counted from the message | refused (invalid params)                 |
//
// The envelope puts a tool's body BODY_LEVEL levels down (message → params → arguments → body),
// so the message as a whole may nest that much more than an HTTP body. The keys are refused in
// the rest of params because the SDK copies params' members into new objects, where a
// `__proto__` member would set the copy's prototype instead of being a member; a tool's body is
// handed on as parsed (an own data property, as JSON.parse makes it), exactly as an HTTP body.
import { BODY_MAX_DEPTH } from '../lib/body-limits.ts';

/** How far down a message a tool's body sits: params, arguments, body. */
const BODY_LEVEL = 3;
export const MESSAGE_MAX_DEPTH = BODY_MAX_DEPTH + BODY_LEVEL;

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export type ShapeProblem = { tooDeep: true } | { forbiddenKey: string; at: string };

/** What of its shape keeps a message from being handed to the SDK, if anything. */
export function shapeProblem(message: Record<string, unknown>): ShapeProblem | null {
  const body = message.method === 'tools/call' ? toolBodyOf(message.params) : undefined;
  for (const [key, member] of Object.entries(message)) {
    // The message's own members are JSON-RPC's (json-rpc.ts refuses any other); params' are checked.
    const problem = walk(member, { depth: 1, path: key, checkKeys: key === 'params', body });
    if (problem) return problem;
  }
  return null;
}

/** `params.arguments.body`, the object or array a tool call hands to the endpoint, if it is one. */
function toolBodyOf(params: unknown): unknown {
  const args = typeof params === 'object' && params !== null ? (params as { arguments?: unknown }).arguments : undefined;
  return typeof args === 'object' && args !== null ? (args as { body?: unknown }).body : undefined;
}

interface Place {
  depth: number;
  /** Where the value is (kept while keys are checked, to name the place of a forbidden one). */
  path: string;
  /** Whether the value's members are checked: below params, down to the tool's body. */
  checkKeys: boolean;
  body: unknown;
}

function walk(value: unknown, { depth, path, checkKeys, body }: Place): ShapeProblem | null {
  if (typeof value !== 'object' || value === null) return null;
  if (depth > MESSAGE_MAX_DEPTH) return { tooDeep: true };
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((item, index) => [`[${index}]`, item]) : Object.entries(value).map(([key, member]) => [`.${key}`, member]);
  for (const [step, member] of entries) {
    if (checkKeys && FORBIDDEN_KEYS.has(step.slice(1))) return { forbiddenKey: step.slice(1), at: path };
    // The body itself is not checked (it is one parsed JSON value, never the same object as another part).
    const inner = checkKeys && member !== body;
    const problem = walk(member, { depth: depth + 1, path: inner ? path + step : path, checkKeys: inner, body });
    if (problem) return problem;
  }
  return null;
}
