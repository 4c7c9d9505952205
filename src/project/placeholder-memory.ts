import type { Store } from '../store/types.ts';
import type { Bundle } from './bundle.ts';
import { KINDS, specsOf } from './kinds/index.ts';
import { escapePlaceholders, findPlaceholders } from './placeholders.ts';

/**
 * Placeholders (`${env:NAME}`, `${file:/path}`) are resolved when a bundle is applied, so the
 * store holds the values. To keep secrets out of exports and written-back files, apply remembers,
 * per definition, which string held which placeholder and what it resolved to; export puts the
 * placeholder back wherever the stored value still equals that resolution (a value changed since,
 * through the API, is exported as it now is).
 */
interface Template {
  template: string;
  resolved: string;
}

interface MemoryDoc {
  _id: string;
  [key: string]: unknown;
  kind: string;
  key: string;
  templates: Record<string, Template>;
}

type Path = Array<string | number>;

function toPath(dotted: string): Path {
  return dotted === '' ? [] : dotted.split('.').map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}

function getAt(value: unknown, path: Path): unknown {
  let cursor = value;
  for (const part of path) {
    if (typeof cursor !== 'object' || cursor === null) return undefined;
    cursor = (cursor as Record<string | number, unknown>)[part];
  }
  return cursor;
}

function setAt(value: unknown, path: Path, replacement: string): void {
  const parent = getAt(value, path.slice(0, -1));
  if (typeof parent === 'object' && parent !== null) (parent as Record<string | number, unknown>)[path[path.length - 1] as string | number] = replacement;
}

const collection = (store: Store) => store.collection<MemoryDoc>('projectplaceholders');

/** After an apply: `raw` is the bundle as written (placeholders), `resolved` what was applied. */
export async function rememberPlaceholders(store: Store, raw: Bundle, resolved: Bundle): Promise<void> {
  for (const kind of KINDS) {
    const resolvedByKey = new Map(specsOf(resolved, kind).map((spec) => [kind.key(spec), spec]));
    for (const spec of specsOf(raw, kind)) {
      const key = kind.key(spec);
      const templates: Record<string, Template> = {};
      for (const placeholder of findPlaceholders(spec)) {
        const path = toPath(placeholder.path);
        const template = getAt(spec, path);
        const value = getAt(resolvedByKey.get(key), path);
        if (typeof template === 'string' && typeof value === 'string') templates[placeholder.path] = { template, resolved: value };
      }
      if (Object.keys(templates).length > 0) {
        await collection(store).updateOne({ kind: kind.kind, key }, { $set: { templates } }, { upsert: true });
      } else {
        await collection(store).deleteMany({ kind: kind.kind, key });
      }
    }
  }
}

/** Before an export leaves the server (its strings escaped): placeholders back where the values still match. */
export async function restorePlaceholders(store: Store, bundle: Bundle): Promise<void> {
  const memories = await collection(store).find({});
  if (memories.length === 0) return;
  const byKey = new Map(memories.map((m) => [`${m.kind}:${m.key}`, m.templates]));
  for (const kind of KINDS) {
    for (const spec of specsOf(bundle, kind)) {
      const templates = byKey.get(`${kind.kind}:${kind.key(spec)}`);
      for (const [dotted, { template, resolved }] of Object.entries(templates ?? {})) {
        const path = toPath(dotted);
        // The export escaped the stored text (export.ts): compare it escaped too.
        if (getAt(spec, path) === escapePlaceholders(resolved)) setAt(spec, path, template);
      }
    }
  }
}
