// A plan's changes as text, the same in `dynctl diff` / `apply` and the TUI's project screen:
// a title per change (`group Shop`, as written in the bundle) and one `path: from → to` line per
// changed value, objects compared key by key (`schema.price.maximum: 10 → 20`).
import type { ProjectBundle, ProjectChange } from './client.ts';

export type ChangeTitle = (change: ProjectChange) => string;

/** Group names as written in the bundle, by key (a group's key is its name lower-cased). */
export function groupNamesOf(bundle: ProjectBundle | null | undefined): Map<string, string> {
  const names = new Map<string, string>();
  for (const group of bundle?.groups ?? []) if (typeof group.name === 'string') names.set(group.name.trim().toLowerCase(), group.name.trim());
  return names;
}

/**
 * `endpoint GET /api/x`, `group Shop`, `cronJob Nightly`: groups by `names` (key → as written),
 * cron jobs and webhooks as written in the bundle (their keys are their names lower-cased too).
 */
export function changeTitleOf(bundle: ProjectBundle | null | undefined, names: ReadonlyMap<string, string> = groupNamesOf(bundle)): ChangeTitle {
  const written = new Map<string, string>([...(bundle?.cronJobs ?? []).map((job) => ['cronJob', job] as const), ...(bundle?.webhooks ?? []).map((hook) => ['webhook', hook] as const)].flatMap(([kind, spec]) => (typeof spec.name === 'string' ? [[`${kind}:${spec.name.toLowerCase()}`, spec.name] as const] : [])));
  return (change) => `${change.kind} ${change.kind === 'group' ? (names.get(change.key) ?? change.key) : (written.get(`${change.kind}:${change.key}`) ?? change.key)}`;
}

export interface FieldLine {
  path: string;
  from: string;
  to: string;
}

/** A change's changed values as lines (at most MAX_FIELD_LINES; `more` says how many were left out). */
export function fieldLines(change: ProjectChange): { lines: FieldLine[]; more: number } {
  const changes = (change.fields ?? []).flatMap((field) => valueChanges(field.field, field.from, field.to, 0));
  const lines = changes.slice(0, MAX_FIELD_LINES).map((line) => {
    const [from, to] = showPair(line.from, line.to);
    return { path: line.path, from, to };
  });
  return { lines, more: Math.max(0, changes.length - MAX_FIELD_LINES) };
}

const MAX_FIELD_LINES = 20;
const MAX_DEPTH = 6;
const MAX_VALUE_CHARS = 60;

interface ValueChange {
  path: string;
  from: unknown;
  to: unknown;
}

/** Objects are compared key by key (`schema.price.maximum: 10 → 20`); anything else as a whole. */
function valueChanges(path: string, from: unknown, to: unknown, depth: number): ValueChange[] {
  if (!isObject(from) || !isObject(to) || depth >= MAX_DEPTH) return [{ path, from, to }];
  const keys = [...new Set([...Object.keys(from), ...Object.keys(to)])];
  const changes = keys
    .filter((key) => canonical(from[key]) !== canonical(to[key]))
    .flatMap((key) => valueChanges(`${path}.${key}`, from[key], to[key], depth + 1));
  return changes.length > 0 ? changes : [{ path, from, to }];
}

/** Compact JSON, cut to a line; two long strings are shown around where they first differ. */
function showPair(from: unknown, to: unknown): [string, string] {
  if (typeof from === 'string' && typeof to === 'string' && Math.max(JSON.stringify(from).length, JSON.stringify(to).length) > MAX_VALUE_CHARS) {
    let same = 0;
    while (same < from.length && same < to.length && from[same] === to[same]) same++;
    const start = Math.max(0, same - 20);
    return [excerpt(from, start), excerpt(to, start)];
  }
  return [show(from), show(to)];
}

function show(value: unknown): string {
  if (value === undefined) return '(unset)';
  const text = JSON.stringify(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text;
}

function excerpt(text: string, start: number): string {
  const width = MAX_VALUE_CHARS - 10;
  const inner = JSON.stringify(text.slice(start, start + width)).slice(1, -1);
  return `"${start > 0 ? '…' : ''}${inner}${start + width < text.length ? '…' : ''}"`;
}

function canonical(value: unknown): string | undefined {
  return JSON.stringify(value, (_key, inner: unknown) =>
    isObject(inner) ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : inner,
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
