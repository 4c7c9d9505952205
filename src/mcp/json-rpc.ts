// The JSON-RPC 2.0 envelope checks made before a message reaches the MCP SDK, so that each
// failure gets its standard code and nothing of a refused body runs (the SDK would report a
// well-formed JSON value that is not a JSON-RPC message, or one with a member too many, as a
// parse error with no id):
//
// | the message                                                    | code   |
// |----------------------------------------------------------------|--------|
// | is not an object; jsonrpc, id or method is wrong; params is    | -32600 |
// | neither an object nor an array; a member JSON-RPC does not     |        |
// | define (`"extra": 1`, a misspelt `"param"`) (Invalid Request)  |        |
// | has params by position, an array: a valid JSON-RPC request,    | -32602 |
// | but every MCP method takes named params                        |        |
//
// and for a batch, where JSON-RPC matches answers to requests by id alone:
//
// | the batch                                                      | code   |
// |----------------------------------------------------------------|--------|
// | is empty, or holds more than MAX_BATCH messages                | -32600 |
// | has two requests with one id (both would run, one be answered) | -32600 |
// | holds `initialize` (MCP 2025-03-26, the last revision with     | -32600 |
// | batches: it "MUST NOT be part of a JSON-RPC batch")            |        |
//
// A message sent alone gets its id back; a batch is refused whole, with one error naming the
// message. Extra members are refused rather than ignored: JSON-RPC 2.0 lists a request's members,
// the SDK's message schemas are strict, and a silently dropped `"param"` would run a method
// without its arguments. Unknown methods (-32601) and other invalid params (-32602) are answered
// per message by the server itself.
import type * as z from 'zod';
import { JSONRPCErrorResponseSchema, JSONRPCNotificationSchema, JSONRPCRequestSchema, JSONRPCResultResponseSchema } from '@modelcontextprotocol/sdk/types.js';

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;

/** Messages in one batch: MCP clients send one at a time; a batch is bounded all the same. */
export const MAX_BATCH = 20;

export interface JsonRpcFailure {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string };
}

export const rpcError = (code: number, message: string, id: string | number | null = null): JsonRpcFailure => ({ jsonrpc: '2.0', id, error: { code, message } });

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id?: string | number;
  method: string;
  params?: unknown;
}

const isId = (value: unknown): value is string | number => typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value));

interface Problem {
  code: typeof INVALID_REQUEST | typeof INVALID_PARAMS;
  message: string;
}

const invalidRequest = (message: string): Problem => ({ code: INVALID_REQUEST, message });

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
  if ('id' in m && !isId(m.id)) return invalidRequest('id must be a string or an integer');
  if ('method' in m) {
    if (typeof m.method !== 'string' || m.method === '' || m.method.length > 128) return invalidRequest('method must be a non-empty string');
    if ('params' in m && (typeof m.params !== 'object' || m.params === null)) return invalidRequest('params must be an object or an array');
    const extra = extraMember(m, MEMBERS.request, 'request');
    if (extra) return extra;
    if (Array.isArray(m.params)) return { code: INVALID_PARAMS, message: `${m.method} params must be an object` };
    return sdkProblem(m, 'id' in m ? JSONRPCRequestSchema : JSONRPCNotificationSchema, INVALID_PARAMS, `${m.method} `);
  }
  // A response to a request of ours (we send none, but a response is a valid message).
  if (!isId(m.id) || ('result' in m) === ('error' in m)) return invalidRequest('a message needs a method (or, as a response, an id and one of result and error)');
  return extraMember(m, MEMBERS.response, 'response') ?? sdkProblem(m, 'result' in m ? JSONRPCResultResponseSchema : JSONRPCErrorResponseSchema, INVALID_REQUEST, '');
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

/** The messages of a parsed body and whether it was a batch, or the one error to answer with. */
export function checkMessages(body: unknown): { messages: Record<string, unknown>[]; batch: boolean } | { error: JsonRpcFailure } {
  const batch = Array.isArray(body);
  const messages = (batch ? body : [body]) as unknown[];
  if (batch && messages.length === 0) return { error: rpcError(INVALID_REQUEST, 'Invalid Request: empty batch') };
  if (messages.length > MAX_BATCH) return { error: rpcError(INVALID_REQUEST, `Invalid Request: a batch holds at most ${MAX_BATCH} messages`) };
  for (const [index, message] of messages.entries()) {
    const problem = problemOf(message);
    if (problem) {
      const id = !batch && isId((message as { id?: unknown } | null)?.id) ? (message as { id: string | number }).id : null;
      return { error: rpcError(problem.code, `${LABELS[problem.code]}: ${batch ? `message ${index}: ` : ''}${problem.message}`, id) };
    }
  }
  const checked = messages as Record<string, unknown>[];
  const refused = batch ? batchProblem(checked) : null;
  return refused ? { error: rpcError(INVALID_REQUEST, `Invalid Request: ${refused}`) } : { messages: checked, batch };
}

/** Why a batch of well-formed messages is refused before any of it runs, if it is. */
function batchProblem(messages: readonly Record<string, unknown>[]): string | null {
  const seen = new Map<string | number, number>();
  for (const [index, message] of messages.entries()) {
    if (message.method === 'initialize') return `message ${index}: initialize must be sent alone, not in a batch (MCP lifecycle)`;
    if (typeof message.method !== 'string' || !('id' in message)) continue;
    const id = message.id as string | number;
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
