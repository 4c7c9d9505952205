// The webhook outbox: the event bus's durable sink. For an event some enabled hook follows, it
// writes one pending delivery per matching hook (one insert) and resolves once they are stored,
// so a service that awaits `emitDurable` acknowledges no change whose deliveries a crash could
// lose. For events nobody follows it writes nothing and answers synchronously: it keeps the table
// of subscribed events built at the `webhooks` revision and trusts it while the revision is known
// unchanged (Revisions.known: no read), which is every call on a quiet store.
import type { DurableSink, EventName, RecordEvent } from '../events/bus.ts';
import type { Logger } from '../lib/logger.ts';
import { WEBHOOK_EVENTS, type WebhookDoc } from '../model/webhook.ts';
import type { Store } from '../store/types.ts';
import type { WebhookDeliveriesService } from './webhook-deliveries.ts';
import type { WebhooksService } from './webhooks.ts';

interface Table {
  revision: number;
  hooks: WebhookDoc[];
  events: Set<string>;
}

const FOLLOWABLE = new Set<string>(WEBHOOK_EVENTS);
/**
 * Call events are stored after the call is answered (not durably), on every dynamic call: for them
 * a table confirmed within LAZY_MS is trusted even when the revision is not known without a read
 * (always so on MongoDB without REVISION_CHECK_MS), so a quiet hot path costs no read. A hook saved
 * on another instance gets them from there within that time.
 */
const LAZY = new Set<string>(['endpoint.called', 'api.error']);
const LAZY_MS = 1000;
type Data = Record<string, unknown>;

/**
 * The `data` a delivery carries, per event: the changed object (a user without secrets, an endpoint
 * definition, a record flat as clients see it), or for calls `{path, method, statusCode}`.
 */
const PAYLOADS: Record<string, (data: Data) => unknown> = {
  'user.created': (d) => d.user ?? { _id: d.id, login: d.login },
  'user.updated': (d) => d.user ?? { _id: d.id, login: d.login },
  'user.deleted': (d) => d.user ?? { _id: d.id, login: d.login },
  'endpoint.created': (d) => d.endpoint ?? { _id: d.id, path: d.path, method: d.method },
  'endpoint.updated': (d) => d.endpoint ?? { _id: d.id, path: d.path, method: d.method },
  'endpoint.deleted': (d) => d.endpoint ?? { _id: d.id, path: d.path, method: d.method },
  'endpoint.called': (d) => ({ path: d.path, method: d.method, statusCode: d.statusCode }),
  'api.error': (d) => ({ path: d.path, method: d.method, statusCode: d.statusCode, error: d.error }),
  'record.created': (d) => (d as unknown as RecordEvent).record,
  'record.updated': (d) => (d as unknown as RecordEvent).record,
  'record.deleted': (d) => (d as unknown as RecordEvent).record,
};

/**
 * The paths a filter compares with, and the endpoint whose group it compares with; null for user
 * events. A definition event: its path. A record event: its resourcePath. A call: the path asked
 * for and the resourcePath of the definition that served it, so `/api/v1/shop/items` (a versioned
 * alias) follows a `/api/shop/items` filter.
 */
function subjectOf(event: string, d: Data): { paths: string[]; endpointId: string | null; groupId?: string | null } | null {
  if (event.startsWith('user.')) return null;
  if (event.startsWith('endpoint.') && event !== 'endpoint.called') {
    const endpoint = d.endpoint as Data | undefined;
    return { paths: [String(d.path)], endpointId: String(d.id), ...(endpoint ? { groupId: (endpoint.groupId as string | null) ?? null } : {}) };
  }
  const paths = typeof d.resourcePath === 'string' && d.resourcePath !== d.path ? [String(d.path), d.resourcePath] : [String(d.path)];
  return { paths, endpointId: (d.endpointId as string | null) ?? null };
}

/** A path filter follows its path and everything below it. */
function isAtOrBelow(path: string, filterPath: string): boolean {
  const base = filterPath.replace(/\/+$/, '') || '/';
  return path === base || path.startsWith(base === '/' ? '/' : `${base}/`);
}

export class WebhookOutbox implements DurableSink {
  private table: Table | null = null;
  private confirmedAt = 0;
  private loading: Promise<Table> | null = null;
  private readonly hooks: WebhooksService;
  private readonly deliveries: WebhookDeliveriesService;
  private readonly store: Store;
  private readonly logger: Logger;
  private readonly onQueued: () => void;

  constructor(deps: { hooks: WebhooksService; deliveries: WebhookDeliveriesService; store: Store; logger: Logger; onQueued: () => void }) {
    this.hooks = deps.hooks;
    this.deliveries = deps.deliveries;
    this.store = deps.store;
    this.logger = deps.logger;
    this.onQueued = deps.onQueued;
  }

  /** Loads the table (at startup, so the first events need no read). */
  async load(): Promise<void> {
    await this.current();
  }

  wants(event: EventName): boolean {
    if (!FOLLOWABLE.has(event)) return false;
    const table = this.table;
    if (!table) return true;
    const known = this.hooks.knownRevision();
    // A table older than a revision this instance has seen (its own save) is never trusted, also
    // when another connection's write since (the audit worker's, say) leaves the revision unknown.
    const fresh =
      known === table.revision ||
      (known === null && LAZY.has(event) && (this.hooks.revisionAtLeast() ?? 0) <= table.revision && performance.now() - this.confirmedAt < LAZY_MS);
    if (!fresh) return true; // unsure: look
    return table.events.has(event) || table.events.has('*');
  }

  write(event: EventName, data: unknown): Promise<void> | undefined {
    if (!this.wants(event)) return undefined;
    return this.enqueueFor(event, data as Data).catch((error: unknown) => {
      this.logger.error('webhooks: storing an event for delivery failed', { event, error });
      throw error;
    });
  }

  private async enqueueFor(event: EventName, data: Data): Promise<void> {
    const table = await this.current();
    const candidates = table.hooks.filter((hook) => hook.events.includes('*') || hook.events.includes(event));
    if (candidates.length === 0) return;
    const matched: string[] = [];
    for (const hook of candidates) if (await this.matches(hook, event, data)) matched.push(hook._id);
    if (matched.length === 0) return;
    const body = JSON.stringify({ event, timestamp: new Date().toISOString(), data: (PAYLOADS[event] as (d: Data) => unknown)(data) });
    await this.deliveries.enqueue(matched, event, body);
    this.onQueued();
  }

  private async matches(hook: WebhookDoc, event: string, data: Data): Promise<boolean> {
    const filter = hook.filter;
    if (!filter) return true;
    const subject = subjectOf(event, data);
    if (!subject) return false;
    if (filter.path !== undefined) return subject.paths.some((path) => isAtOrBelow(path, filter.path as string));
    if (filter.group !== undefined) {
      const group = await this.store.collection('endpointgroups').findOne({ nameKey: filter.group.toLowerCase() });
      if (!group) return false;
      let groupId = subject.groupId;
      if (groupId === undefined && subject.endpointId) groupId = ((await this.store.collection('endpoints').findById(subject.endpointId))?.groupId as string | null | undefined) ?? null;
      return groupId === group._id;
    }
    return true;
  }

  /** The table at the current revision or later; concurrent callers share one reload. */
  private async current(): Promise<Table> {
    const revision = await this.hooks.revision();
    this.confirmedAt = performance.now();
    if (this.table && this.table.revision >= revision) return this.table;
    const shared = await (this.loading ??= this.reload().finally(() => {
      this.loading = null;
    }));
    // A reload that began before this revision was read may have missed the change.
    return shared.revision >= revision ? shared : this.reload();
  }

  private async reload(): Promise<Table> {
    // The revision first: a change made while the hooks are read shows as a newer revision later.
    const revision = await this.hooks.revision();
    const hooks = (await this.hooks.all()).filter((hook) => hook.enabled);
    const table = { revision, hooks, events: new Set(hooks.flatMap((hook) => hook.events)) };
    if (!this.table || this.table.revision <= revision) this.table = table;
    return table;
  }
}
