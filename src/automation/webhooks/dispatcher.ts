// Sends webhook deliveries off the request path. Every POLL_MS (and at once when this instance
// queues one) it reads the due deliveries, claims each it has room for (a compare-and-set in the
// store, so of several instances exactly one sends an attempt), and POSTs it under the outbound
// policy with a 10 s time-out, no redirects followed and the response body capped. Each attempt is
// recorded on the delivery, on the hook (health), in the audit log (`webhook_dispatch`) and in the
// daily counters; a failure is retried on the backoff schedule (backoff.ts) until MAX_ATTEMPTS,
// then the delivery is `failed` and stays listed, redeliverable.
//
// At least once: a delivery is finished only after the receiver answered, so an instance that dies
// mid-attempt leaves it claimed until its lease ends, and another (or the restarted) instance sends
// it again under the same X-Webhook-Id.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../lib/logger.ts';
import { HELD_UNTIL, TEST_EVENT, type WebhookDeliveryDoc, type WebhookDoc } from '../../model/webhook.ts';
import type { AuditLog } from '../../services/audit-log.ts';
import type { DailyStats } from '../../services/daily-stats.ts';
import type { SettingsService } from '../../services/settings.ts';
import type { WebhookDeliveriesService } from '../../services/webhook-deliveries.ts';
import type { WebhooksService } from '../../services/webhooks.ts';
import { outboundPolicyFor } from '../outbound-policy.ts';
import { nextAttemptAt } from './backoff.ts';
import { signature } from './signature.ts';

const POLL_MS = 500;
const BATCH = 50;
const TIMEOUT_MS = 10_000;
/** A claim outlives the longest attempt by far; after it the delivery is due again. */
const LEASE_MS = 30_000;
const MAX_RESPONSE_BYTES = 2048;
const PER_HOOK = 3;
const TOTAL = 32;
/** Shutdown waits this long for attempts to record their outcome after they are cancelled. */
const DRAIN_MS = 5_000;

interface Deps {
  hooks: WebhooksService;
  deliveries: WebhookDeliveriesService;
  settings: SettingsService;
  audit: AuditLog;
  daily: DailyStats;
  logger: Logger;
  retryBaseMs: number;
}

export class WebhookDispatcher {
  private readonly deps: Deps;
  private readonly instance = randomUUID();
  private readonly inFlight = new Map<string, number>();
  private readonly running = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private again = false;
  private closed = false;
  /** Aborted by close(): attempts under way stop and give their deliveries back. */
  private readonly shutdown = new AbortController();

  constructor(deps: Deps) {
    this.deps = deps;
  }

  start(): void {
    this.timer = setInterval(() => this.wake(), POLL_MS);
    this.timer.unref();
    this.wake();
  }

  /** Looks for due deliveries now (called when this instance queued some). */
  wake(): void {
    if (this.closed) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = this.tick()
      .catch((error: unknown) => this.deps.logger.warn('webhooks: reading due deliveries failed', { error }))
      .finally(() => {
        this.ticking = null;
        if (this.again) {
          this.again = false;
          setImmediate(() => this.wake());
        }
      });
  }

  /** Sends a delivery this instance just queued (POST /:id/test) and resolves with it as finished. */
  async sendNow(row: WebhookDeliveryDoc): Promise<WebhookDeliveryDoc> {
    this.reserve(row.webhookId);
    try {
      const claimed = await this.deps.deliveries.claim(row, this.instance, LEASE_MS);
      if (!claimed) return row;
      return (await this.track(this.attempt(claimed))) ?? claimed;
    } finally {
      this.unreserve(row.webhookId);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.shutdown.abort();
    await this.ticking;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.running]), new Promise((resolve) => (timer = setTimeout(resolve, DRAIN_MS)))]);
    clearTimeout(timer);
  }

  private async tick(): Promise<void> {
    const due = await this.deps.deliveries.due(new Date(), BATCH);
    for (const row of due) {
      if (this.closed || this.running.size >= TOTAL) return;
      if ((this.inFlight.get(row.webhookId) ?? 0) >= PER_HOOK) continue;
      // The slot is taken before the claim is awaited, so this loop cannot overfill a hook.
      this.reserve(row.webhookId);
      const claimed = await this.deps.deliveries.claim(row, this.instance, LEASE_MS).catch((error: unknown) => {
        this.unreserve(row.webhookId);
        throw error;
      });
      if (!claimed) {
        this.unreserve(row.webhookId); // another instance won it
        continue;
      }
      void this.track(this.attempt(claimed)).finally(() => this.unreserve(row.webhookId));
    }
  }

  private reserve(hookId: string): void {
    this.inFlight.set(hookId, (this.inFlight.get(hookId) ?? 0) + 1);
  }

  private unreserve(hookId: string): void {
    const left = (this.inFlight.get(hookId) ?? 1) - 1;
    if (left > 0) this.inFlight.set(hookId, left);
    else this.inFlight.delete(hookId);
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.running.add(work);
    void work.finally(() => this.running.delete(work)).catch(() => undefined);
    return work;
  }

  private async attempt(claimed: WebhookDeliveryDoc): Promise<WebhookDeliveryDoc | null> {
    const { hooks, deliveries } = this.deps;
    try {
      const hook = await hooks.get(claimed.webhookId).catch(() => null);
      if (!hook) return await deliveries.finish(claimed, { ok: false, responseCode: null, durationMs: 0, error: 'The webhook was deleted', retryAt: null });
      if (!hook.enabled && claimed.event !== TEST_EVENT) return await this.hold(claimed);
      return await this.send(hook, claimed);
    } catch (error) {
      // The store failed: the claim runs out and the delivery is tried again then.
      this.deps.logger.warn('webhooks: an attempt could not be recorded', { delivery: claimed._id, error });
      return null;
    }
  }

  /**
   * Holds the delivery of a disabled hook until the hook is enabled again, which makes its held
   * deliveries due at once. Enabled between this instance's read of the hook and the hold, the
   * enabling write ran before the read below: the delivery is given back due now.
   */
  private async hold(claimed: WebhookDeliveryDoc): Promise<WebhookDeliveryDoc | null> {
    const held = await this.deps.deliveries.release(claimed, HELD_UNTIL);
    const hook = await this.deps.hooks.get(claimed.webhookId).catch(() => null);
    return hook?.enabled ? this.deps.deliveries.release(claimed, new Date()) : held;
  }

  private async send(hook: WebhookDoc, claimed: WebhookDeliveryDoc): Promise<WebhookDeliveryDoc | null> {
    const { hooks, deliveries, settings, audit, daily, retryBaseMs } = this.deps;
    const timestamp = String(Math.floor(Date.now() / 1000));
    const headers: Record<string, string> = {
      'user-agent': 'dyn-webhooks',
      ...hook.headers,
      'content-type': 'application/json',
      'x-webhook-id': claimed._id,
      'x-webhook-event': claimed.event,
      'x-webhook-timestamp': timestamp,
      ...(hook.secret ? { 'x-webhook-signature': signature(hook.secret, timestamp, claimed.body) } : {}),
    };
    const started = performance.now();
    let responseCode: number | null = null;
    let error: string | null = null;
    try {
      const policy = outboundPolicyFor((await settings.get()).outboundAllowList);
      const response = await policy.request({ url: hook.url, method: 'POST', headers, body: claimed.body, timeoutMs: TIMEOUT_MS, maxBodyBytes: MAX_RESPONSE_BYTES, maxRedirects: 0, signal: this.shutdown.signal });
      responseCode = response.status;
      const location = response.headers.location;
      if (location && response.status >= 300 && response.status < 400) error = `Redirects are not followed (${response.status} to ${whereTo(location, hook.url)})`;
      else if (response.status < 200 || response.status >= 300) error = `answered ${response.status}${response.body ? `: ${response.body.slice(0, 200)}` : ''}`;
    } catch (failure) {
      error = failure instanceof Error ? failure.message : String(failure);
    }
    // Cut off by shutdown: not the receiver's failure, so no attempt is counted; due again at once.
    if (this.shutdown.signal.aborted && responseCode === null) return deliveries.release(claimed, new Date());
    const durationMs = Math.round(performance.now() - started);
    const ok = error === null;
    const attempt = claimed.attempts + 1;
    const retryAt = ok ? null : nextAttemptAt(attempt, retryBaseMs);
    const finished = await deliveries.finish(claimed, { ok, responseCode, durationMs, error: error?.slice(0, 1000) ?? null, retryAt });
    const at = new Date();
    await hooks.recordAttempt(hook._id, { ok, error: error?.slice(0, 1000) ?? null, at });
    daily.bump('webhookDeliveries');
    if (!ok) daily.bump('webhookErrors');
    const outcome = ok ? `delivered (${responseCode})` : `failed: ${error}${retryAt ? `; retry at ${retryAt.toISOString()}` : '; no attempts left'}`;
    audit.enqueue({
      action: 'webhook_dispatch',
      message: `Webhook "${hook.name}" ${claimed.event} delivery ${claimed._id}, attempt ${attempt}: ${outcome} in ${durationMs} ms`,
      source: 'webhooks',
      statusCode: responseCode,
    });
    return finished;
  }
}

/** Where a redirect points, as origin and path: its query (or user info) may carry a secret, and the error is shown. */
function whereTo(location: string, base: string): string {
  try {
    const url = new URL(location, base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? `${url.origin}${url.pathname}` : 'elsewhere';
  } catch {
    return 'elsewhere';
  }
}
