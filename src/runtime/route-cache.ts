import type { Logger } from '../lib/logger.ts';
import type { EndpointDoc, EndpointGroupDoc } from '../model/endpoint.ts';
import type { Revisions } from '../services/revisions.ts';
import type { Store } from '../store/types.ts';
import type { HandlerCache } from './handler-cache.ts';
import { compileEndpoint, RouteTable, type CompiledEndpoint } from './route-table.ts';

/**
 * Holds this instance's route table and rebuilds it when the `endpoints` revision in the store
 * changes — whoever made the change, on whichever instance. Concurrent requests during a rebuild
 * share one rebuild. A definition that fails to compile is logged and left out, never fatal.
 * A rebuild also releases the compiled handlers (isolates) of definitions no longer served as
 * they were.
 */
export class RouteCache {
  private table: RouteTable = new RouteTable([]);
  private revision = -1;
  private building: { revision: number; table: Promise<RouteTable> } | null = null;
  private readonly deps: { store: Store; revisions: Revisions; logger: Logger; handlers?: HandlerCache };

  constructor(deps: RouteCache['deps']) {
    this.deps = deps;
  }

  /** The table when it is known to be current without waiting (the common case), else null. */
  peek(): RouteTable | null {
    return this.deps.revisions.known('endpoints') === this.revision ? this.table : null;
  }

  async current(): Promise<RouteTable> {
    const revision = await this.deps.revisions.current('endpoints');
    if (revision === this.revision) return this.table;
    if (this.building?.revision !== revision) {
      const table = this.rebuild(revision).finally(() => {
        if (this.building?.table === table) this.building = null;
      });
      this.building = { revision, table };
    }
    return this.building.table;
  }

  /**
   * The definition with this id as served; with `includeDisabled`, a disabled one is compiled
   * from the store on the spot (the /test route runs definitions that are not served). System
   * definitions are platform routes, never dispatched here.
   */
  async endpoint(id: string, options: { includeDisabled?: boolean } = {}): Promise<CompiledEndpoint | null> {
    const table = this.peek() ?? (await this.current());
    const served = table.endpoint(id);
    if (served || !options.includeDisabled) return served ?? null;
    const doc = await this.deps.store.collection<EndpointDoc>('endpoints').findById(id);
    if (!doc || doc.isSystem) return null;
    const group = doc.groupId ? await this.deps.store.collection<EndpointGroupDoc>('endpointgroups').findById(doc.groupId) : null;
    return compileEndpoint(doc, group ?? undefined);
  }

  private async rebuild(revision: number): Promise<RouteTable> {
    const [docs, groups] = await Promise.all([
      this.deps.store.collection<EndpointDoc>('endpoints').find({ enabled: true, isSystem: false }),
      this.deps.store.collection<EndpointGroupDoc>('endpointgroups').find({}),
    ]);
    const previous = new Map(this.table.endpoints.map((e) => [e.doc._id, e]));
    const groupsById = new Map(groups.map((g) => [g._id, g]));
    const compiled: CompiledEndpoint[] = [];
    for (const doc of docs) {
      try {
        compiled.push(compileEndpoint(doc, doc.groupId ? groupsById.get(doc.groupId) : undefined, previous.get(doc._id)));
      } catch (error) {
        this.deps.logger.error(`endpoint ${doc.method} ${doc.path} could not be compiled and is not served`, { error });
      }
    }
    const table = new RouteTable(compiled);
    // Two rebuilds may overlap; the older one never replaces the newer table.
    if (revision >= this.revision) {
      this.table = table;
      this.revision = revision;
      this.deps.handlers?.retain(new Map(compiled.filter((e) => e.doc.handler.enabled).map((e) => [e.doc._id, e.doc.revision])));
    }
    return table;
  }
}
