// Stable, unique names for the operations of dynamic endpoints: OpenAPI operationIds and MCP
// tool names. A name is the method and the path in snake case (`GET /api/shop/:shopId/items` →
// `get_api_shop_shopId_items`); two definitions that would share one (`/api/a-b`, `/api/a_b`)
// are told apart by `_2`, `_3`… in the order they were created, so names only change when an
// earlier clashing definition goes away.
import { createHash } from 'node:crypto';

/** MCP clients cap tool names (the spec allows 128, several clients 64): stay within the smaller. */
const MAX_NAME = 64;

export function baseName(method: string, path: string): string {
  const words = path
    .split('/')
    .filter((s) => s !== '')
    .map((segment) => (segment.startsWith(':') ? segment.slice(1) : segment).replace(/[^A-Za-z0-9_]+/g, '_'));
  return [method.toLowerCase(), ...words].join('_').replace(/_+/g, '_').replace(/_$/, '');
}

/** Cuts a long name and keeps it unique with a short hash of the whole. */
export function bounded(name: string): string {
  if (name.length <= MAX_NAME) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${name.slice(0, MAX_NAME - 9)}_${hash}`;
}

export interface Named {
  /** The candidate name; callers list items in a stable order (creation order). */
  candidate: string;
}

/** Assigns each item a unique bounded name, in list order: the first keeps its candidate. */
export function uniqueNames<T extends Named>(items: readonly T[]): Map<T, string> {
  const taken = new Set<string>();
  const names = new Map<T, string>();
  for (const item of items) {
    const base = bounded(item.candidate);
    let name = base;
    for (let n = 2; taken.has(name); n++) name = bounded(`${item.candidate}_${n}`);
    taken.add(name);
    names.set(item, name);
  }
  return names;
}

/** Enabled endpoints in creation order: the order names are handed out in. */
export function creationOrder<E extends { doc: { _id: string; createdAt: string | Date } }>(endpoints: readonly E[]): E[] {
  const time = (e: E) => new Date(e.doc.createdAt).getTime() || 0;
  return [...endpoints].sort((a, b) => time(a) - time(b) || (a.doc._id < b.doc._id ? -1 : a.doc._id > b.doc._id ? 1 : 0));
}

/** Endpoint id → operation name for every endpoint of a route table (computed once per table). */
const namesByTable = new WeakMap<object, ReadonlyMap<string, string>>();

export function endpointNames(table: { endpoints: readonly { doc: { _id: string; method: string; path: string; createdAt: string | Date } }[] }): ReadonlyMap<string, string> {
  let names = namesByTable.get(table);
  if (!names) {
    const items = creationOrder(table.endpoints).map((endpoint) => ({ candidate: baseName(endpoint.doc.method, endpoint.doc.path), id: endpoint.doc._id }));
    const assigned = uniqueNames(items);
    names = new Map(items.map((item) => [item.id, assigned.get(item) as string]));
    namesByTable.set(table, names);
  }
  return names;
}
