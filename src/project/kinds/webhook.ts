// The `webhook` kind: webhooks, one file each under webhooks/, keyed by name (letter case
// ignored, as the store does). Delivery history and health are the store's alone.
//
// The secret is write-only (the API never returns it). In files and bundles it is a placeholder
// (`${env:DYN_HOOK_SECRET}`) or null, never the value: apply resolves it, the diff compares the
// values in memory and shows only `(secret)`, and export and write-back give back the placeholder
// it was applied from, or leave the field out (ComparedField.writeOnly, export.ts). Left out, the
// hook keeps the secret it has, as with PUT /api/webhooks/:id. Credential headers (`Authorization`)
// leave the store as their placeholder or `(secret)`, which keeps the stored value (`secrets`).
import type { Actor } from '../../model/actor.ts';
import { maskedSecretHeaders, maskSecretHeaders, withStoredSecrets } from '../../model/secret-headers.ts';
import type { WebhookDoc, WebhookFilter } from '../../model/webhook.ts';
import type { WebhookActor, WebhookInput } from '../../services/webhooks.ts';
import { compareText } from '../normalize.ts';
import { hasPlaceholder } from '../placeholders.ts';
import { secretsIn, slugOf, type ProjectKind } from './types.ts';

/** A webhook as its file holds it: the API's input (the secret as a placeholder or null). */
export type WebhookSpec = WebhookInput;

/** Every default filled in; `secret` stays absent when the definition leaves it to the store. */
export interface NormalWebhook {
  name: string;
  url: string;
  events: string[];
  filter: WebhookFilter | null;
  secret?: string | null;
  enabled: boolean;
  headers: Record<string, string>;
}

/** The natural key: `Orders` and `orders` are one hook. */
export const webhookKey = (spec: Pick<WebhookSpec, 'name'>): string => spec.name.toLowerCase();

// Events are a set: their order is no change.
const eventSet = (value: unknown): unknown => (Array.isArray(value) ? [...value].map(String).sort(compareText) : value);

export function normalizeWebhook(spec: WebhookSpec): NormalWebhook {
  return {
    name: spec.name,
    url: spec.url,
    events: [...spec.events],
    filter: spec.filter ?? null,
    ...(spec.secret === undefined ? {} : { secret: spec.secret }),
    enabled: spec.enabled ?? true,
    headers: { ...(spec.headers ?? {}) },
  };
}

export function compactWebhook(spec: NormalWebhook): WebhookSpec {
  const out: Record<string, unknown> = { ...spec };
  if (out.filter === null) delete out.filter;
  // No secret and "keep the store's" read the same in a file.
  if (out.secret === null) delete out.secret;
  if (out.enabled === true) delete out.enabled;
  if (Object.keys(spec.headers).length === 0) delete out.headers;
  return out as unknown as WebhookSpec;
}

/** The service's actor: the file sync has no principal. */
const webhookActor = (actor: Actor): WebhookActor => ({ principal: actor.principal, ...(actor.request ? { request: actor.request } : {}), ...(actor.source ? { source: actor.source } : {}) });

/** The service's input: an absent secret is not sent, so the hook keeps its own. */
function webhookInput(spec: NormalWebhook): Record<string, unknown> {
  const { secret, ...rest } = spec;
  return secret === undefined ? rest : { ...rest, secret };
}

export const webhookKind: ProjectKind<WebhookSpec, NormalWebhook, 'webhook', 'webhooks'> = {
  kind: 'webhook',
  label: 'webhook',
  bundleKey: 'webhooks',
  dir: 'webhooks',
  schemaFile: 'webhook.schema.json',
  keyFields: ['name'],
  key: (spec) => webhookKey(spec),
  fileName: (spec) => `${slugOf(spec.name, 'hook')}.yaml`,
  check(spec, report) {
    if (typeof spec.secret === 'string' && !hasPlaceholder(spec.secret)) {
      report('secret', 'must be a placeholder such as ${env:DYN_HOOK_SECRET} (or null): a secret is never written into a project');
    }
  },

  normalize: normalizeWebhook,
  compact: compactWebhook,
  fields: [
    { name: 'name' },
    { name: 'url' },
    { name: 'events', compare: eventSet },
    { name: 'filter' },
    { name: 'secret', writeOnly: true },
    { name: 'enabled' },
    { name: 'headers' },
  ],
  secrets: secretsIn<NormalWebhook, 'headers'>('headers', maskSecretHeaders, withStoredSecrets, maskedSecretHeaders),

  // The stored secret is read here for the diff only; export.ts hides it.
  async read(services) {
    const hooks = (await services.webhooks.all()).map(webhookSpec);
    return hooks.sort((a, b) => compareText(webhookKey(a), webhookKey(b)) || compareText(a.name, b.name));
  },
  ids: async (services) => new Map((await services.webhooks.all()).map((hook) => [webhookKey(hook), hook._id])),
  create: async ({ services, actor }, spec) => (await services.webhooks.create(webhookInput(spec), webhookActor(actor)))._id,
  update: async ({ services, actor }, id, spec) => void (await services.webhooks.update(id, webhookInput(spec), webhookActor(actor))),
  delete: async ({ services, actor }, id) => void (await services.webhooks.delete(id, webhookActor(actor))),
};

function webhookSpec(doc: WebhookDoc): NormalWebhook {
  return normalizeWebhook({ name: doc.name, url: doc.url, events: doc.events, filter: doc.filter, secret: doc.secret, enabled: doc.enabled, headers: doc.headers });
}
