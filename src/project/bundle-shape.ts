import { badRequest } from '../lib/errors.ts';
import { compileValidator } from '../model/validation.ts';
import type { Bundle, EndpointSpec } from './bundle.ts';
import type { Problem } from './problem.ts';

/**
 * The outer shape of a bundle sent to the project API: known top-level fields only (a misspelt
 * one is a 400, never silently ignored), lists where lists go, records as objects. What is inside
 * each definition is for validateBundle (validate-bundle.ts, the same checks as project files)
 * and then the services. `groups` and `endpoints` may be omitted (empty).
 */
const validateShape = compileValidator<Partial<Bundle>>(
  {
    type: 'object',
    additionalProperties: false,
    properties: {
      groups: { type: 'array' },
      endpoints: { type: 'array' },
      data: { type: 'object', additionalProperties: { type: 'array', items: { type: 'object' } } },
      settings: { type: 'object' },
    },
  },
  'bundle',
);

export function checkBundleShape(input: unknown): Bundle {
  if (input === undefined) throw badRequest('A bundle is required');
  const shaped = validateShape(input);
  return { ...shaped, groups: shaped.groups ?? [], endpoints: shaped.endpoints ?? [] };
}

/** Handler files are read by the project loader; a bundle sent over HTTP carries the code itself. */
export function handlerFileProblems(bundle: Bundle): Problem[] {
  return bundle.endpoints.flatMap((endpoint: Partial<EndpointSpec> | null, index) =>
    endpoint?.handler?.file !== undefined && endpoint.handler.code === undefined
      ? [{ path: `endpoints[${index}].handler.file`, message: 'is read by the project loader; send the code inline as handler.code' }]
      : [],
  );
}

/** True when applying this bundle with prune would delete every definition. */
export function isEmptyBundle(bundle: Bundle): boolean {
  return bundle.groups.length === 0 && bundle.endpoints.length === 0;
}
