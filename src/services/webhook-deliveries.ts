// Webhook deliveries (`webhookdeliveries`): one document per (event, hook), written before the
// change that caused it is acknowledged (see webhook-outbox.ts), then claimed, attempted and
// finished by the dispatcher (src/automation/webhooks). The document is both the outbox row and the
// delivery record the API shows; its id is the X-Webhook-Id receivers deduplicate on.
//
// Claiming is a compare-and-set on `lease`: of several instances that read the same due row, the
// one whose conditional update matches (status pending, lease unchanged) wins; the update also
// moves nextAttemptAt to the end of the lease, so a delivery whose instance died is due again then.
import { forbidden, notFound } from '../lib/errors.ts';
import { isId } from '../lib/ids.ts';
import type { Principal } from '../model/principal.ts';
import { isHeld, TEST_EVENT, type DeliveryStatus, type WebhookDeliveryDoc, type WebhookDoc } from '../model/webhook.ts';
import type { NewDoc, Page, Store } from '../store/types.ts';
import { carriesUsers, mayReadUsers } from './webhooks.ts';

export interface AttemptOutcome {
  ok: boolean;
  responseCode: number | null;
  durationMs: number;
  error: string | null;
  /** When to try again; null when no attempt is left (the delivery fails). Ignored when ok. */
  retryAt: Date | null;
}

export class WebhookDeliveriesService {
  private readonly store: Store;

  constructor(store: Store) {
    this.store = store;
  }

  private get deliveries() {
    return this.store.collection<WebhookDeliveryDoc>('webhookdeliveries');
  }

  /** One pending delivery per hook, due now, all in one insert. */
  async enqueue(webhookIds: readonly string[], event: string, body: string): Promise<WebhookDeliveryDoc[]> {
    if (webhookIds.length === 0) return [];
    const now = new Date();
    const docs: NewDoc<WebhookDeliveryDoc>[] = webhookIds.map((webhookId) => ({
      webhookId,
      event,
      body,
      status: 'pending',
      attempts: 0,
      nextAttemptAt: now,
      lease: 0,
      claimedBy: null,
      responseCode: null,
      durationMs: null,
      error: null,
      createdAt: now,
      updatedAt: now,
    }));
    return webhookIds.length === 1 ? [await this.deliveries.insertOne(docs[0] as NewDoc<WebhookDeliveryDoc>)] : this.deliveries.insertMany(docs);
  }

  /** Pending deliveries due by `now`, oldest first. */
  due(now: Date, limit: number): Promise<WebhookDeliveryDoc[]> {
    return this.deliveries.find({ status: 'pending', nextAttemptAt: { $lte: now } }, { sort: { nextAttemptAt: 1 }, limit });
  }

  /** Takes the delivery for `leaseMs` when nobody claimed it since it was read; null when another instance won. */
  claim(row: WebhookDeliveryDoc, instance: string, leaseMs: number): Promise<WebhookDeliveryDoc | null> {
    return this.deliveries.updateOne(
      { _id: row._id, status: 'pending', lease: row.lease },
      { $set: { nextAttemptAt: new Date(Date.now() + leaseMs), claimedBy: instance }, $inc: { lease: 1 } },
    );
  }

  /** Gives a claimed delivery back without counting an attempt (shutdown; HELD_UNTIL: its hook is disabled). */
  release(claimed: WebhookDeliveryDoc, at: Date): Promise<WebhookDeliveryDoc | null> {
    return this.deliveries.updateOne({ _id: claimed._id, lease: claimed.lease }, { $set: { nextAttemptAt: at, claimedBy: null } });
  }

  /** Records an attempt; a no-op (null) when the lease was lost meanwhile. */
  finish(claimed: WebhookDeliveryDoc, outcome: AttemptOutcome): Promise<WebhookDeliveryDoc | null> {
    const status: DeliveryStatus = outcome.ok ? 'delivered' : outcome.retryAt ? 'pending' : 'failed';
    return this.deliveries.updateOne(
      { _id: claimed._id, lease: claimed.lease },
      {
        $set: {
          status,
          responseCode: outcome.responseCode,
          durationMs: outcome.durationMs,
          error: outcome.error,
          claimedBy: null,
          ...(status === 'pending' ? { nextAttemptAt: outcome.retryAt } : {}),
          updatedAt: new Date(),
        },
        $inc: { attempts: 1 },
      },
    );
  }

  list(webhookId: string, query: { page: number; limit: number }): Promise<Page<WebhookDeliveryDoc>> {
    return this.deliveries.findPage({ webhookId }, { page: query.page, limit: query.limit, sort: { createdAt: -1, _id: -1 } });
  }

  async get(webhookId: string, id: string): Promise<WebhookDeliveryDoc> {
    const delivery = isId(id) ? await this.deliveries.findById(id) : null;
    if (!delivery || delivery.webhookId !== webhookId) throw notFound('Delivery not found');
    return delivery;
  }

  /**
   * Queues the delivery again, due now, with a fresh set of attempts (same id, same body). A
   * `user.*` delivery carries a user record: only a principal who may read users redelivers it
   * (the hook's URL may have changed since, see WebhooksService.assertMayChange).
   */
  async redeliver(webhookId: string, id: string, principal: Principal | null): Promise<WebhookDeliveryDoc> {
    const current = await this.get(webhookId, id);
    if (carriesUsers(current.event) && !mayReadUsers(principal)) {
      throw forbidden('Forbidden: redelivering a user.* event requires view or manage_users: it carries a user record');
    }
    const updated = await this.deliveries.updateOne(
      { _id: current._id },
      { $set: { status: 'pending', attempts: 0, nextAttemptAt: new Date(), claimedBy: null, error: null, responseCode: null, durationMs: null, updatedAt: new Date() }, $inc: { lease: 1 } },
    );
    if (!updated) throw notFound('Delivery not found');
    return updated;
  }

  /** Removes finished deliveries older than `days` (pending ones are kept whatever their age). */
  purgeOlderThan(days: number): Promise<number> {
    return this.deliveries.deleteMany({ status: { $in: ['delivered', 'failed'] }, createdAt: { $lt: new Date(Date.now() - days * 86_400_000) } });
  }
}

/**
 * A delivery as the API shows it: never its body (so listing the deliveries of a hook that follows
 * `user.*` shows no user record). `hook`: its hook, whose being disabled holds the delivery.
 */
export function publicDelivery(doc: WebhookDeliveryDoc, hook: Pick<WebhookDoc, 'enabled'>) {
  // A disabled hook's deliveries wait for it to be enabled (except a test's, sent regardless): a
  // retry not yet due when it was disabled has no next attempt either, though the dispatcher holds
  // it (HELD_UNTIL) only when its time comes.
  const waiting = doc.status === 'pending' && !isHeld(doc) && (hook.enabled || doc.event === TEST_EVENT);
  return {
    _id: doc._id,
    webhookId: doc.webhookId,
    event: doc.event,
    status: doc.status,
    attempts: doc.attempts,
    responseCode: doc.responseCode,
    durationMs: doc.durationMs,
    error: doc.error,
    // null also while held for a disabled hook: it has no next attempt until the hook is enabled.
    nextAttemptAt: waiting ? new Date(doc.nextAttemptAt).toISOString() : null,
    createdAt: new Date(doc.createdAt).toISOString(),
    updatedAt: new Date(doc.updatedAt).toISOString(),
  };
}
