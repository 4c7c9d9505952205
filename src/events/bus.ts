import { EventEmitter } from 'node:events';

/**
 * The typed in-process event bus. Services emit; later issues subscribe (webhooks, cron).
 * Adding an event is one line in EventMap.
 */
export interface EventMap {
  'user.created': { id: string; login: string };
  'user.updated': { id: string; login: string };
  'user.deleted': { id: string; login: string };
  'group.created': { id: string; name: string };
  'group.updated': { id: string; name: string };
  'group.deleted': { id: string; name: string };
  'settings.updated': { fields: string[] };
  'apikey.created': { id: string; name: string };
  'apikey.revoked': { id: string; name: string };
  'endpoint.created': { id: string; path: string; method: string };
  'endpoint.updated': { id: string; path: string; method: string; previousPath: string; previousMethod: string };
  'endpoint.deleted': { id: string; path: string; method: string };
  /** A dynamic call that succeeded (status below 400); `source` says who called (http, test, mcp, cron). */
  'endpoint.called': { endpointId: string; path: string; method: string; statusCode: number; source: string };
  /** A dynamic call that failed (4xx/5xx). */
  'api.error': { endpointId: string | null; path: string; method: string; statusCode: number; error: string; source: string };
  /**
   * A record written through an endpoint (CRUD or a handler's db). `path` is its resourcePath,
   * `endpointId` the definition that wrote it, `record` the record as clients see it
   * (`{_id, ...data, createdAt, updatedAt}`; for a delete, as it was).
   */
  'record.created': RecordEvent;
  'record.updated': RecordEvent;
  'record.deleted': RecordEvent;
  'records.moved': { endpointId: string; from: string; to: string; count: number };
  'endpointgroup.created': { id: string; name: string };
  'endpointgroup.updated': { id: string; name: string; previousName: string };
  'endpointgroup.deleted': { id: string; name: string };
}

export interface RecordEvent {
  path: string;
  endpointId: string;
  recordId: string;
  record: Record<string, unknown>;
}

export type EventName = keyof EventMap;

export class EventBus {
  private readonly emitter = new EventEmitter();

  /** Whether anyone listens: callers on hot paths skip building an event nobody receives. */
  has(event: EventName): boolean {
    return this.emitter.listenerCount(event) > 0;
  }

  emit<E extends EventName>(event: E, data: EventMap[E]): void {
    // A failing subscriber must never break the request that emitted the event.
    for (const listener of this.emitter.listeners(event)) {
      try {
        void Promise.resolve((listener as (d: EventMap[E]) => unknown)(data)).catch(() => undefined);
      } catch {
        // ignored on purpose: see above
      }
    }
  }

  on<E extends EventName>(event: E, listener: (data: EventMap[E]) => unknown): () => void {
    this.emitter.on(event, listener);
    return () => this.emitter.off(event, listener);
  }
}
