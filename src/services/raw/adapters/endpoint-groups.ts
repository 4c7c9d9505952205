// Raw `endpointgroups`: writes go through EndpointGroupsService (unique names, valid network
// rules, no deleting a group endpoints still use, the revision that rebuilds route tables).
import { DEFAULT_NETWORK_ACCESS } from '../../../model/endpoint.ts';
import type { EndpointGroupsService } from '../../endpoint-groups.ts';
import { asActor, editable, MANAGED, STAMPS, type RawAdapter } from '../adapter.ts';

export function endpointGroupsAdapter(groups: EndpointGroupsService): RawAdapter {
  return {
    name: 'endpointgroups',
    alsoNeeds: { read: ['manage_api', 'view'], write: ['manage_api'] },
    searchFields: ['name'],
    sort: { order: 1, name: 1 },
    fields: {
      name: editable(),
      description: editable(''),
      icon: editable(''),
      color: editable('#6b7280'),
      order: editable(0),
      networkAccess: editable(DEFAULT_NETWORK_ACCESS),
      nameKey: MANAGED,
      ...STAMPS,
    },
    label: (doc) => String(doc.name),
    create: (input, actor) => groups.create(input, asActor(actor)),
    replace: (current, changes, actor) => groups.update(current._id, changes, asActor(actor)),
    delete: (current, actor) => groups.delete(current._id, asActor(actor)),
  };
}
