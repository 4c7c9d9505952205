import { createHash } from 'node:crypto';
import { toPlain } from '../services/settings.ts';
import type { Bundle } from './bundle.ts';
import { exportData } from './data.ts';
import { restorePlaceholders } from './placeholder-memory.ts';
import { KINDS, specsOf } from './kinds/index.ts';
import { canonicalJson } from './normalize.ts';
import { escapePlaceholders, hasPlaceholder } from './placeholders.ts';
import type { ProjectServices } from './services.ts';

/**
 * Store → Bundle, each kind read by its descriptor (`read`). Definitions carry no ids: an
 * endpoint names its endpoint group (`group`) and its user groups (`allowedGroups`); read-only
 * fields (`_id`, `isSystem`, `callCount`, `revision`, timestamps) are left out, and so are
 * system endpoints, which the platform owns. Everything is in normal form (see normalize.ts)
 * and in a stable order — groups by name, endpoints by path then method — so two exports of the
 * same state are byte-identical. Users, API keys and the audit log are never exported. Stored
 * text holding `${env:…}` leaves as `$${env:…}` (placeholders.ts), so it reads back as the same text.
 */
export interface ExportOptions {
  /** Records per collection path (see data.ts). */
  data?: boolean;
  settings?: boolean;
  /** The stored values themselves, placeholders not put back (plans and snapshots compare these). */
  storedValues?: boolean;
}

export async function exportBundle(services: ProjectServices, options: ExportOptions = {}): Promise<Bundle> {
  const bundle: Record<string, unknown> = {};
  for (const kind of KINDS) bundle[kind.bundleKey] = await kind.read(services);
  const out = bundle as Bundle;
  if (!options.storedValues) {
    // Text in the store that reads like a placeholder is literal: it leaves escaped (`$${env:X}`),
    // or the next apply of the files would resolve it. Then the placeholders applied are put back.
    for (const kind of KINDS) (out as unknown as Record<string, unknown>)[kind.bundleKey] = specsOf(out, kind).map((spec) => escapePlaceholders(spec));
    await restorePlaceholders(services.store, out);
    hideWriteOnly(out);
    maskSecrets(out);
  }
  if (options.data) out.data = await exportData(services);
  if (options.settings) out.settings = { ...toPlain(await services.settings.get()) };
  return out;
}

/** Write-only fields (a webhook's secret) leave the store only as the placeholder they were applied from. */
function hideWriteOnly(bundle: Bundle): void {
  for (const kind of KINDS) {
    const hidden = kind.fields.filter((field) => field.writeOnly).map((field) => field.name);
    if (hidden.length === 0) continue;
    for (const spec of specsOf(bundle, kind) as Array<Record<string, unknown>>) {
      for (const name of hidden) {
        const value = spec[name];
        if (value !== null && !(typeof value === 'string' && hasPlaceholder(value))) delete spec[name];
      }
    }
  }
}

/** Credentials among the values (a webhook's `Authorization` header) leave the store as their placeholder or `(secret)`. */
function maskSecrets(bundle: Bundle): void {
  const record = bundle as unknown as Record<string, object[]>;
  for (const kind of KINDS) {
    const secrets = kind.secrets;
    if (secrets) record[kind.bundleKey] = specsOf(bundle, kind).map((spec) => secrets.mask(spec, hasPlaceholder));
  }
}

/**
 * A digest of each stored definition that holds credentials (kinds with `secrets`), by kind and
 * natural key: an export shows a changed credential as `(secret)` before and after, so the file
 * sync compares these to notice it (and writes `(secret)` over the file's old value). Kept in
 * memory only; the values never leave the process.
 */
export async function secretDigests(services: ProjectServices): Promise<Map<string, string>> {
  const digests = new Map<string, string>();
  for (const kind of KINDS) {
    if (!kind.secrets) continue;
    for (const spec of await kind.read(services)) digests.set(secretDigestKey(kind.kind, kind.key(spec)), createHash('sha256').update(canonicalJson(spec)).digest('hex'));
  }
  return digests;
}

export const secretDigestKey = (kind: string, key: string): string => `${kind}\u0000${key}`;
