// The JSON-RPC 2.0 envelope checks made before a message reaches the MCP SDK, so that each
// failure gets its standard code (the SDK reports a well-formed JSON value that is not a
// JSON-RPC message, or one whose params are not an object, as a parse error with no id):
//
// | the message                                                   | code   |
// |---------------------------------------------------------------|--------|
// | is not an object; jsonrpc, id or method is wrong; params is   | -32600 |
// | neither an object nor an array (JSON-RPC's Invalid Request)   |        |
// | has params by position, an array: a valid JSON-RPC request,   | -32602 |
// | but every MCP method takes named params                       |        |
//
// A message sent alone gets its id back; a batch is answered with one error naming the message.
// Unknown methods (-32601) and other invalid params (-32602) are answered per message by the
// server itself.
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

function problemOf(message: unknown): Problem | null {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return invalidRequest('a message must be a JSON object');
  const m = message as Record<string, unknown>;
  if (m.jsonrpc !== '2.0') return invalidRequest('jsonrpc must be "2.0"');
  if ('id' in m && !isId(m.id)) return invalidRequest('id must be a string or an integer');
  if ('method' in m) {
    if (typeof m.method !== 'string' || m.method === '' || m.method.length > 128) return invalidRequest('method must be a non-empty string');
    if ('params' in m && (typeof m.params !== 'object' || m.params === null)) return invalidRequest('params must be an object or an array');
    if (Array.isArray(m.params)) return { code: INVALID_PARAMS, message: `${m.method} params must be an object` };
    return null;
  }
  // A response to a request of ours (we send none, but a response is a valid message).
  return isId(m.id) && ('result' in m || 'error' in m) ? null : invalidRequest('a message needs a method');
}

const LABELS = { [INVALID_REQUEST]: 'Invalid Request', [INVALID_PARAMS]: 'Invalid params' };

/** The messages of a parsed body, or the one error to answer with. */
export function checkMessages(body: unknown): { messages: Record<string, unknown>[] } | { error: JsonRpcFailure } {
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
  return { messages: messages as Record<string, unknown>[] };
}

/** The requests among the messages (those with an id and a method: notifications get no answer). */
export function requestsOf(messages: readonly Record<string, unknown>[]): JsonRpcRequest[] {
  return messages.filter((m) => typeof m.method === 'string' && 'id' in m) as unknown as JsonRpcRequest[];
}
