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

/**
 * Routing by a segment trie per method: a lookup walks the request's segments (literal child and
 * `:param` child at each step), so its cost grows with the path's length and the overlap of the
 * patterns it meets, not with the number of definitions. The precedence is the one a linear scan
 * over the definitions in `order` gives: the best collection match (pattern as long as the path),
 * else the best item match (pattern one segment shorter: `P/:id`).
 */
export class RouteTable {
  private readonly tries = new Map<HttpMethod, TrieNode>();
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
      let root = this.tries.get(method);
      if (!root) this.tries.set(method, (root = newNode()));
      insert(root, { endpoint, pattern: endpoint.pattern, order: rank * 2 });
      for (const alias of endpoint.aliases) insert(root, { endpoint, pattern: alias, order: rank * 2 + 1 });
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
    const root = this.tries.get(method as HttpMethod) ?? this.tries.get(method.toUpperCase() as HttpMethod);
    if (!root) return null;
    const parts = splitPath(path);
    // Only segments with a percent sign need decoding (most have none).
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as string;
      if (part.includes('%')) {
        try {
          parts[i] = decodeURIComponent(part);
        } catch {
          return null; // malformed percent-encoding matches nothing
        }
      }
    }
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
