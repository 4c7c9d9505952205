// The JSON-RPC 2.0 envelope checks made before a message reaches the MCP SDK, so that each
// failure gets its standard code and nothing of a refused message runs (the SDK would report a
// well-formed JSON value that is not a JSON-RPC message, or one with a member too many, as a
// parse error with no id):
//
// | the message                                                    | code   |
// |----------------------------------------------------------------|--------|
// | is not an object; jsonrpc, id or method is wrong (an id must   | -32600 |
// | be a string or a safe integer: a bigger number has already     |        |
// | been rounded by JSON parsing); params is neither an object nor |        |
// | an array; a member JSON-RPC does not define (`"extra": 1`, a   |        |
// | misspelt `"param"`); nested too deep (message-shape.ts)        |        |
// | (Invalid Request)                                              |        |
// | has params by position, an array: a valid JSON-RPC request,    | -32602 |
// | but every MCP method takes named params; a key `__proto__`,    |        |
// | `constructor` or `prototype` in params (message-shape.ts); a   |        |
// | member the method does not take, or one missing or of the      |        |
// | wrong type (method-params.ts) (Invalid params)                 |        |
//
// and for a batch, where JSON-RPC matches answers to requests by id alone, these refuse it whole:
//
// | the batch                                                      | code   |
// |----------------------------------------------------------------|--------|
// | is empty, or holds more than MAX_BATCH messages                | -32600 |
// | has two requests with one id (both would run, one be answered) | -32600 |
// | holds `initialize` (MCP 2025-03-26, the last revision with     | -32600 |
// | batches: it "MUST NOT be part of a JSON-RPC batch")            |        |
//
// Otherwise each message of a batch is judged alone (JSON-RPC 2.0 §6): a refused one gets its
// error, in its place in the answer, and the others run. An error carries the message's id when
// the message has a usable one, and null otherwise. Extra members are refused rather than
// ignored: JSON-RPC 2.0 lists a request's members, the SDK's message schemas are strict, and a
// silently dropped `"param"` would run a method without its arguments. Unknown methods (-32601)
// and other invalid params (-32602) are answered per message by the server itself.
import type * as z from 'zod';
import { JSONRPCErrorResponseSchema, JSONRPCNotificationSchema, JSONRPCRequestSchema, JSONRPCResultResponseSchema } from '@modelcontextprotocol/sdk/types.js';
import { paramsProblem } from './method-params.ts';
import { MESSAGE_MAX_DEPTH, shapeProblem } from './message-shape.ts';

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;

/** Messages in one batch: MCP clients send one at a time; a batch is bounded all the same. */
export const MAX_BATCH = 20;

export type JsonRpcId = string | number;

export interface JsonRpcFailure {
  jsonrpc: '2.0';
  id: JsonRpcId | null;
  error: { code: number; message: string; data?: unknown };
}

export const rpcError = (code: number, message: string, id: JsonRpcId | null = null): JsonRpcFailure => ({ jsonrpc: '2.0', id, error: { code, message } });

/**
 * An error a method handler throws, sent as it is: the SDK answers `{code, message, data}` from
 * any error, and its McpError would prefix the message with "MCP error <code>: ".
 */
export class RpcMethodError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id?: JsonRpcId;
  method: string;
  params?: unknown;
}

// A number beyond 2^53 was rounded by JSON.parse: answering it would name another id.
const isId = (value: unknown): value is JsonRpcId => typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));

/** The id to answer a message with: its own when usable, else null (JSON-RPC 2.0 §5). */
export const idOf = (message: unknown): JsonRpcId | null => {
  const id = typeof message === 'object' && message !== null ? (message as { id?: unknown }).id : undefined;
  return isId(id) ? id : null;
};

interface Problem {
  code: typeof INVALID_REQUEST | typeof INVALID_PARAMS;
  message: string;
}

const invalidRequest = (message: string): Problem => ({ code: INVALID_REQUEST, message });
const invalidParams = (message: string): Problem => ({ code: INVALID_PARAMS, message });

/** The members JSON-RPC 2.0 defines, per kind of message. */
const MEMBERS = { request: ['jsonrpc', 'id', 'method', 'params'], response: ['jsonrpc', 'id', 'result', 'error'] };

function extraMember(m: Record<string, unknown>, allowed: readonly string[], kind: string): Problem | null {
  const extra = Object.keys(m).find((key) => !allowed.includes(key));
  return extra === undefined ? null : invalidRequest(`unknown member "${extra.slice(0, 64)}": a ${kind} has only ${allowed.join(', ')}`);
}

function problemOf(message: unknown): Problem | null {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return invalidRequest('a message must be a JSON object');
  const m = message as Record<string, unknown>;
  if (m.jsonrpc !== '2.0') return invalidRequest('jsonrpc must be "2.0"');
  if ('id' in m && !isId(m.id)) return invalidRequest('id must be a string or an integer of at most 2^53 - 1 in size');
  if ('method' in m) return requestProblem(m);
  // A response to a request of ours (we send none, but a response is a valid message).
  if (!isId(m.id) || ('result' in m) === ('error' in m)) return invalidRequest('a message needs a method (or, as a response, an id and one of result and error)');
  return extraMember(m, MEMBERS.response, 'response') ?? shapeOf(m) ?? sdkProblem(m, 'result' in m ? JSONRPCResultResponseSchema : JSONRPCErrorResponseSchema, INVALID_REQUEST, '');
}

/** A request's or a notification's problem, in the order of the table at the top. */
function requestProblem(m: Record<string, unknown>): Problem | null {
  if (typeof m.method !== 'string' || m.method === '' || m.method.length > 128) return invalidRequest('method must be a non-empty string');
  if ('params' in m && (typeof m.params !== 'object' || m.params === null)) return invalidRequest('params must be an object or an array');
  const extra = extraMember(m, MEMBERS.request, 'request') ?? shapeOf(m);
  if (extra) return extra;
  if (Array.isArray(m.params)) return invalidParams(`${m.method} params must be an object`);
  const wrong = sdkProblem(m, 'id' in m ? JSONRPCRequestSchema : JSONRPCNotificationSchema, INVALID_PARAMS, `${m.method} `);
  // A notification is not answered: what its params lack does not matter.
  if (wrong || !('id' in m)) return wrong;
  const params = paramsProblem(m.method, m.params as Record<string, unknown> | undefined);
  return params ? invalidParams(`${m.method} ${params}`) : null;
}

function shapeOf(m: Record<string, unknown>): Problem | null {
  const problem = shapeProblem(m);
  if (!problem) return null;
  if ('tooDeep' in problem) return invalidRequest(`the message is nested more than ${MESSAGE_MAX_DEPTH} levels deep (a tool's body may be nested as deep as on a direct call)`);
  return invalidParams(`${String(m.method)} ${problem.at.slice(0, 200)}: the key "${problem.forbiddenKey}" is not allowed`);
}

/**
 * What the SDK's own message schema finds wrong with a message the checks above let through
 * (`params._meta` of the wrong type, a result that is not an object), so that it too is answered
 * here with its id instead of as the SDK's parse error.
 */
function sdkProblem(m: Record<string, unknown>, schema: z.ZodType, code: Problem['code'], prefix: string): Problem | null {
  const checked = schema.safeParse(m);
  if (checked.success) return null;
  const issue = checked.error.issues[0];
  const field = issue ? issue.path.map(String).join('.') : '';
  return { code, message: `${prefix}${field || 'message'}: ${issue?.message ?? 'invalid'}`.slice(0, 300) };
}

const LABELS = { [INVALID_REQUEST]: 'Invalid Request', [INVALID_PARAMS]: 'Invalid params' };

/** One message of a body: handed to the server, or refused here with its error. */
export type Entry = { message: Record<string, unknown> } | { refused: JsonRpcFailure };

/**
 * The messages of a parsed body, each to run or refused, and whether it was a batch; or the
 * one error that refuses the body whole.
 */
export function checkBody(body: unknown): { entries: Entry[]; batch: boolean } | { error: JsonRpcFailure } {
  const batch = Array.isArray(body);
  const messages = (batch ? body : [body]) as unknown[];
  if (batch && messages.length === 0) return { error: rpcError(INVALID_REQUEST, 'Invalid Request: empty batch') };
  if (messages.length > MAX_BATCH) return { error: rpcError(INVALID_REQUEST, `Invalid Request: a batch holds at most ${MAX_BATCH} messages`) };
  const refusedWhole = batch ? batchProblem(messages) : null;
  if (refusedWhole) return { error: rpcError(INVALID_REQUEST, `Invalid Request: ${refusedWhole}`) };
  const entries = messages.map((message, index): Entry => {
    const problem = problemOf(message);
    if (!problem) return { message: message as Record<string, unknown> };
    return { refused: rpcError(problem.code, `${LABELS[problem.code]}: ${batch ? `message ${index}: ` : ''}${problem.message}`, idOf(message)) };
  });
  return { entries, batch };
}

/**
 * Why a batch is refused before any of it runs, if it is: rules about the batch rather than one
 * message, read from each message with a method and a usable id, whatever else is wrong with it
 * (a refused message's error carries its id too).
 */
function batchProblem(messages: readonly unknown[]): string | null {
  const seen = new Map<JsonRpcId, number>();
  for (const [index, message] of messages.entries()) {
    const method = typeof message === 'object' && message !== null ? (message as { method?: unknown }).method : undefined;
    if (method === 'initialize') return `message ${index}: initialize must be sent alone, not in a batch (MCP lifecycle)`;
    const id = idOf(message);
    if (method === undefined || id === null) continue;
    const first = seen.get(id);
    // The SDK answers by id: both requests would run and one answer would be lost.
    if (first !== undefined) return `message ${index}: id ${JSON.stringify(id).slice(0, 80)} is already the id of message ${first}; each request of a batch needs its own id`;
    seen.set(id, index);
  }
  return null;
}

/** The requests among the messages (those with an id and a method: notifications get no answer). */
export function requestsOf(messages: readonly Record<string, unknown>[]): JsonRpcRequest[] {
  return messages.filter((m) => typeof m.method === 'string' && 'id' in m) as unknown as JsonRpcRequest[];
}
