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

export function compileEndpoint(doc: EndpointDoc, group: EndpointGroupDoc | undefined, reuse?: CompiledEndpoint): CompiledEndpoint {
  const pattern = parsePathPattern(doc.path);
  return {
    doc,
    pattern,
    aliases: doc.apiVersion ? [parsePathPattern(versionedPath(pattern.path, doc.apiVersion))] : [],
    schema: reuse && reuse.doc.revision === doc.revision ? reuse.schema : compileRecordSchema(doc.schema as never),
    network: compileNetworkPolicy(effectiveRules(doc.networkAccess, doc.inheritGroupNetworkAccess, group?.networkAccess)),
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

export class RouteTable {
  private readonly byMethod = new Map<HttpMethod, CompiledEndpoint[]>();
  private readonly byId = new Map<string, CompiledEndpoint>();
  readonly endpoints: readonly CompiledEndpoint[];

  constructor(endpoints: readonly CompiledEndpoint[]) {
    this.endpoints = endpoints;
    for (const endpoint of endpoints) {
      this.byId.set(endpoint.doc._id, endpoint);
      const list = this.byMethod.get(endpoint.doc.method) ?? [];
      list.push(endpoint);
      this.byMethod.set(endpoint.doc.method, list);
    }
    for (const list of this.byMethod.values()) list.sort((a, b) => literalCount(b.pattern) - literalCount(a.pattern));
  }

  /** The served definition with this id, if any. */
  endpoint(id: string): CompiledEndpoint | undefined {
    return this.byId.get(id);
  }

  lookup(method: string, path: string): RouteMatch | null {
    const candidates = this.byMethod.get(method.toUpperCase() as HttpMethod);
    if (!candidates) return null;
    let parts: string[];
    try {
      parts = splitPath(path).map(decodeURIComponent);
    } catch {
      return null; // malformed percent-encoding matches nothing
    }
    let item: RouteMatch | null = null;
    for (const endpoint of candidates) {
      // Aliases carry the same parameter names as the canonical pattern.
      for (const pattern of [endpoint.pattern, ...endpoint.aliases]) {
        const params = matchSegments(pattern, parts);
        if (params) return { endpoint, params, id: null };
        if (!item && parts.length === pattern.segments.length + 1) {
          const itemParams = matchSegments(pattern, parts.slice(0, -1));
          if (itemParams) item = { endpoint, params: itemParams, id: parts[parts.length - 1] as string };
        }
      }
    }
    return item;
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
    return this.byMethod.get('GET')?.find((e) => e.pattern.path === path);
  }

  /** Whether any definition on this path expires records (then list totals are counted exactly). */
  expiresRecords(path: string): boolean {
    return this.endpoints.some((e) => e.pattern.path === path && e.doc.retentionDays !== null);
  }
}
