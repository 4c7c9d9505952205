/**
 * How deep a request body may nest (objects and arrays), on every route that reads one: the HTTP
 * body middleware and the MCP route (a tool's `body`, below its JSON-RPC envelope) share it.
 */
export const BODY_MAX_DEPTH = 32;
