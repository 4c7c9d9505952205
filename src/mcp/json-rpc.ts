// The JSON-RPC 2.0 envelope checks made before a message reaches the MCP SDK, so that each
// failure gets its standard code (the SDK reports a well-formed JSON value that is not a
// JSON-RPC message as a parse error). Unknown methods (-32601) and invalid params (-32602) are
// answered per message by the server itself.
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

function problemOf(message: unknown): string | null {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return 'a message must be a JSON object';
  const m = message as Record<string, unknown>;
  if (m.jsonrpc !== '2.0') return 'jsonrpc must be "2.0"';
  if ('id' in m && !isId(m.id)) return 'id must be a string or an integer';
  if ('method' in m) {
    if (typeof m.method !== 'string' || m.method === '' || m.method.length > 128) return 'method must be a non-empty string';
    if ('params' in m && (typeof m.params !== 'object' || m.params === null)) return 'params must be an object or an array';
    return null;
  }
  // A response to a request of ours (we send none, but a response is a valid message).
  return isId(m.id) && ('result' in m || 'error' in m) ? null : 'a message needs a method';
}

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
      return { error: rpcError(INVALID_REQUEST, `Invalid Request: ${batch ? `message ${index}: ` : ''}${problem}`, id) };
    }
  }
  return { messages: messages as Record<string, unknown>[] };
}

/** The requests among the messages (those with an id and a method: notifications get no answer). */
export function requestsOf(messages: readonly Record<string, unknown>[]): JsonRpcRequest[] {
  return messages.filter((m) => typeof m.method === 'string' && 'id' in m) as unknown as JsonRpcRequest[];
}
