import type { EndpointDoc, EndpointGroupDoc } from '../model/endpoint.ts';
import { toPlain } from '../services/settings.ts';
import type { Bundle } from './bundle.ts';
import { exportData } from './data.ts';
import { restorePlaceholders } from './placeholder-memory.ts';
import { compareText, normalizeEndpoint, normalizeGroup, type NormalEndpoint, type NormalGroup } from './normalize.ts';
import { allUserGroups, type ProjectServices } from './services.ts';

/**
 * Store → Bundle. Definitions carry no ids: an endpoint names its endpoint group (`group`) and
 * its user groups (`allowedGroups`); read-only fields (`_id`, `isSystem`, `callCount`,
 * `revision`, timestamps) are left out, and so are system endpoints, which the platform owns.
 * Everything is in normal form (see normalize.ts) and in a stable order — groups by name,
 * endpoints by path then method — so two exports of the same state are byte-identical.
 * Users, API keys and the audit log are never exported.
 */
export interface ExportOptions {
  /** Records per collection path (see data.ts). */
  data?: boolean;
  settings?: boolean;
  /** The stored values themselves, placeholders not put back (plans and snapshots compare these). */
  storedValues?: boolean;
}

export async function exportBundle(services: ProjectServices, options: ExportOptions = {}): Promise<Bundle> {
  const groups = await services.endpointGroups.all();
  const userGroups = new Map((await allUserGroups(services.groups)).map((g) => [g._id, g.name]));
  const groupNames = new Map(groups.map((g) => [g._id, g.name]));
  const endpoints = (await services.endpoints.all()).filter((e) => !e.isSystem);
  const bundle: Bundle = {
    groups: groups.map(groupSpec).sort((a, b) => compareText(a.name.toLowerCase(), b.name.toLowerCase()) || compareText(a.name, b.name)),
    endpoints: endpoints
      .map((doc) => endpointSpec(doc, groupNames, userGroups))
      .sort((a, b) => compareText(a.path, b.path) || compareText(a.method, b.method)),
  };
  if (!options.storedValues) await restorePlaceholders(services.store, bundle);
  if (options.data) bundle.data = await exportData(services);
  if (options.settings) bundle.settings = { ...toPlain(await services.settings.get()) };
  return bundle;
}

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

function endpointSpec(doc: EndpointDoc, groupNames: ReadonlyMap<string, string>, userGroups: ReadonlyMap<string, string>): NormalEndpoint {
  return normalizeEndpoint({
    name: doc.name,
    description: doc.description,
    slug: doc.slug,
    path: doc.path,
    method: doc.method,
    accessType: doc.accessType,
    // An id whose group has since been deleted grants nothing; it has no name to export.
    allowedGroups: doc.allowedGroupIds.flatMap((id) => userGroups.get(id) ?? []),
    group: doc.groupId ? (groupNames.get(doc.groupId) ?? null) : null,
    schema: doc.schema,
    networkAccess: doc.networkAccess,
    inheritGroupNetworkAccess: doc.inheritGroupNetworkAccess,
    enabled: doc.enabled,
    apiVersion: doc.apiVersion,
    retentionDays: doc.retentionDays,
    handler: { enabled: doc.handler.enabled, code: doc.handler.code },
  });
}
