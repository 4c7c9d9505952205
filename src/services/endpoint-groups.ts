import { conflict, notFound } from '../lib/errors.ts';
import { isId } from '../lib/ids.ts';
import { DEFAULT_NETWORK_ACCESS, NETWORK_ACCESS_SCHEMA, type EndpointDoc, type EndpointGroupDoc } from '../model/endpoint.ts';
import { assertValidNetworkAccess, type NetworkAccess } from '../model/network-access.ts';
import { compileValidator } from '../model/validation.ts';
import { DuplicateKeyError, type Page, type Store } from '../store/types.ts';
import type { EventBus } from '../events/bus.ts';
import type { Actor } from '../model/actor.ts';
import type { AuditLog } from './audit-log.ts';
import type { ChangeQueue } from './change-queue.ts';
import type { Revisions } from './revisions.ts';
import { assertNoIdOnCreate, assertShownUnchanged, setShownFieldsAside } from './shown-fields.ts';

/**
 * Endpoint groups organise endpoints and can carry network rules that their endpoints inherit.
 * Deleting a group that endpoints still use is refused (409): detaching silently would drop
 * the network rules those endpoints inherit. Every change is audited here, for the actor given.
 */
interface GroupInput {
  name: string;
  description?: string;
  icon?: string;
  color?: string;
  order?: number;
  networkAccess?: Partial<NetworkAccess>;
}

const properties = {
  name: { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' },
  description: { type: 'string', maxLength: 1000 },
  icon: { type: 'string', maxLength: 100 },
  color: { type: 'string', pattern: '^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$' },
  order: { type: 'integer', minimum: -1_000_000, maximum: 1_000_000 },
  networkAccess: NETWORK_ACCESS_SCHEMA,
};
const validateCreate = compileValidator<GroupInput>({ type: 'object', additionalProperties: false, required: ['name'], properties });
const validateUpdate = compileValidator<Partial<GroupInput>>({ type: 'object', additionalProperties: false, properties });
/** What a group is shown with and the service keeps: ignored when sent back (shown-fields.ts). */
const SHOWN_KEPT = ['createdAt', 'updatedAt'];

export function publicEndpointGroup(doc: EndpointGroupDoc): Record<string, unknown> {
  const { nameKey: _key, ...rest } = doc;
  return { ...rest, createdAt: String(doc.createdAt), updatedAt: String(doc.updatedAt) };
}

export function mergeNetworkAccess(current: NetworkAccess, patch: Partial<NetworkAccess> | undefined): NetworkAccess {
  return { ...current, ...(patch ?? {}) };
}

export class EndpointGroupsService {
  private readonly store: Store;
  private readonly revisions: Revisions;
  private readonly events: EventBus;
  private readonly audit: AuditLog;
  private readonly definitions: ChangeQueue;

  constructor(deps: { store: Store; revisions: Revisions; events: EventBus; audit: AuditLog; definitions: ChangeQueue }) {
    this.store = deps.store;
    this.definitions = deps.definitions;
    this.revisions = deps.revisions;
    this.events = deps.events;
    this.audit = deps.audit;
  }

  private get groups() {
    return this.store.collection<EndpointGroupDoc>('endpointgroups');
  }

  list(query: { page: number; limit: number; search?: string }): Promise<Page<EndpointGroupDoc>> {
    return this.groups.findPage({}, {
      page: query.page,
      limit: query.limit,
      sort: { order: 1, name: 1 },
      ...(query.search ? { search: { term: query.search, fields: ['name', 'description'] } } : {}),
    });
  }

  all(): Promise<EndpointGroupDoc[]> {
    return this.groups.find({}, { sort: { order: 1, name: 1 } });
  }

  async get(id: string): Promise<EndpointGroupDoc> {
    const group = isId(id) ? await this.groups.findById(id) : null;
    if (!group) throw notFound('Endpoint group not found');
    return group;
  }

  async create(input: unknown, actor: Actor): Promise<EndpointGroupDoc> {
    const { rest, shown } = setShownFieldsAside(input, ['_id'], SHOWN_KEPT);
    assertNoIdOnCreate(shown);
    const valid = validateCreate(rest);
    const networkAccess = mergeNetworkAccess(DEFAULT_NETWORK_ACCESS, valid.networkAccess);
    assertValidNetworkAccess(networkAccess);
    const now = new Date();
    try {
      const group = await this.groups.insertOne({
        name: valid.name.trim(),
        nameKey: valid.name.trim().toLowerCase(),
        description: valid.description ?? '',
        icon: valid.icon ?? '',
        color: valid.color ?? '#6b7280',
        order: valid.order ?? 0,
        networkAccess,
        createdAt: now,
        updatedAt: now,
      });
      await this.revisions.bump('endpoints');
      this.events.emit('endpointgroup.created', { id: group._id, name: group.name });
      await this.audit.change(actor, { action: 'endpoint_group_created', message: `Endpoint group ${group.name} created`, source: 'endpoints', statusCode: 201 });
      return group;
    } catch (error) {
      throw duplicate(error);
    }
  }

  async update(id: string, input: unknown, actor: Actor): Promise<EndpointGroupDoc> {
    const { rest, shown } = setShownFieldsAside(input, ['_id'], SHOWN_KEPT);
    const valid = validateUpdate(rest);
    const group = await this.get(id);
    assertShownUnchanged(shown, group);
    const set: Record<string, unknown> = { updatedAt: new Date() };
    for (const field of ['description', 'icon', 'color', 'order'] as const) if (valid[field] !== undefined) set[field] = valid[field];
    if (valid.name !== undefined) Object.assign(set, { name: valid.name.trim(), nameKey: valid.name.trim().toLowerCase() });
    if (valid.networkAccess !== undefined) {
      const networkAccess = mergeNetworkAccess(group.networkAccess, valid.networkAccess);
      assertValidNetworkAccess(networkAccess);
      set.networkAccess = networkAccess;
    }
    try {
      const updated = await this.groups.updateOne({ _id: group._id }, { $set: set });
      if (!updated) throw notFound('Endpoint group not found');
      await this.revisions.bump('endpoints');
      this.events.emit('endpointgroup.updated', { id: updated._id, name: updated.name, previousName: group.name });
      await this.audit.change(actor, { action: 'endpoint_group_updated', message: `Endpoint group ${updated.name} updated`, source: 'endpoints' });
      return updated;
    } catch (error) {
      throw duplicate(error);
    }
  }

  /** In the definitions queue: an endpoint saved into the group meanwhile would be left naming it. */
  delete(id: string, actor: Actor): Promise<EndpointGroupDoc> {
    return this.definitions.run(() => this.deleteNow(id, actor));
  }

  private async deleteNow(id: string, actor: Actor): Promise<EndpointGroupDoc> {
    const group = await this.get(id);
    const users = await this.store.collection<EndpointDoc>('endpoints').count({ groupId: group._id });
    if (users > 0) throw conflict(`Endpoint group "${group.name}" is used by ${users} endpoint${users === 1 ? '' : 's'}; move them to another group first`);
    await this.groups.deleteOne({ _id: group._id });
    await this.revisions.bump('endpoints');
    this.events.emit('endpointgroup.deleted', { id: group._id, name: group.name });
    await this.audit.change(actor, { action: 'endpoint_group_deleted', message: `Endpoint group ${group.name} deleted`, source: 'endpoints' });
    return group;
  }
}

function duplicate(error: unknown): unknown {
  return error instanceof DuplicateKeyError ? conflict('An endpoint group with this name already exists') : error;
}
