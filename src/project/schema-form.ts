// A project file or bundle may carry a schema in the management API's array form (a definition
// copied from GET /api/endpoints). Before the diff it becomes the stored map form, its
// refEndpointIds looked up on this server, so both sides of the diff have one form. Export and
// write-back keep writing the map form with references by path.
import { normalizePath } from '../lib/paths.ts';
import { mentionsEndpointIds, schemaFromWire } from '../model/schema-wire.ts';
import type { Bundle } from './bundle.ts';
import { endpointKey } from './kinds/endpoint.ts';
import type { Problem } from './problem.ts';
import type { ProjectServices } from './services.ts';

export async function withStoredSchemas(services: ProjectServices, bundle: Bundle): Promise<{ bundle: Bundle; problems: Problem[] }> {
  const paths = bundle.endpoints.some((spec) => mentionsEndpointIds(spec.schema))
    ? new Map((await services.endpoints.all()).map((endpoint) => [endpoint._id, endpoint.path]))
    : new Map<string, string>();
  const problems: Problem[] = [];
  const endpoints = bundle.endpoints.map((spec) => {
    const converted = schemaFromWire(spec.schema, (id) => paths.get(id));
    const at = `endpoints[${endpointKey({ method: spec.method, path: normalizePath(spec.path) })}]`;
    problems.push(...converted.problems.map((problem) => ({ path: `${at}.${problem.field}`, message: problem.message })));
    return { ...spec, schema: converted.schema as Record<string, unknown> };
  });
  return { bundle: { ...bundle, endpoints }, problems };
}
