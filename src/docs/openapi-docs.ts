// Serves the OpenAPI document without building it per request: one document per route table
// (a new table is built whenever a definition or an endpoint group changes) and per audience —
// everyone (the public document) or the set of endpoints a caller may call. Documents are kept
// gzipped, ready to send: the document of 10,000 endpoints is 44 MB of JSON and 2.4 MB gzipped
// (descriptions of similar endpoints repeat), so the cache costs little memory and a client that
// takes gzip (browsers, fetch, curl --compressed) gets it without any work per request. A few
// dozen audiences per table at most, and at most MAX_CACHED_BYTES in all.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { createGzip, gunzip } from 'node:zlib';
import type { IndexedField } from '../model/indexed-fields.ts';
import type { NetworkRequest } from '../model/network-access.ts';
import type { Principal } from '../model/principal.ts';
import { accessDenial } from '../runtime/access.ts';
import type { Engine } from '../runtime/engine.ts';
import type { CompiledEndpoint, RouteTable } from '../runtime/route-table.ts';
import type { EndpointGroupsService } from '../services/endpoint-groups.ts';
import type { EndpointsService } from '../services/endpoints.ts';
import { planOpenApi, writeOpenApi } from './openapi-document.ts';
import { creationOrder, endpointNames } from './operation-names.ts';

export type OpenApiVersion = '3.0' | '3.1';
export const OPENAPI_VERSIONS: readonly OpenApiVersion[] = ['3.0', '3.1'];

/** Whom a document is for: everyone (every enabled endpoint), or one caller (what it may call). */
/**
 * Who the document is for: everyone, or one caller — and, where it is known, the network request
 * the caller comes from (MCP: the endpoints a client may call are also those its network rules
 * let through, as tools/list says).
 */
export type Audience = { everyone: true } | { principal: Principal; from?: NetworkRequest };

interface TableDocs {
  groups: Promise<ReadonlyMap<string, { name: string; description: string; order: number }>>;
  /** Each path's indexed fields, over every definition (disabled ones too) whatever the audience. */
  indexes: Promise<ReadonlyMap<string, readonly IndexedField[]>>;
  documents: Map<string, Buffer>;
  /** Documents being built: a second request for one waits for the same build. */
  building: Map<string, Promise<Buffer>>;
}

const MAX_AUDIENCES = 50;
const MAX_CACHED_BYTES = 64 * 2 ** 20;

export class OpenApiDocs {
  private readonly byTable = new WeakMap<RouteTable, TableDocs>();
  private readonly deps: { engine: Pick<Engine, 'table'>; endpointGroups: Pick<EndpointGroupsService, 'all'>; endpoints: Pick<EndpointsService, 'indexesByPath'> };

  constructor(deps: OpenApiDocs['deps']) {
    this.deps = deps;
  }

  /** The document as JSON text. */
  async json(audience: Audience, version: OpenApiVersion = '3.0'): Promise<string> {
    return (await this.bytes(audience, version)).toString('utf8');
  }

  /** The document as UTF-8 JSON. */
  async bytes(audience: Audience, version: OpenApiVersion = '3.0'): Promise<Buffer> {
    return unzip(await this.gzipped(audience, version));
  }

  /** The document as gzipped UTF-8 JSON, as it is kept (and sent to clients that take gzip). */
  async gzipped(audience: Audience, version: OpenApiVersion = '3.0'): Promise<Buffer> {
    const table = await this.deps.engine.table();
    let docs = this.byTable.get(table);
    if (!docs) {
      const groups = this.deps.endpointGroups.all().then((all) => new Map(all.map((g) => [g._id, { name: g.name, description: g.description, order: g.order }])));
      const indexes = this.deps.endpoints.indexesByPath();
      docs = { groups, indexes, documents: new Map(), building: new Map() };
      this.byTable.set(table, docs);
      // A failed read is not kept: the next request tries again.
      groups.catch(() => this.byTable.delete(table));
      indexes.catch(() => this.byTable.delete(table));
    }
    const endpoints = creationOrder('everyone' in audience ? table.endpoints : reachableBy(table.endpoints, audience));
    const key = `${version}:${'everyone' in audience ? '*' : createHash('sha256').update(endpoints.map((e) => e.doc._id).join(',')).digest('base64url')}`;
    const cached = docs.documents.get(key) ?? docs.building.get(key);
    if (cached !== undefined) return cached;
    const building = this.build(docs, table, endpoints, version);
    docs.building.set(key, building);
    try {
      const bytes = await building;
      this.keep(docs, key, bytes);
      return bytes;
    } finally {
      docs.building.delete(key);
    }
  }

  /**
   * Planned, then written piece by piece into gzip (zlib works off the event loop, and the loop is
   * given back between pieces): never the whole document as one string or one object tree.
   */
  private async build(docs: TableDocs, table: RouteTable, endpoints: CompiledEndpoint[], version: OpenApiVersion): Promise<Buffer> {
    const groups = await docs.groups;
    const readers = new Map(endpoints.filter((e) => e.doc.method === 'GET').map((e) => [e.pattern.path, e]));
    const indexes = await docs.indexes;
    const plan = await planOpenApi({ endpoints, names: endpointNames(table), reader: (path) => readers.get(path), groups, indexes }, pause);
    // Level 1: 44 MB in well under a second, and this JSON repeats so much that it still shrinks ~18×.
    const gzip = createGzip({ level: 1 });
    const out: Buffer[] = [];
    gzip.on('data', (chunk: Buffer) => out.push(chunk));
    const ended = once(gzip, 'end');
    let pending = '';
    const flush = async (): Promise<void> => {
      const text = pending;
      pending = '';
      if (!gzip.write(text)) await once(gzip, 'drain');
    };
    try {
      await writeOpenApi(plan, version, async (text) => {
        pending += text;
        if (pending.length >= WRITE_CHUNK) await flush();
      }, pause);
      gzip.end(pending);
      await ended;
    } finally {
      gzip.destroy();
    }
    return Buffer.concat(out);
  }

  /** The oldest go first; the one just built always stays. */
  private keep(docs: TableDocs, key: string, bytes: Buffer): void {
    docs.documents.set(key, bytes);
    let total = [...docs.documents.values()].reduce((sum, b) => sum + b.length, 0);
    for (const [oldKey, old] of docs.documents) {
      if (oldKey === key || (docs.documents.size <= MAX_AUDIENCES && total <= MAX_CACHED_BYTES)) break;
      docs.documents.delete(oldKey);
      total -= old.length;
    }
  }
}

const pause = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const unzip = promisify(gunzip);
const WRITE_CHUNK = 64 * 1024;

/** The endpoints whose access type lets this caller in (network rules are checked per call). */
function reachableBy(endpoints: readonly CompiledEndpoint[], audience: { principal: Principal; from?: NetworkRequest }): CompiledEndpoint[] {
  const visible = visibleTo(endpoints, audience.principal);
  const from = audience.from;
  return from === undefined ? visible : visible.filter((endpoint) => endpoint.network.allows(from));
}

export function visibleTo(endpoints: readonly CompiledEndpoint[], principal: Principal | undefined): CompiledEndpoint[] {
  return endpoints.filter((endpoint) => accessDenial(endpoint.doc, principal) === null);
}
