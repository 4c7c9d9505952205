// A project file or bundle may carry an endpoint schema in the management API's array form (a
// definition copied from GET /api/endpoints). Before the diff it becomes the stored map form, its
// refEndpointIds looked up on this server, so both sides of the diff have one form. Export and
// write-back keep writing the map form with references by path. The endpoint kind's `resolve`.
import { mentionsEndpointIds, schemaFromWire } from '../model/schema-wire.ts';
import type { EndpointSpec } from './specs.ts';
import type { ProjectServices } from './services.ts';

export async function withStoredSchemas(services: ProjectServices, specs: readonly EndpointSpec[]): Promise<{ specs: EndpointSpec[]; problems: Array<{ index: number; path: string; message: string }> }> {
  const paths = specs.some((spec) => mentionsEndpointIds(spec.schema))
    ? new Map((await services.endpoints.all()).map((endpoint) => [endpoint._id, endpoint.path]))
    : new Map<string, string>();
  const problems: Array<{ index: number; path: string; message: string }> = [];
  const resolved = specs.map((spec, index) => {
    const converted = schemaFromWire(spec.schema, (id) => paths.get(id));
    problems.push(...converted.problems.map((problem) => ({ index, path: problem.field, message: problem.message })));
    return { ...spec, schema: converted.schema as Record<string, unknown> };
  });
  return { specs: resolved, problems };
}
