import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP listener on 127.0.0.1 that records what webhooks send it. `answer` decides each
 * response (default 200); `connections` counts TCP connections, so a test can assert that a
 * refused target got none.
 */
export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export class WebhookReceiver {
  received: Received[] = [];
  connections = 0;
  answer: (request: Received, index: number) => { status: number; body?: string; headers?: Record<string, string> } | 'hang' = () => ({ status: 200, body: 'ok' });
  private server: Server | null = null;
  port = 0;

  async listen(port = 0): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        this.received.push(request);
        const answer = this.answer(request, this.received.length - 1);
        if (answer === 'hang') return;
        res.writeHead(answer.status, answer.headers ?? {});
        res.end(answer.body ?? '');
      });
    });
    server.on('connection', () => this.connections++);
    server.listen(port, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  reset(): void {
    this.received = [];
    this.connections = 0;
    this.answer = () => ({ status: 200, body: 'ok' });
  }

  /** The requests to `path` (all of them without one). */
  requestsTo(path?: string): Received[] {
    return path === undefined ? this.received : this.received.filter((r) => r.url === path);
  }

  /** Resolves once `count` requests (to `path`, if given) arrived; throws after `ms`. */
  async waitFor(count: number, options: { ms?: number; path?: string } = {}): Promise<Received[]> {
    const until = Date.now() + (options.ms ?? 10_000);
    while (this.requestsTo(options.path).length < count) {
      if (Date.now() > until) throw new Error(`expected ${count} webhook requests, got ${this.requestsTo(options.path).length}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return this.requestsTo(options.path);
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
    this.server = null;
  }
}
