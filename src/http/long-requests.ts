// Requests allowed to take longer than the server's requestTimeout (60 s for receiving a whole
// request, which keeps slow senders from holding connections): a project import streaming records
// of any size, after it has been authenticated and authorised. Node offers no per-request
// timeout, but it hands a request timeout to the server's 'clientError' listener, when there is
// one, instead of answering 408 itself: `clientError` lets such a socket live on and does Node's
// default for every other error. A streamed request still ends when it stalls (its socket's idle
// timeout, set by the route).
import type { Socket } from 'node:net';
import type { DynContext } from './state.ts';

const long = new WeakSet<Socket>();

/** From now until its response ends, this request is not cut off by requestTimeout. */
export function allowLongRequest(ctx: DynContext): void {
  const socket = ctx.req.socket;
  long.add(socket);
  ctx.res.once('close', () => long.delete(socket)); // the next request on a kept-alive connection is ordinary
}

const RESPONSES: Record<string, [status: string, error: string]> = {
  HPE_HEADER_OVERFLOW: ['431 Request Header Fields Too Large', 'Request header fields too large: the request line and headers must fit in 16 kB'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: ['413 Payload Too Large', 'Chunk extensions too large'],
  ERR_HTTP_REQUEST_TIMEOUT: ['408 Request Timeout', 'Request timeout: the whole request must arrive within 60 s'],
};
const MALFORMED: [string, string] = ['400 Bad Request', 'Malformed HTTP request'];

/** The server's 'clientError' listener. */
export function onClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && long.has(socket)) return;
  // Node's default: answer if nothing of a response was written yet, then close.
  const response = (socket as Socket & { _httpMessage?: { _headerSent?: boolean } })._httpMessage;
  if (socket.writable && !response?._headerSent) {
    // The API's error shape, though the request never reached the API.
    const [status, message] = RESPONSES[error.code ?? ''] ?? MALFORMED;
    const body = JSON.stringify({ success: false, error: message });
    socket.write(`HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(error);
}
