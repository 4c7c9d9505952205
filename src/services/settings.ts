import { compileHostPortRules, InvalidHostPortRuleError } from '../lib/host-port-rules.ts';
import { compileIpRules, InvalidIpRuleError, PRIVATE_AND_LOOPBACK_RANGES, type IpMatcher } from '../lib/ip-rules.ts';
import { badRequest, forbidden } from '../lib/errors.ts';
import { isDeepStrictEqual } from 'node:util';
import { compileValidator } from '../model/validation.ts';
import type { Actor } from '../model/actor.ts';
import type { AuditLog } from './audit-log.ts';
import type { EventBus } from '../events/bus.ts';
import type { Store } from '../store/types.ts';
import type { Revisions } from './revisions.ts';

/**
 * System settings: one flat object. The table below is the registry: adding a setting is one
 * entry (its JSON Schema and default). Values are cached per process and reloaded when the
 * `settings` revision changes, so a change applies on the next request on every instance.
 */
const SETTING_FIELDS = {
  registrationEnabled: { schema: { type: 'boolean' }, default: false },
  accessTokenTtlSeconds: { schema: { type: 'integer', minimum: 60, maximum: 86_400 }, default: 900 },
  refreshTokenTtlSeconds: { schema: { type: 'integer', minimum: 300, maximum: 31_536_000 }, default: 604_800 },
  lockoutThreshold: { schema: { type: 'integer', minimum: 0, maximum: 1000 }, default: 5 },
  lockoutMinutes: { schema: { type: 'integer', minimum: 1, maximum: 1440 }, default: 15 },
  rateLimitEnabled: { schema: { type: 'boolean' }, default: false },
  rateLimitWindowSeconds: { schema: { type: 'integer', minimum: 1, maximum: 86_400 }, default: 60 },
  rateLimitMax: { schema: { type: 'integer', minimum: 1, maximum: 10_000_000 }, default: 3000 },
  defaultPageSize: { schema: { type: 'integer', minimum: 1, maximum: 1000 }, default: 20 },
  maxPageSize: { schema: { type: 'integer', minimum: 1, maximum: 1000 }, default: 100 },
  logRetentionDays: { schema: { type: 'integer', minimum: 1, maximum: 3650 }, default: 30 },
  auditApiCalls: { schema: { type: 'boolean' }, default: true },
  trustedProxies: {
    schema: { type: 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 64 } },
    default: [...PRIVATE_AND_LOOPBACK_RANGES],
  },
  handlerMemoryMb: { schema: { type: 'integer', minimum: 8, maximum: 1024 }, default: 64 },
  handlerTimeoutMs: { schema: { type: 'integer', minimum: 10, maximum: 60_000 }, default: 5000 },
  // Targets outbound requests (cron http actions, webhooks) may reach although not public: host:port or origins.
  outboundAllowList: {
    schema: { type: 'array', maxItems: 100, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 300 } },
    default: [],
  },
  // Time limit of a cron job's javascript run (handlers keep handlerTimeoutMs).
  cronTimeoutMs: { schema: { type: 'integer', minimum: 100, maximum: 600_000 }, default: 30_000 },
  openApiPublic: { schema: { type: 'boolean' }, default: true },
} as const;

/**
 * Settings that widen what user code and outbound calls may do, or that decide which client
 * address an endpoint's network rules see, are changed only by callers who may define that code
 * and those rules: `manage_users` alone must not open the outbound allow list, raise sandbox
 * limits, or trust every proxy (a forged `X-Forwarded-For` would then pass any IP rule). Other
 * settings take either permission.
 */
const NEEDS_MANAGE_API: ReadonlySet<string> = new Set(['outboundAllowList', 'handlerMemoryMb', 'handlerTimeoutMs', 'cronTimeoutMs', 'trustedProxies']);

export interface Settings {
  registrationEnabled: boolean;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  lockoutThreshold: number;
  lockoutMinutes: number;
  rateLimitEnabled: boolean;
  rateLimitWindowSeconds: number;
  rateLimitMax: number;
  defaultPageSize: number;
  maxPageSize: number;
  logRetentionDays: number;
  auditApiCalls: boolean;
  trustedProxies: string[];
  handlerMemoryMb: number;
  handlerTimeoutMs: number;
  outboundAllowList: string[];
  cronTimeoutMs: number;
  /** GET /api/openapi.json (and /api/docs) for anyone; when false, signed-in callers see what they may call. */
  openApiPublic: boolean;
}

/** Settings plus what is compiled from them once per revision. */
export interface ActiveSettings extends Settings {
  trustedProxyMatcher: IpMatcher;
}

export const DEFAULT_SETTINGS: Settings = Object.fromEntries(
  Object.entries(SETTING_FIELDS).map(([name, field]) => [name, structuredClone(field.default)]),
) as unknown as Settings;

const validatePatch = compileValidator<Partial<Settings>>(
  {
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(Object.entries(SETTING_FIELDS).map(([name, field]) => [name, field.schema])),
  },
  'settings',
);

interface SettingsDoc {
  _id: string;
  [key: string]: unknown;
  key: string;
  values: Partial<Settings>;
  updatedAt: Date | string;
}

const KEY = 'global';

export class SettingsService {
  private cached: { revision: number; settings: ActiveSettings } | null = null;
  private readonly store: Store;
  private readonly revisions: Revisions;
  private readonly events: EventBus;
  private readonly audit: AuditLog;

  constructor(deps: { store: Store; revisions: Revisions; events: EventBus; audit: AuditLog }) {
    this.store = deps.store;
    this.revisions = deps.revisions;
    this.events = deps.events;
    this.audit = deps.audit;
  }

  /** The settings when they are known to be current without reading the store, else null. */
  peek(): ActiveSettings | null {
    const cached = this.cached;
    return cached && this.revisions.known('settings') === cached.revision ? cached.settings : null;
  }

  async get(): Promise<ActiveSettings> {
    const revision = await this.revisions.current('settings');
    if (this.cached && this.cached.revision === revision) return this.cached.settings;
    const doc = await this.store.collection<SettingsDoc>('systemsettings').findOne({ key: KEY });
    const settings = activate({ ...DEFAULT_SETTINGS, ...pickKnown(doc?.values ?? {}) });
    this.cached = { revision, settings };
    return settings;
  }

  /** Validates a partial update (unknown fields, wrong types, bad ranges → 400), stores it and audits it for the actor. */
  async update(patch: unknown, actor: Actor): Promise<Settings> {
    const valid = validatePatch(patch);
    const current = toPlain(await this.get());
    const next = { ...current, ...valid };
    // Sending a setting back unchanged (a form saving every field) needs no extra permission.
    const guarded = Object.keys(valid).filter((name) => NEEDS_MANAGE_API.has(name) && !isDeepStrictEqual(valid[name as keyof Settings], current[name as keyof Settings]));
    if (guarded.length > 0 && actor.principal && !actor.principal.permissions.has('manage_api')) {
      throw forbidden(`Forbidden: changing ${guarded.join(', ')} requires manage_api`);
    }
    if (next.defaultPageSize > next.maxPageSize) {
      throw badRequest('Invalid settings: defaultPageSize must not exceed maxPageSize', [
        { field: 'defaultPageSize', message: 'must not exceed maxPageSize' },
      ]);
    }
    activate(next); // rejects invalid proxy rules before anything is written
    if (valid.outboundAllowList) assertNoPortZero(valid.outboundAllowList);
    await this.store
      .collection<SettingsDoc>('systemsettings')
      .updateOne({ key: KEY }, { $set: { values: next, updatedAt: new Date() } }, { upsert: true });
    await this.revisions.bump('settings');
    this.cached = null;
    this.events.emit('settings.updated', { fields: Object.keys(valid) });
    // The fields whose value changed: a form re-saving every field names only what it changed.
    const changed = Object.keys(valid).filter((name) => !isDeepStrictEqual(valid[name as keyof Settings], current[name as keyof Settings]));
    await this.audit.change(actor, { action: 'settings_updated', message: `Settings updated: ${changed.join(', ') || 'nothing changed'}`, source: 'settings' });
    return toPlain(await this.get());
  }
}

/**
 * Port 0 reads as a port like any other (`127.0.0.1:0`), but no connection goes to it: an entry
 * naming it is a mistake, refused with the range (ports above 65535 no URL reads). Checked when
 * the list is saved, not when stored settings are read, so a list saved before stays readable.
 * host-port-rules.ts is where this belongs, beside the other entry rules.
 */
function assertNoPortZero(rules: readonly string[]): void {
  for (const rule of rules) {
    const text = rule.trim();
    const url = URL.parse(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`);
    if (url?.port !== '0') continue;
    const message = `invalid outbound allow-list entry "${rule}" (a port is 1-65535)`;
    throw badRequest(`Invalid settings: outboundAllowList has an ${message}`, [{ field: 'outboundAllowList', message }]);
  }
}

export function toPlain(settings: ActiveSettings): Settings {
  const { trustedProxyMatcher: _matcher, ...plain } = settings;
  return plain;
}

function pickKnown(values: Partial<Settings>): Partial<Settings> {
  return Object.fromEntries(Object.entries(values).filter(([name]) => name in SETTING_FIELDS)) as Partial<Settings>;
}

function activate(settings: Settings): ActiveSettings {
  try {
    compileHostPortRules(settings.outboundAllowList);
  } catch (error) {
    if (error instanceof InvalidHostPortRuleError) {
      throw badRequest(`Invalid settings: outboundAllowList has an ${error.message}`, [{ field: 'outboundAllowList', message: error.message }]);
    }
    throw error;
  }
  try {
    return { ...settings, trustedProxyMatcher: compileIpRules(settings.trustedProxies) };
  } catch (error) {
    if (error instanceof InvalidIpRuleError) {
      throw badRequest(`Invalid settings: trustedProxies has an ${error.message}`, [{ field: 'trustedProxies', message: error.message }]);
    }
    throw error;
  }
}
