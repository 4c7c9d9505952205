// Raw `groups`: writes go through GroupsService (unique names, system groups kept, no granting
// of permissions the caller lacks, no deleting a group that still has members).
import type { GroupsService } from '../../groups.ts';
import { asActor, editable, MANAGED, STAMPS, type RawAdapter } from '../adapter.ts';

export function groupsAdapter(groups: GroupsService): RawAdapter {
  return {
    name: 'groups',
    searchFields: ['name'],
    sort: { name: 1 },
    fields: { name: editable(), description: editable(''), permissions: editable([]), nameKey: MANAGED, isSystem: MANAGED, ...STAMPS },
    label: (doc) => String(doc.name),
    create: (input, actor) => groups.create(input, asActor(actor)),
    replace: (current, changes, actor) => groups.update(current._id, changes, asActor(actor)),
    delete: (current, actor) => groups.delete(current._id, asActor(actor)),
  };
}
