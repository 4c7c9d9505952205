import type { EndpointDoc } from '../model/endpoint.ts';
import { compileHandler } from '../sandbox/handler-runner.ts';
import type { CompiledHandler, HandlerLimits } from '../sandbox/handler-types.ts';

/**
 * Compiled handlers, one per endpoint, recompiled only when the endpoint's revision or the
 * handler limits (settings) change. Replaced and removed handlers are disposed.
 */
export class HandlerCache {
  private readonly entries = new Map<string, { key: string; handler: CompiledHandler }>();

  get(doc: EndpointDoc, limits: HandlerLimits): CompiledHandler {
    const key = `${doc.revision}:${limits.memoryMb}:${limits.timeoutMs}`;
    const entry = this.entries.get(doc._id);
    if (entry?.key === key) return entry.handler;
    entry?.handler.dispose();
    const handler = compileHandler(doc.handler.code, limits);
    this.entries.set(doc._id, { key, handler });
    return handler;
  }

  /** Disposes handlers of endpoints that are no longer served. */
  retain(ids: ReadonlySet<string>): void {
    for (const [id, entry] of this.entries) {
      if (!ids.has(id)) {
        entry.handler.dispose();
        this.entries.delete(id);
      }
    }
  }

  close(): void {
    this.retain(new Set());
  }
}
