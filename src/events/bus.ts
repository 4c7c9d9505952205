// The typed in-process event bus. Services emit; subscribers listen in process, and one durable
// sink (the webhook outbox) may store events in the same step as the change: services whose events
// webhooks carry await `emitDurable` before they answer. Adding an event is one line in EventMap.
import { EventEmitter } from 'node:events';

export interface EventMap {
  /** `user` is the user as the API shows it (no password hash); webhooks send it as their data. */
  'user.created': { id: string; login: string; user?: Record<string, unknown> };
  'user.updated': { id: string; login: string; user?: Record<string, unknown> };
  'user.deleted': { id: string; login: string; user?: Record<string, unknown> };
  'group.created': { id: string; name: string };
  'group.updated': { id: string; name: string };
  'group.deleted': { id: string; name: string };
  'settings.updated': { fields: string[] };
  'apikey.created': { id: string; name: string };
  'apikey.revoked': { id: string; name: string };
  /** `endpoint` is the definition as the API shows it; webhooks send it as their data. */
  'endpoint.created': { id: string; path: string; method: string; endpoint?: Record<string, unknown> };
  'endpoint.updated': { id: string; path: string; method: string; previousPath: string; previousMethod: string; endpoint?: Record<string, unknown> };
  'endpoint.deleted': { id: string; path: string; method: string; endpoint?: Record<string, unknown> };
  /**
   * A dynamic call that succeeded (status below 400); `source` says who called (http, test, mcp, cron).
   * `path` is the path asked for (`/api/v1/shop/items/1`), `resourcePath` the definition's path its
   * records live under (`/api/shop/items`, `:param`s filled in).
   */
  'endpoint.called': { endpointId: string; path: string; resourcePath: string; method: string; statusCode: number; source: string };
  /** A dynamic call that failed (4xx/5xx); `path` and `resourcePath` as for `endpoint.called`. */
  'api.error': { endpointId: string | null; path: string; resourcePath?: string; method: string; statusCode: number; error: string; source: string };
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

/**
 * A durable subscriber (the webhook outbox): it writes what it needs of an event to the store.
 * `wants` must be cheap and synchronous (it runs on hot paths); `write` returns undefined when it
 * has nothing to write, else a promise that settles once the write is stored.
 */
export interface DurableSink {
  wants(event: EventName): boolean;
  write(event: EventName, data: unknown): Promise<void> | undefined;
}

export class EventBus {
  private readonly emitter = new EventEmitter();
  private sink: DurableSink | null = null;

  /** Sets the one durable subscriber (see emitDurable). */
  setDurableSink(sink: DurableSink | null): void {
    this.sink = sink;
  }

  /** Whether anyone listens: callers on hot paths skip building an event nobody receives. */
  has(event: EventName): boolean {
    return this.emitter.listenerCount(event) > 0 || (this.sink?.wants(event) ?? false);
  }

  /**
   * Emits and resolves once the durable sink has stored the event: a service that awaits this
   * before answering never acknowledges a change whose event a crash could lose. Rejects when the
   * sink cannot store it (the change is made; the caller's request fails, so its client retries).
   */
  async emitDurable<E extends EventName>(event: E, data: EventMap[E]): Promise<void> {
    const stored = this.sink?.wants(event) ? this.sink.write(event, data) : undefined;
    this.notify(event, data);
    if (stored) await stored;
  }

  /** Emits without waiting: the durable sink's write (if any) completes after the caller moves on. */
  emit<E extends EventName>(event: E, data: EventMap[E]): void {
    if (this.sink?.wants(event)) void this.sink.write(event, data)?.catch(() => undefined);
    this.notify(event, data);
  }

  private notify<E extends EventName>(event: E, data: EventMap[E]): void {
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
