import { badRequest } from '../lib/errors.ts';
import { fillPattern, matchSegments, parsePathPattern, splitPath, versionedPath, type PathPattern } from '../lib/paths.ts';
import type { EndpointDoc, EndpointGroupDoc, HttpMethod } from '../model/endpoint.ts';
import { compileNetworkPolicy, effectiveRules, type NetworkPolicy } from '../model/network-access.ts';
import { compileRecordSchema, type CompiledRecordSchema } from '../model/record-schema.ts';

/**
 * The compiled form of every enabled, non-system definition: path patterns (plus versioned
 * aliases), record validators and network policies. Built when the `endpoints` revision changes,
 * never per request; unchanged definitions reuse their compiled parts (see RouteCache).
 *
 * A definition with path P and method M serves `M P` (collection) and `M P/:id` (item). When
 * several definitions match, a collection match beats an item match, then more literal segments
 * win (so `/api/shop/items/featured` beats item `featured` of `/api/shop/items`).
 */
export interface CompiledEndpoint {
  doc: EndpointDoc;
  pattern: PathPattern;
  aliases: PathPattern[];
  schema: CompiledRecordSchema;
  network: NetworkPolicy;
}

export interface RouteMatch {
  endpoint: CompiledEndpoint;
  params: Record<string, string>;
  /** The record id of an item route (`P/:id`), null for the collection route. */
  id: string | null;
}

function literalCount(pattern: PathPattern): number {
  return pattern.segments.filter((s) => 'literal' in s).length;
}

/**
 * A definition's compiled parts. `reuse` is its previous compilation: at the same revision its
 * pattern and schema are taken over as they are (a rebuild after one change compiles one
 * definition); the network policy is always made anew, as it follows the group's rules too.
 */
export function compileEndpoint(doc: EndpointDoc, group: EndpointGroupDoc | undefined, reuse?: CompiledEndpoint): CompiledEndpoint {
  const network = compileNetworkPolicy(effectiveRules(doc.networkAccess, doc.inheritGroupNetworkAccess, group?.networkAccess));
  if (reuse && reuse.doc.revision === doc.revision) return { doc, pattern: reuse.pattern, aliases: reuse.aliases, schema: reuse.schema, network };
  const pattern = parsePathPattern(doc.path);
  return {
    doc,
    pattern,
    aliases: doc.apiVersion ? [parsePathPattern(versionedPath(pattern.path, doc.apiVersion))] : [],
    schema: compileRecordSchema(doc.schema as never),
    network,
  };
}

/**
 * The match of a call addressed to a definition itself (by id, as /test, MCP and cron do):
 * values for its `:param` segments and, for an item route, the record id. Returns the request
 * path such a call stands for; a missing parameter is a 400.
 */
export function directMatch(endpoint: CompiledEndpoint, values: Record<string, string>, recordId: string | undefined): { match: RouteMatch; path: string } {
  const names = endpoint.pattern.paramNames;
  const missing = names.filter((name) => !values[name]);
  if (missing.length > 0) throw badRequest(`params needs ${missing.join(', ')}`, [{ field: 'params', message: `needs ${missing.join(', ')}` }]);
  const params = Object.fromEntries(names.map((name) => [name, values[name] as string]));
  const path = fillPattern(endpoint.pattern, params) + (recordId ? `/${encodeURIComponent(recordId)}` : '');
  return { match: { endpoint, params, id: recordId ?? null }, path };
}

/** One pattern of a definition (its path, or its versioned alias) where it ends in the trie. */
interface Route {
  endpoint: CompiledEndpoint;
  pattern: PathPattern;
  /**
   * Precedence, lower wins: the definition's place in the order of more literal segments first
   * (then the order the store listed them in), times two, plus one for the versioned alias.
   */
  order: number;
}

/** A segment trie node: literal children by segment, one child for any `:param`. */
interface TrieNode {
  literals: Map<string, TrieNode> | null;
  param: TrieNode | null;
  /** The routes whose pattern ends here, best first. */
  routes: Route[];
}

/** The best routes met so far: patterns as long as the path, and one segment shorter. */
interface Found {
  collection: Route | null;
  item: Route | null;
}

/** Visits every node the path's segments lead to, at each step by literal and by `:param`. */
function walk(node: TrieNode, parts: readonly string[], depth: number, found: Found): void {
  const best = node.routes[0];
  if (depth === parts.length) {
    if (best && (!found.collection || best.order < found.collection.order)) found.collection = best;
    return;
  }
  if (depth === parts.length - 1 && best && (!found.item || best.order < found.item.order)) found.item = best;
  const literal = node.literals?.get(parts[depth] as string);
  if (literal) walk(literal, parts, depth + 1, found);
  if (node.param) walk(node.param, parts, depth + 1, found);
}

const newNode = (): TrieNode => ({ literals: null, param: null, routes: [] });

function insert(root: TrieNode, route: Route): void {
  let node = root;
  for (const segment of route.pattern.segments) {
    if ('literal' in segment) {
      node.literals ??= new Map();
      let next = node.literals.get(segment.literal);
      if (!next) node.literals.set(segment.literal, (next = newNode()));
      node = next;
    } else {
      node = node.param ??= newNode();
    }
  }
  // Routes are inserted in precedence order, so the first at a node is its best.
  node.routes.push(route);
}

/** A method's trie, and what lookups learned about the parents of the paths they were asked. */
interface MethodRoutes {
  root: TrieNode;
  /** Parent path as requested (up to its last `/`) → its memo; null for a malformed escape. */
  parents: Map<string, ParentMemo | null>;
}

/**
 * What a path's parent decides about the path, whatever its last segment: the best item route
 * (a pattern as long as the parent) with its parameters, and the collection routes one segment
 * longer that a last segment could reach — by a literal, or by a `:param`. A lookup of
 * `/api/shop/items/<id>` after the first is then one map read instead of a walk.
 */
interface ParentMemo {
  parts: readonly string[];
  item: Route | null;
  params: Readonly<Record<string, string>>;
  /**
   * The nodes the parent's segments lead to, whose literal children a last segment may reach.
   * Kept as nodes rather than copied into a map: a node may have thousands of children.
   */
  reached: readonly TrieNode[];
  /** The best collection route ending in a `:param`. */
  param: Route | null;
}

/**
 * Memos are kept per method for this many parents at most (then started afresh), and for parents
 * of this length at most, so that requests for arbitrary paths cannot make the table grow.
 */
const MAX_MEMO_PARENTS = 4096;
const MAX_MEMO_PARENT = 256;

const better = (a: Route | null | undefined, b: Route | undefined): Route | null => (b && (!a || b.order < a.order) ? b : (a ?? null));

function memoizeParent(root: TrieNode, parent: string): ParentMemo | null {
  const parts = decodedSegments(parent);
  if (parts === null) return null;
  const reached: TrieNode[] = [];
  reach(root, parts, 0, reached);
  let item: Route | null = null;
  let param: Route | null = null;
  for (const node of reached) {
    item = better(item, node.routes[0]);
    param = better(param, node.param?.routes[0]);
  }
  const params = Object.freeze(item ? (matchSegments(item.pattern, parts) as Record<string, string>) : {});
  return { parts, item, params, reached: reached.filter((node) => node.literals !== null), param };
}

/** Every node the segments lead to, by literal and by `:param` at each step. */
function reach(node: TrieNode, parts: readonly string[], depth: number, out: TrieNode[]): void {
  if (depth === parts.length) {
    out.push(node);
    return;
  }
  const literal = node.literals?.get(parts[depth] as string);
  if (literal) reach(literal, parts, depth + 1, out);
  if (node.param) reach(node.param, parts, depth + 1, out);
}

/** A path's segments, percent-decoded; null when one has a malformed escape (it matches nothing). */
function decodedSegments(path: string): string[] | null {
  const parts = splitPath(path);
  // Only segments with a percent sign need decoding (most have none).
  for (let i = 0; i < parts.length; i++) {
    const part = decodeSegment(parts[i] as string);
    if (part === null) return null;
    parts[i] = part;
  }
  return parts;
}

function decodeSegment(segment: string): string | null {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/**
 * Routing by a segment trie per method: a lookup walks the request's segments (literal child and
 * `:param` child at each step), so its cost grows with the path's length and the overlap of the
 * patterns it meets, not with the number of definitions. The precedence is the one a linear scan
 * over the definitions in `order` gives: the best collection match (pattern as long as the path),
 * else the best item match (pattern one segment shorter: `P/:id`).
 */
export class RouteTable {
  private readonly tries = new Map<HttpMethod, MethodRoutes>();
  private readonly byId = new Map<string, CompiledEndpoint>();
  /** Collection path → its first enabled GET definition (populate's read check). */
  private readonly readers = new Map<string, CompiledEndpoint>();
  private readonly expiring = new Set<string>();
  readonly endpoints: readonly CompiledEndpoint[];

  constructor(endpoints: readonly CompiledEndpoint[]) {
    this.endpoints = endpoints;
    // A stable sort: among equally literal patterns the store's order decides, as it always has.
    const literals = new Map(endpoints.map((e) => [e, literalCount(e.pattern)]));
    const ranked = [...endpoints].sort((a, b) => (literals.get(b) as number) - (literals.get(a) as number));
    ranked.forEach((endpoint, rank) => {
      const method = endpoint.doc.method;
      let routes = this.tries.get(method);
      if (!routes) this.tries.set(method, (routes = { root: newNode(), parents: new Map() }));
      insert(routes.root, { endpoint, pattern: endpoint.pattern, order: rank * 2 });
      for (const alias of endpoint.aliases) insert(routes.root, { endpoint, pattern: alias, order: rank * 2 + 1 });
      if (method === 'GET' && !this.readers.has(endpoint.pattern.path)) this.readers.set(endpoint.pattern.path, endpoint);
    });
    for (const endpoint of endpoints) {
      this.byId.set(endpoint.doc._id, endpoint);
      if (endpoint.doc.retentionDays !== null) this.expiring.add(endpoint.pattern.path);
    }
  }

  /** The served definition with this id, if any. */
  endpoint(id: string): CompiledEndpoint | undefined {
    return this.byId.get(id);
  }

  lookup(method: string, path: string): RouteMatch | null {
    const routes = this.tries.get(method as HttpMethod) ?? this.tries.get(method.toUpperCase() as HttpMethod);
    if (!routes) return null;
    // A path whose last segment is a record id, under a parent seen before: the parent's memo.
    const slash = path.lastIndexOf('/');
    if (slash === -1 || slash === path.length - 1 || slash > MAX_MEMO_PARENT) return this.walkLookup(routes.root, path);
    const parent = path.slice(0, slash);
    let memo = routes.parents.get(parent);
    if (memo === undefined) {
      if (routes.parents.size >= MAX_MEMO_PARENTS) routes.parents.clear();
      memo = memoizeParent(routes.root, parent);
      routes.parents.set(parent, memo);
    }
    if (memo === null) return null; // the parent has a malformed escape: nothing matches under it
    const last = decodeSegment(path.slice(slash + 1));
    if (last === null) return null;
    let collection = memo.param;
    for (const node of memo.reached) collection = better(collection, node.literals?.get(last)?.routes[0]);
    if (collection) return { endpoint: collection.endpoint, params: matchSegments(collection.pattern, [...memo.parts, last]) as Record<string, string>, id: null };
    return memo.item ? { endpoint: memo.item.endpoint, params: memo.params, id: last } : null;
  }

  /** A lookup by walking the trie over every segment of the path. */
  private walkLookup(root: TrieNode, path: string): RouteMatch | null {
    const parts = decodedSegments(path);
    if (parts === null) return null;
    const found: Found = { collection: null, item: null };
    walk(root, parts, 0, found);
    const { collection, item } = found;
    if (collection) return { endpoint: collection.endpoint, params: matchSegments(collection.pattern, parts) as Record<string, string>, id: null };
    if (!item) return null;
    return { endpoint: item.endpoint, params: matchSegments(item.pattern, parts.slice(0, -1)) as Record<string, string>, id: parts[parts.length - 1] as string };
  }

  /**
   * The methods this path is served with (`Allow`): a collection path takes GET and POST, an item
   * path GET, PUT, PATCH and DELETE; a handler definition answers both. HEAD goes with GET.
   */
  methodsOf(path: string): string[] {
    const served = (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).filter((method) => {
      const match = this.lookup(method, path);
      if (!match) return false;
      if (match.endpoint.doc.handler.enabled) return true;
      return match.id === null ? method === 'GET' || method === 'POST' : method !== 'POST';
    });
    if (served.length === 0) return [];
    return [...served.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method])), 'OPTIONS'];
  }

  /** The enabled GET definition for a collection path (used by populate to check read access). */
  readerOf(path: string): CompiledEndpoint | undefined {
    return this.readers.get(path);
  }

  /** Whether any definition on this path expires records (then list totals are counted exactly). */
  expiresRecords(path: string): boolean {
    return this.expiring.has(path);
  }
}
