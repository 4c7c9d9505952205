// Serves the OpenAPI document without building it per request: one document per route table
// (a new table is built whenever a definition or an endpoint group changes) and per audience —
// everyone (the public document) or the set of endpoints a caller may call. Documents are kept
// as JSON text, ready to send; a few dozen audiences per table at most.
import { createHash } from 'node:crypto';
import type { Principal } from '../model/principal.ts';
import { accessDenial } from '../runtime/access.ts';
import type { Engine } from '../runtime/engine.ts';
import type { CompiledEndpoint, RouteTable } from '../runtime/route-table.ts';
import type { EndpointGroupsService } from '../services/endpoint-groups.ts';
import { buildOpenApi } from './openapi-document.ts';
import { creationOrder, endpointNames } from './operation-names.ts';

export type OpenApiVersion = '3.0' | '3.1';
export const OPENAPI_VERSIONS: readonly OpenApiVersion[] = ['3.0', '3.1'];

/** Whom a document is for: everyone (every enabled endpoint), or one caller (what it may call). */
export type Audience = { everyone: true } | { principal: Principal };

interface TableDocs {
  groups: Promise<ReadonlyMap<string, { name: string; description: string; order: number }>>;
  documents: Map<string, string>;
}

const MAX_AUDIENCES = 50;

export class OpenApiDocs {
  private readonly byTable = new WeakMap<RouteTable, TableDocs>();
  private readonly deps: { engine: Pick<Engine, 'table'>; endpointGroups: Pick<EndpointGroupsService, 'all'> };

  constructor(deps: OpenApiDocs['deps']) {
    this.deps = deps;
  }

  /** The document as JSON text. */
  async json(audience: Audience, version: OpenApiVersion = '3.0'): Promise<string> {
    const table = await this.deps.engine.table();
    let docs = this.byTable.get(table);
    if (!docs) {
      const groups = this.deps.endpointGroups.all().then((all) => new Map(all.map((g) => [g._id, { name: g.name, description: g.description, order: g.order }])));
      docs = { groups, documents: new Map() };
      this.byTable.set(table, docs);
      // A failed read is not kept: the next request tries again.
      groups.catch(() => this.byTable.delete(table));
    }
    const endpoints = creationOrder('everyone' in audience ? table.endpoints : visibleTo(table.endpoints, audience.principal));
    const key = `${version}:${'everyone' in audience ? '*' : createHash('sha256').update(endpoints.map((e) => e.doc._id).join(',')).digest('base64url')}`;
    const cached = docs.documents.get(key);
    if (cached !== undefined) return cached;
    const groups = await docs.groups;
    const readers = new Map(endpoints.filter((e) => e.doc.method === 'GET').map((e) => [e.pattern.path, e]));
    const document = buildOpenApi({ endpoints, names: endpointNames(table), reader: (path) => readers.get(path), groups });
    // 3.1 reads the same document: it uses no construct whose meaning changed between the two.
    if (version === '3.1') document.openapi = '3.1.0';
    const text = JSON.stringify(document);
    if (docs.documents.size >= MAX_AUDIENCES) docs.documents.delete(docs.documents.keys().next().value as string);
    docs.documents.set(key, text);
    return text;
  }
}

/** The endpoints whose access type lets this caller in (network rules are checked per call). */
export function visibleTo(endpoints: readonly CompiledEndpoint[], principal: Principal | undefined): CompiledEndpoint[] {
  return endpoints.filter((endpoint) => accessDenial(endpoint.doc, principal) === null);
}
