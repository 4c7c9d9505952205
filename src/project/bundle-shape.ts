import { badRequest } from '../lib/errors.ts';
import { compileValidator } from '../model/validation.ts';
import type { Bundle } from './bundle.ts';
import { bundleOf, KINDS, specsOf, type KindName } from './kinds/index.ts';
import type { Problem } from './problem.ts';

/**
 * The outer shape of a bundle sent to the project API: known top-level fields only (a misspelt
 * one is a 400, never silently ignored), lists where lists go, records as objects. What is inside
 * each definition is for validateBundle (validate-bundle.ts, the same checks as project files)
 * and then the services. Each kind's list (`groups`, `endpoints`, `cronJobs`, `webhooks`) may be
 * omitted: the bundle then says nothing about that kind (kindsLeftOut), and even a replace or a
 * prune leaves its definitions as they are — a file shaped as the spec describes (groups and
 * endpoints only) does not delete every cron job and webhook.
 */
const validateShape = compileValidator<Partial<Bundle>>(
  {
    type: 'object',
    additionalProperties: false,
    properties: {
      ...Object.fromEntries(KINDS.map((kind) => [kind.bundleKey, { type: 'array' }])),
      data: { type: 'object', additionalProperties: { type: 'array', items: { type: 'object' } } },
      settings: { type: 'object' },
    },
  },
  'bundle',
);

export function checkBundleShape(input: unknown): Bundle {
  if (input === undefined) throw badRequest('A bundle is required');
  const shaped = validateShape(input);
  return { ...shaped, ...bundleOf((kind) => [...specsOf(shaped, kind)]) };
}

/** The kinds whose list a sent bundle (already checked by checkBundleShape) leaves out. */
export function kindsLeftOut(input: unknown): ReadonlySet<KindName> {
  const given = input as Record<string, unknown>;
  return new Set(KINDS.filter((kind) => given[kind.bundleKey] === undefined).map((kind) => kind.kind));
}

/** Handler files are read by the project loader; a bundle sent over HTTP carries the code itself. */
export function handlerFileProblems(bundle: Bundle): Problem[] {
  return KINDS.flatMap((kind) => {
    const field = kind.codeFile?.field;
    if (field === undefined) return [];
    return specsOf(bundle, kind).flatMap((spec, index) => {
      const holder = (spec as Record<string, { file?: unknown; code?: unknown } | undefined> | null)?.[field];
      return holder?.file !== undefined && holder.code === undefined
        ? [{ path: `${kind.bundleKey}[${index}].${field}.file`, message: `is read by the project loader; send the code inline as ${field}.code` }]
        : [];
    });
  });
}

/** True when applying this bundle with prune would delete every definition. */
export function isEmptyBundle(bundle: Partial<Bundle>): boolean {
  return KINDS.every((kind) => specsOf(bundle, kind).length === 0);
}
