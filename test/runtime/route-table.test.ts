import { describe, expect, it } from 'vitest';
import { matchSegments, splitPath, type PathPattern } from '../../src/lib/paths.ts';
import { DEFAULT_NETWORK_ACCESS, type EndpointDoc, type HttpMethod } from '../../src/model/endpoint.ts';
import { compileEndpoint, RouteTable, type CompiledEndpoint, type RouteMatch } from '../../src/runtime/route-table.ts';

// The route table on its own: which definition a method and path reach, with which parameters
// and record id. Definitions are listed in the order the store would return them.

let counter = 0;
function def(method: HttpMethod, path: string, extra: Partial<EndpointDoc> = {}): CompiledEndpoint {
  counter++;
  const id = counter.toString(16).padStart(24, '0');
  const doc: EndpointDoc = {
    _id: id, name: `${method} ${path}`, description: '', slug: `e${counter}`, path, method, accessType: 'public',
    allowedGroupIds: [], groupId: null, schema: { name: { type: 'string' } }, networkAccess: { ...DEFAULT_NETWORK_ACCESS },
    inheritGroupNetworkAccess: true, enabled: true, apiVersion: null, isSystem: false, retentionDays: null,
    handler: { enabled: false, code: '' }, callCount: 0, revision: 1, createdAt: new Date(0), updatedAt: new Date(0), ...extra,
  };
  return compileEndpoint(doc, undefined);
}

/** What a lookup answers, in a form that reads well in expectations. */
function hit(table: RouteTable, method: string, path: string): { route: string; params: Record<string, string>; id: string | null } | null {
  const match = table.lookup(method, path);
  return match && { route: `${match.endpoint.doc.method} ${match.endpoint.doc.path}`, params: match.params, id: match.id };
}

describe('the route table', () => {
  it('serves a definition on its collection path and on its item path', () => {
    const table = new RouteTable([def('GET', '/api/shop/items')]);
    expect(hit(table, 'GET', '/api/shop/items')).toEqual({ route: 'GET /api/shop/items', params: {}, id: null });
    expect(hit(table, 'get', '/api/shop/items/abc')).toEqual({ route: 'GET /api/shop/items', params: {}, id: 'abc' });
    expect(hit(table, 'GET', '/api/shop/items/abc/more')).toBeNull();
    expect(hit(table, 'GET', '/api/shop')).toBeNull();
    expect(hit(table, 'POST', '/api/shop/items')).toBeNull();
  });

  it('fills :param segments and decodes percent-escapes; malformed escapes match nothing', () => {
    const table = new RouteTable([def('GET', '/api/shops/:shopId/items')]);
    expect(hit(table, 'GET', '/api/shops/a%20b/items/x%2Fy')).toEqual({ route: 'GET /api/shops/:shopId/items', params: { shopId: 'a b' }, id: 'x/y' });
    expect(hit(table, 'GET', '/api/shops/%E0%A4%A/items')).toBeNull();
    expect(hit(table, 'GET', '/api/sh%6Fps/1/items')).toEqual({ route: 'GET /api/shops/:shopId/items', params: { shopId: '1' }, id: null });
  });

  it('serves the root path', () => {
    const table = new RouteTable([def('GET', '/')]);
    expect(hit(table, 'GET', '/')).toEqual({ route: 'GET /', params: {}, id: null });
    expect(hit(table, 'GET', '/x')).toEqual({ route: 'GET /', params: {}, id: 'x' });
  });

  it('a collection match beats an item match, whatever the order of the definitions', () => {
    for (const order of [0, 1]) {
      const defs = [def('GET', '/api/shop/items'), def('GET', '/api/shop/items/featured')];
      const table = new RouteTable(order ? defs.reverse() : defs);
      expect(hit(table, 'GET', '/api/shop/items/featured')?.route).toBe('GET /api/shop/items/featured');
      expect(hit(table, 'GET', '/api/shop/items/other')).toEqual({ route: 'GET /api/shop/items', params: {}, id: 'other' });
    }
  });

  it('a collection match with fewer literal segments still beats an item match with more', () => {
    const table = new RouteTable([def('GET', '/api/shop/items'), def('GET', '/api/:a/:b/:c')]);
    expect(hit(table, 'GET', '/api/shop/items/x')).toEqual({ route: 'GET /api/:a/:b/:c', params: { a: 'shop', b: 'items', c: 'x' }, id: null });
  });

  it('more literal segments win among collection matches and among item matches', () => {
    for (const order of [0, 1]) {
      const defs = [def('GET', '/api/shop/:kind'), def('GET', '/api/shop/items')];
      const table = new RouteTable(order ? defs.reverse() : defs);
      expect(hit(table, 'GET', '/api/shop/items')?.route).toBe('GET /api/shop/items');
      expect(hit(table, 'GET', '/api/shop/items/7')).toEqual({ route: 'GET /api/shop/items', params: {}, id: '7' });
      expect(hit(table, 'GET', '/api/shop/toys')).toEqual({ route: 'GET /api/shop/:kind', params: { kind: 'toys' }, id: null });
      expect(hit(table, 'GET', '/api/shop/toys/7')).toEqual({ route: 'GET /api/shop/:kind', params: { kind: 'toys' }, id: '7' });
    }
  });

  it('between equally literal patterns, the one listed first wins', () => {
    const a = def('GET', '/api/:x/items');
    const b = def('GET', '/api/shop/:y');
    expect(hit(new RouteTable([a, b]), 'GET', '/api/shop/items')?.route).toBe('GET /api/:x/items');
    expect(hit(new RouteTable([b, a]), 'GET', '/api/shop/items')?.route).toBe('GET /api/shop/:y');
    expect(hit(new RouteTable([a, b]), 'GET', '/api/shop/items/1')?.route).toBe('GET /api/:x/items');
    expect(hit(new RouteTable([b, a]), 'GET', '/api/shop/items/1')?.route).toBe('GET /api/shop/:y');
  });

  it('serves a versioned definition at its alias too, with the same parameter names', () => {
    const table = new RouteTable([def('GET', '/api/shops/:shopId/items', { apiVersion: 'v2' }), def('GET', '/orders', { apiVersion: 'v1' })]);
    expect(hit(table, 'GET', '/api/v2/shops/9/items')).toEqual({ route: 'GET /api/shops/:shopId/items', params: { shopId: '9' }, id: null });
    expect(hit(table, 'GET', '/api/v2/shops/9/items/r1')).toEqual({ route: 'GET /api/shops/:shopId/items', params: { shopId: '9' }, id: 'r1' });
    expect(hit(table, 'GET', '/api/shops/9/items')?.route).toBe('GET /api/shops/:shopId/items');
    expect(hit(table, 'GET', '/v1/orders/5')).toEqual({ route: 'GET /orders', params: {}, id: '5' });
    expect(hit(table, 'GET', '/api/v1/shops/9/items')).toBeNull();
  });

  it('an alias collection match beats the canonical item match of the same path', () => {
    const table = new RouteTable([def('GET', '/api/:thing', { apiVersion: 'v1' })]);
    expect(hit(table, 'GET', '/api/v1/foo')).toEqual({ route: 'GET /api/:thing', params: { thing: 'foo' }, id: null });
  });

  it('lists the methods a path is served with (Allow): collection GET/POST, item GET/PUT/PATCH/DELETE, handlers both', () => {
    const table = new RouteTable([
      def('GET', '/api/a'), def('POST', '/api/a'), def('PUT', '/api/a'), def('DELETE', '/api/a'),
      def('PATCH', '/api/h', { handler: { enabled: true, code: 'return 1' } }),
    ]);
    expect(table.methodsOf('/api/a')).toEqual(['GET', 'HEAD', 'POST', 'OPTIONS']);
    expect(table.methodsOf('/api/a/1')).toEqual(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);
    expect(table.methodsOf('/api/h')).toEqual(['PATCH', 'OPTIONS']);
    expect(table.methodsOf('/api/h/1')).toEqual(['PATCH', 'OPTIONS']);
    expect(table.methodsOf('/api/nothing')).toEqual([]);
  });

  it('finds the reader of a collection path and whether records there expire', () => {
    const reader = def('GET', '/api/cats');
    const table = new RouteTable([def('POST', '/api/cats', { retentionDays: 3 }), reader, def('GET', '/api/:any')]);
    expect(table.readerOf('/api/cats')).toBe(reader);
    expect(table.readerOf('/api/dogs')).toBeUndefined();
    expect(table.expiresRecords('/api/cats')).toBe(true);
    expect(table.expiresRecords('/api/:any')).toBe(false);
    expect(table.endpoint(reader.doc._id)).toBe(reader);
  });
});

/** The linear scan the table replaced, kept here as the oracle of its precedence rules. */
function linearScan(endpoints: readonly CompiledEndpoint[]): (method: string, path: string) => RouteMatch | null {
  const literals = (p: PathPattern) => p.segments.filter((s) => 'literal' in s).length;
  const byMethod = new Map<string, CompiledEndpoint[]>();
  for (const e of endpoints) byMethod.set(e.doc.method, [...(byMethod.get(e.doc.method) ?? []), e]);
  for (const list of byMethod.values()) list.sort((a, b) => literals(b.pattern) - literals(a.pattern));
  return (method, path) => {
    let parts: string[];
    try {
      parts = splitPath(path).map(decodeURIComponent);
    } catch {
      return null;
    }
    let item: RouteMatch | null = null;
    for (const endpoint of byMethod.get(method) ?? []) {
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
  };
}

describe('a table of 10,000 definitions', () => {
  // Overlapping on purpose: shared prefixes, :params beside literals, versioned aliases.
  const words = ['shop', 'items', 'orders', 'v2', 'lines', 'notes', 'x'];
  let seed = 42;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const defs: CompiledEndpoint[] = [];
  const seen = new Set<string>();
  for (let i = 0; defs.length < 10_000; i++) {
    const length = 1 + Math.floor(random() * 4);
    const segments = ['api', ...Array.from({ length }, (_, k) => (random() < 0.25 ? `:p${k}` : random() < 0.5 ? pick(words) : `r${i % 3000}`))];
    const method = pick(['GET', 'POST'] as const);
    const path = `/${segments.join('/')}`;
    if (seen.has(`${method} ${path}`)) continue;
    seen.add(`${method} ${path}`);
    defs.push(def(method, path, random() < 0.05 ? { apiVersion: 'v2' } : {}));
  }
  const table = new RouteTable(defs);
  const linearLookup = linearScan(defs);
  const concrete = (endpoint: CompiledEndpoint) => `/${endpoint.pattern.segments.map((s) => ('literal' in s ? s.literal : pick(['shop', 'items', 'zz']))).join('/')}`;

  it('serves every definition\'s collection and item paths (itself, or a definition that takes precedence)', () => {
    for (const endpoint of defs) {
      const path = concrete(endpoint);
      for (const [at, id] of [[path, null], [`${path}/rec1`, 'rec1']] as const) {
        const match = table.lookup(endpoint.doc.method, at);
        expect(match).not.toBeNull();
        if (match?.endpoint === endpoint) expect(match.id).toBe(id);
      }
    }
  });

  it('answers as the linear scan does, for definitions\' own paths and for random ones', () => {
    for (const endpoint of defs.filter((_, i) => i % 40 === 0)) {
      const path = concrete(endpoint);
      for (const at of [path, `${path}/rec1`]) expect(table.lookup(endpoint.doc.method, at)).toEqual(linearLookup(endpoint.doc.method, at));
    }
    for (let i = 0; i < 400; i++) {
      const path = `/${['api', ...Array.from({ length: Math.floor(random() * 6) }, () => pick([...words, 'r7', 'r2999', 'api']))].join('/')}`;
      const method = pick(['GET', 'POST', 'PUT'] as const);
      expect(table.lookup(method, path)).toEqual(linearLookup(method, path));
    }
  });

  it('answers from its memo of parent paths as the linear scan does, for every last segment', () => {
    // Paths under one parent, asked in turn: the first walks the trie, the rest read the memo.
    const parents = defs.filter((_, i) => i % 400 === 0).map(concrete);
    const lasts = ['rec1', 'rec2', ...words, 'r7', 'r2999', 'a%20b', '%E0%A4%A', ''];
    for (const parent of [...parents, '', '/api', '/api/%E0%A4%A', '/api//shop']) {
      for (const last of lasts) {
        for (const method of ['GET', 'post'] as const) {
          const path = `${parent}/${last}`;
          expect(table.lookup(method, path), `${method} ${path}`).toEqual(linearLookup(method.toUpperCase(), path));
        }
      }
    }
  });

  it('keeps its memo bounded: a flood of distinct parents answers as before', () => {
    for (let i = 0; i < 5000; i++) table.lookup('GET', `/api/flood${i}/x`);
    for (const endpoint of defs.filter((_, i) => i % 97 === 0)) {
      const path = `${concrete(endpoint)}/rec1`;
      expect(table.lookup(endpoint.doc.method, path)).toEqual(linearLookup(endpoint.doc.method, path));
    }
  });
});
