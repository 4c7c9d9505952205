import { badRequest, conflict, forbidden, notFound } from '../lib/errors.ts';
import { isId } from '../lib/ids.ts';
import type { EventBus } from '../events/bus.ts';
import { PERMISSIONS, type Permission } from '../model/permissions.ts';
import type { CallerActor } from '../model/actor.ts';
import { assertHolds } from '../model/principal.ts';
import type { AuditLog } from './audit-log.ts';
import type { ChangeQueue } from './change-queue.ts';
import type { GroupDoc, UserDoc } from '../model/records.ts';
import { compileValidator } from '../model/validation.ts';
import { DuplicateKeyError, type Page, type Store } from '../store/types.ts';
import { assertNoIdOnCreate, assertShownUnchanged, setShownFieldsAside } from './shown-fields.ts';

export const ADMINISTRATORS = 'Administrators';

export interface GroupInput {
  name: string;
  description?: string;
  permissions?: Permission[];
}

const groupProperties = {
  name: { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' },
  description: { type: 'string', maxLength: 1000 },
  permissions: { type: 'array', maxItems: PERMISSIONS.length, uniqueItems: true, items: { enum: [...PERMISSIONS] } },
};
const validateCreate = compileValidator<GroupInput>({ type: 'object', additionalProperties: false, required: ['name'], properties: groupProperties });
const validateUpdate = compileValidator<Partial<GroupInput>>({ type: 'object', additionalProperties: false, properties: groupProperties });

export interface PublicGroup {
  _id: string;
  name: string;
  description: string;
  permissions: string[];
  isSystem: boolean;
  createdAt: string;
  updatedAt: string;
}

export function publicGroup(doc: GroupDoc): PublicGroup {
  return {
    _id: doc._id,
    name: doc.name,
    description: doc.description,
    permissions: doc.permissions,
    isSystem: doc.isSystem,
    createdAt: String(doc.createdAt),
    updatedAt: String(doc.updatedAt),
  };
}

const nameKey = (name: string): string => name.trim().toLowerCase();
/** Members a group is shown with that are not input (shown-fields.ts): checked, and kept by the service. */
const SHOWN_NAMED = ['_id', 'isSystem'] as const;
const SHOWN_KEPT = ['createdAt', 'updatedAt'];

export class GroupsService {
  private readonly store: Store;
  private readonly events: EventBus;
  private readonly audit: AuditLog;
  private readonly queues: { definitions: ChangeQueue; memberships: ChangeQueue };

  constructor(deps: { store: Store; events: EventBus; audit: AuditLog; definitions: ChangeQueue; memberships: ChangeQueue }) {
    this.queues = { definitions: deps.definitions, memberships: deps.memberships };
    this.store = deps.store;
    this.events = deps.events;
    this.audit = deps.audit;
  }

  private get groups() {
    return this.store.collection<GroupDoc>('groups');
  }

  list(query: { page: number; limit: number; search?: string }): Promise<Page<GroupDoc>> {
    return this.groups.findPage({}, {
      page: query.page,
      limit: query.limit,
      sort: { name: 1 },
      ...(query.search ? { search: { term: query.search, fields: ['name', 'description'] } } : {}),
    });
  }

  async get(id: string): Promise<GroupDoc> {
    const group = isId(id) ? await this.groups.findById(id) : null;
    if (!group) throw notFound('Group not found');
    return group;
  }

  /** Groups by id; unknown ids → 400 naming them. */
  async requireAll(ids: readonly string[]): Promise<GroupDoc[]> {
    const unique = [...new Set(ids)];
    const malformed = unique.filter((id) => !isId(id));
    const found = malformed.length ? [] : await this.groups.find({ _id: { $in: unique } });
    const missing = unique.filter((id) => !found.some((g) => g._id === id));
    if (missing.length > 0) throw badRequest(`Unknown group id: ${missing.join(', ')}`, [{ field: 'groupIds', message: `unknown group ${missing.join(', ')}` }]);
    return found;
  }

  async create(input: unknown, actor: CallerActor): Promise<GroupDoc> {
    const { rest, shown } = setShownFieldsAside(input, SHOWN_NAMED, SHOWN_KEPT);
    assertNoIdOnCreate(shown);
    if (shown.isSystem !== undefined && shown.isSystem !== false) throw badRequest('Invalid request body: isSystem can only be false: system groups are the platform\'s own', [{ field: 'isSystem', message: 'can only be false' }]);
    const valid = validateCreate(rest);
    assertHolds(actor.principal, valid.permissions ?? [], 'grant');
    const now = new Date();
    try {
      const group = await this.groups.insertOne({
        name: valid.name.trim(),
        nameKey: nameKey(valid.name),
        description: valid.description ?? '',
        permissions: valid.permissions ?? [],
        isSystem: false,
        createdAt: now,
        updatedAt: now,
      });
      this.events.emit('group.created', { id: group._id, name: group.name });
      await this.audit.change(actor, { action: 'group_created', message: `Group ${group.name} created`, source: 'groups', statusCode: 201 });
      return group;
    } catch (error) {
      throw duplicateName(error);
    }
  }

  async update(id: string, input: unknown, actor: CallerActor): Promise<GroupDoc> {
    const { rest, shown } = setShownFieldsAside(input, SHOWN_NAMED, SHOWN_KEPT);
    const valid = validateUpdate(rest);
    const group = await this.get(id);
    assertShownUnchanged(shown, group);
    const changesPermissions = valid.permissions !== undefined && [...valid.permissions].sort().join() !== [...group.permissions].sort().join();
    // A system group keeps its name exactly: messages and docs name it so (a change of case too).
    const changesName = valid.name !== undefined && valid.name.trim() !== group.name;
    if (group.isSystem && (changesName || changesPermissions)) {
      throw forbidden('The name and permissions of a system group cannot be changed');
    }
    // Editing a group stronger than the caller is refused, whatever the edit; granting needs the permissions.
    assertHolds(actor.principal, group.permissions, 'change a group holding');
    assertHolds(actor.principal, valid.permissions ?? [], 'grant');
    const set: Record<string, unknown> = { updatedAt: new Date() };
    if (valid.name !== undefined) Object.assign(set, { name: valid.name.trim(), nameKey: nameKey(valid.name) });
    if (valid.description !== undefined) set.description = valid.description;
    if (valid.permissions !== undefined) set.permissions = valid.permissions;
    try {
      const updated = await this.groups.updateOne({ _id: group._id }, { $set: set });
      if (!updated) throw notFound('Group not found');
      this.events.emit('group.updated', { id: updated._id, name: updated.name });
      await this.audit.change(actor, { action: 'group_updated', message: `Group ${updated.name} updated`, source: 'groups' });
      return updated;
    } catch (error) {
      throw duplicateName(error);
    }
  }

  /**
   * Refuses (409) while users are members or endpoints allow it, so that deleting a group never
   * silently changes access. In both change queues (definitions first; nothing takes them the
   * other way round): a user or an endpoint saved into the group meanwhile would be left naming a
   * group that is gone.
   */
  delete(id: string, actor: CallerActor): Promise<GroupDoc> {
    return this.queues.definitions.run(() => this.queues.memberships.run(() => this.deleteNow(id, actor)));
  }

  private async deleteNow(id: string, actor: CallerActor): Promise<GroupDoc> {
    const group = await this.get(id);
    if (group.isSystem) throw forbidden('A system group cannot be deleted');
    assertHolds(actor.principal, group.permissions, 'delete a group holding');
    const members = await this.store.collection<UserDoc>('users').count({ groupIds: { $has: group._id } });
    if (members > 0) throw conflict(`Group "${group.name}" still has ${members} member${members === 1 ? '' : 's'}; remove them from it first`);
    // An endpoint left naming a deleted group could not be saved again, nor its export imported.
    const guarded = await this.store.collection<{ _id: string; allowedGroupIds?: string[] }>('endpoints').count({ allowedGroupIds: { $has: group._id } });
    if (guarded > 0) throw conflict(`Group "${group.name}" is an allowed group of ${guarded} endpoint${guarded === 1 ? '' : 's'}; remove it from their allowed groups first`);
    await this.groups.deleteOne({ _id: group._id });
    this.events.emit('group.deleted', { id: group._id, name: group.name });
    await this.audit.change(actor, { action: 'group_deleted', message: `Group ${group.name} deleted`, source: 'groups' });
    return group;
  }

  /** First start (and every start): the system group exists and holds every permission. */
  async ensureAdministrators(): Promise<GroupDoc> {
    const now = new Date();
    const existing = await this.groups.findOne({ nameKey: nameKey(ADMINISTRATORS) });
    if (existing) {
      const updated = await this.groups.updateOne({ _id: existing._id }, { $set: { permissions: [...PERMISSIONS], isSystem: true } });
      return updated ?? existing;
    }
    try {
      return await this.groups.insertOne({
        name: ADMINISTRATORS,
        nameKey: nameKey(ADMINISTRATORS),
        description: 'System group with every permission',
        permissions: [...PERMISSIONS],
        isSystem: true,
        createdAt: now,
        updatedAt: now,
      });
    } catch (error) {
      // Another process on the same store created it first.
      if (error instanceof DuplicateKeyError) return (await this.groups.findOne({ nameKey: nameKey(ADMINISTRATORS) })) as GroupDoc;
      throw error;
    }
  }
}

/** Permissions a set of groups confers, for the same rule applied to group membership. */
export function permissionsOfGroups(groups: readonly GroupDoc[]): string[] {
  return [...new Set(groups.flatMap((g) => g.permissions))];
}

function duplicateName(error: unknown): unknown {
  return error instanceof DuplicateKeyError ? conflict('A group with this name already exists') : error;
}
