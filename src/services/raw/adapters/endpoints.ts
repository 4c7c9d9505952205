// Raw `endpoints`: writes go through EndpointsService, so a definition is validated as it is on
// /api/endpoints, system endpoints keep their path and method and cannot be deleted, records
// follow a path change, and the revision bump makes every instance serve the change on its next
// request (and the project directory gets it written back).
import { DEFAULT_NETWORK_ACCESS } from '../../../model/endpoint.ts';
import { slugify, type EndpointsService } from '../../endpoints.ts';
import { asActor, editable, LIVE, MANAGED, STAMPS, type RawAdapter } from '../adapter.ts';

export function endpointsAdapter(endpoints: EndpointsService): RawAdapter {
  return {
    name: 'endpoints',
    alsoNeeds: { read: ['manage_api', 'view'], write: ['manage_api'] },
    searchFields: ['name', 'path', 'slug'],
    sort: { path: 1, method: 1 },
    fields: {
      name: editable(),
      description: editable(''),
      slug: { rule: 'editable', absent: (body) => slugify(typeof body.name === 'string' ? body.name : '') },
      path: editable(),
      method: editable(),
      accessType: editable(),
      allowedGroupIds: editable([]),
      groupId: editable(null),
      schema: editable(),
      networkAccess: editable(DEFAULT_NETWORK_ACCESS),
      inheritGroupNetworkAccess: editable(true),
      enabled: editable(true),
      apiVersion: editable(null),
      retentionDays: editable(null),
      handler: editable({ enabled: false, code: '' }),
      isSystem: MANAGED,
      callCount: LIVE,
      revision: MANAGED,
      ...STAMPS,
    },
    label: (doc) => `${String(doc.method)} ${String(doc.path)}`,
    create: (input, actor) => endpoints.create(input, asActor(actor)),
    replace: (current, changes, actor) => endpoints.update(current._id, changes, asActor(actor)),
    delete: (current, actor) => endpoints.delete(current._id, asActor(actor)),
  };
}
