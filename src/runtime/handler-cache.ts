import type { EndpointDoc } from '../model/endpoint.ts';
import { compileHandler } from '../sandbox/handler-runner.ts';
import type { CompiledHandler, HandlerLimits } from '../sandbox/handler-types.ts';

/**
 * Compiled handlers, one per endpoint, recompiled only when the endpoint's revision or the
 * handler limits (settings) change. A replaced handler is disposed at once; handlers of endpoints
 * that were deleted, disabled, lost their handler or changed are disposed when the route table is
 * rebuilt (`retain`). Disposal waits for runs in flight, so a request on the old code finishes.
 */
export class HandlerCache {
  private readonly entries = new Map<string, { key: string; revision: number; handler: CompiledHandler }>();

  get(doc: EndpointDoc, limits: HandlerLimits): CompiledHandler {
    const key = `${doc.revision}:${limits.memoryMb}:${limits.timeoutMs}`;
    const entry = this.entries.get(doc._id);
    if (entry?.key === key) return entry.handler;
    entry?.handler.dispose();
    const handler = compileHandler(doc.handler.code, limits);
    this.entries.set(doc._id, { key, revision: doc.revision, handler });
    return handler;
  }

  /** Keeps only the handlers of these endpoints at these revisions (endpoint id → revision). */
  retain(served: ReadonlyMap<string, number>): void {
    for (const [id, entry] of this.entries) {
      if (served.get(id) !== entry.revision) {
        entry.handler.dispose();
        this.entries.delete(id);
      }
    }
  }

  close(): void {
    this.retain(new Map());
  }
}
