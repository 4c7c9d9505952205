// The `endpoint` kind: endpoint definitions, one file each under endpoints/, keyed by
// `METHOD path` (path normalized). An endpoint names its endpoint group (`group`, a project
// definition) and its user groups (`allowedGroups`, which live in the store only) by name.
import { badRequest } from '../../lib/errors.ts';
import { normalizePath } from '../../lib/paths.ts';
import type { EndpointDoc } from '../../model/endpoint.ts';
import type { EndpointSpec } from '../specs.ts';
import { compactEndpoint } from '../compact.ts';
import { compareText, normalizeEndpoint, type NormalEndpoint } from '../normalize.ts';
import type { Problem } from '../problem.ts';
import { withStoredSchemas } from '../schema-form.ts';
import { allUserGroups } from '../services.ts';
import { checkGroupAccess, checkHandler, checkNetworkAccess, checkPath, checkSchema, isWritten } from './checks.ts';
import { groupKey } from './endpoint-group.ts';
import { isPlainObject, slugOf, type ApplyContext, type ProjectKind } from './types.ts';

/** The natural key, of a definition whose path is normalized already. */
export const endpointKey = (spec: Pick<EndpointSpec, 'method' | 'path'>): string => `${spec.method} ${spec.path}`;

// References match names case-insensitively, as the store does.
const nameKeys = (value: unknown): unknown => (Array.isArray(value) ? value.map((v) => String(v).toLowerCase()).sort(compareText) : value);
const nameKey = (value: unknown): unknown => (typeof value === 'string' ? value.toLowerCase() : value);

export const endpointKind: ProjectKind<EndpointSpec, NormalEndpoint, 'endpoint', 'endpoints'> = {
  kind: 'endpoint',
  label: 'endpoint',
  bundleKey: 'endpoints',
  dir: 'endpoints',
  schemaFile: 'endpoint.schema.json',
  keyFields: ['method', 'path'],
  checkedByCode: ['schema'],
  codeFile: { field: 'handler', suffix: '.handler.js' },
  // `methods: [GET, POST]`: one file, one definition per method (resource-file.ts).
  resourceFiles: true,
  // The server stores normalized paths: `shop/items/` and `/shop/items` are one endpoint.
  key: (spec) => endpointKey({ method: spec.method, path: normalizePath(spec.path) }),
  // `/api/shop/products` POST → shop-products-post.yaml: files sort by path.
  fileName: (spec) => `${slugOf(normalizePath(spec.path).replace(/^\/api(?=\/.)/, ''), 'root')}-${spec.method.toLowerCase()}.yaml`,
  resolve: (services, specs) => withStoredSchemas(services, specs),
  check(spec, report) {
    if (isWritten(spec.path)) checkPath(spec.path, report);
    if (spec.schema !== undefined) checkSchema(spec.schema, report, spec.path);
    checkGroupAccess(spec, report);
    checkNetworkAccess(spec.networkAccess, report);
    if (isPlainObject(spec.handler)) checkHandler(spec.handler, report);
  },
  references(spec) {
    return typeof spec.group === 'string' ? [{ path: 'group', kind: 'group', key: groupKey({ name: spec.group }), name: spec.group }] : [];
  },

  normalize: normalizeEndpoint,
  compact: compactEndpoint,
  fields: [
    { name: 'name' },
    { name: 'description' },
    { name: 'slug' },
    { name: 'accessType' },
    { name: 'allowedGroups', compare: nameKeys },
    { name: 'group', compare: nameKey },
    { name: 'schema' },
    { name: 'networkAccess' },
    { name: 'inheritGroupNetworkAccess' },
    { name: 'enabled' },
    { name: 'apiVersion' },
    { name: 'retentionDays' },
    { name: 'handler' },
  ],
  collections: (spec) => [spec.path],

  // System endpoints are the platform's: never exported, never managed by a project.
  async read(services) {
    const groupNames = new Map((await services.endpointGroups.all()).map((g) => [g._id, g.name]));
    const userGroups = new Map((await allUserGroups(services.groups)).map((g) => [g._id, g.name]));
    const endpoints = (await services.endpoints.all()).filter((e) => !e.isSystem).map((doc) => endpointSpec(doc, groupNames, userGroups));
    return endpoints.sort((a, b) => compareText(a.path, b.path) || compareText(a.method, b.method));
  },
  ids: async (services) => new Map((await services.endpoints.all()).filter((e) => !e.isSystem).map((e) => [endpointKey(e), e._id])),
  async storeRules(services) {
    const system = new Set((await services.endpoints.all()).filter((e) => e.isSystem).map((e) => endpointKey(e)));
    const userGroups = new Set((await allUserGroups(services.groups)).map((g) => g.name.toLowerCase()));
    return (spec) => {
      const problems: Problem[] = [];
      if (system.has(endpointKey(spec))) problems.push({ path: '', message: 'is a system endpoint, served by the platform; it cannot be defined in a bundle' });
      for (const name of spec.allowedGroups) {
        if (!userGroups.has(name.toLowerCase())) problems.push({ path: 'allowedGroups', message: `names the unknown user group "${name}"` });
      }
      return problems;
    };
  },
  create: async (context, spec) => (await context.services.endpoints.create(endpointInput(context, spec), context.actor))._id,
  update: async (context, id, spec) => void (await context.services.endpoints.update(id, endpointInput(context, spec), context.actor)),
  delete: async ({ services, actor }, id) => void (await services.endpoints.delete(id, actor)),
};

/** Names → store ids, for the service. */
function endpointInput(context: ApplyContext, spec: NormalEndpoint): Record<string, unknown> {
  const { allowedGroups, group, ...fields } = spec;
  const id = (found: string | undefined, name: string, what: string): string => {
    if (!found) throw badRequest(`Unknown ${what} "${name}"`);
    return found;
  };
  return {
    ...fields,
    allowedGroupIds: allowedGroups.map((name) => id(context.userGroupId(name), name, 'user group')),
    groupId: group === null ? null : id(context.idOf('group', groupKey({ name: group })), group, 'endpoint group'),
  };
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
