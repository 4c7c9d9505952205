// The `group` kind: endpoint groups, one file each under groups/, keyed by name (letter case
// ignored, as the store does). Endpoints refer to them by name.
import type { EndpointGroupDoc } from '../../model/endpoint.ts';
import type { GroupSpec } from '../specs.ts';
import { compactGroup } from '../compact.ts';
import { compareText, normalizeGroup, type NormalGroup } from '../normalize.ts';
import { checkNetworkAccess } from './checks.ts';
import { slugOf, type ProjectKind } from './types.ts';

/** The natural key: `Shop` and ` shop ` are one group. */
export const groupKey = (spec: Pick<GroupSpec, 'name'>): string => spec.name.trim().toLowerCase();

export const groupKind: ProjectKind<GroupSpec, NormalGroup, 'group', 'groups'> = {
  kind: 'group',
  label: 'endpoint group',
  bundleKey: 'groups',
  dir: 'groups',
  schemaFile: 'endpoint-group.schema.json',
  keyFields: ['name'],
  key: (spec) => groupKey(spec),
  fileName: (spec) => `${slugOf(spec.name, 'group')}.yaml`,
  check(spec, report) {
    checkNetworkAccess(spec.networkAccess, report);
  },

  normalize: normalizeGroup,
  compact: compactGroup,
  fields: [{ name: 'name' }, { name: 'description' }, { name: 'icon' }, { name: 'color' }, { name: 'order' }, { name: 'networkAccess' }],

  async read(services) {
    const groups = (await services.endpointGroups.all()).map(groupSpec);
    return groups.sort((a, b) => compareText(a.name.toLowerCase(), b.name.toLowerCase()) || compareText(a.name, b.name));
  },
  ids: async (services) => new Map((await services.endpointGroups.all()).map((g) => [groupKey(g), g._id])),
  create: async ({ services, actor }, spec) => (await services.endpointGroups.create(spec, actor))._id,
  update: async ({ services, actor }, id, spec) => void (await services.endpointGroups.update(id, spec, actor)),
  delete: async ({ services, actor }, id) => void (await services.endpointGroups.delete(id, actor)),
};

function groupSpec(doc: EndpointGroupDoc): NormalGroup {
  return normalizeGroup({
    name: doc.name,
    description: doc.description,
    icon: doc.icon,
    color: doc.color,
    order: doc.order,
    networkAccess: doc.networkAccess,
  });
}
