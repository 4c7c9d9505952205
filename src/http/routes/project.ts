import { badRequest } from '../../lib/errors.ts';
import { applyBundle, importBundle, planBundle } from '../../project/apply.ts';
import type { Bundle } from '../../project/bundle.ts';
import { checkBundleShape } from '../../project/bundle-shape.ts';
import { summarize } from '../../project/diff.ts';
import { exportBundle } from '../../project/export.ts';
import { loadProject } from '../../project/files.ts';
import type { Services } from '../container.ts';
import { readBundleBody, toYaml } from '../bundle-body.ts';
import { requireActor, requireAny } from '../middleware/require-permission.ts';
import { readQuery } from '../query.ts';
import { ok } from '../respond.ts';
import type { DynContext } from '../state.ts';
import type { ApiRouter } from './router.ts';

/**
 * The project as a whole: export the store as a bundle, import one, plan and apply one (the
 * GitOps directory's format, see src/project/bundle.ts). Everything needs manage_api.
 */
export function projectRoutes(router: ApiRouter, services: Services): void {
  const manage = requireAny('manage_api');
  const bundleOf = async (ctx: DynContext): Promise<Bundle> => checkBundleShape(await readBundleBody(ctx, services.config.bodyLimitBytes));

  router.get('/project/export', manage, async (ctx) => {
    const query = readQuery(ctx, ['data', 'settings', 'format']);
    const format = choice(query, 'format', ['yaml', 'json'], 'yaml');
    const bundle = await exportBundle(services, { data: flag(query, 'data'), settings: flag(query, 'settings') });
    if (format === 'json') return ok(ctx, bundle);
    ctx.type = 'application/yaml';
    ctx.body = toYaml(bundle);
  });

  router.post('/project/plan', manage, async (ctx) => {
    const query = readQuery(ctx, ['prune']);
    const bundle = definitionsOnly(await bundleOf(ctx));
    const { changes } = await planBundle(services, bundle, { prune: flag(query, 'prune') });
    ok(ctx, { changes, summary: summarize(changes) });
  });

  router.post('/project/apply', manage, async (ctx) => {
    const query = readQuery(ctx, ['prune', 'dryRun']);
    const bundle = definitionsOnly(await bundleOf(ctx));
    const result = await applyBundle(services, bundle, { prune: flag(query, 'prune'), dryRun: flag(query, 'dryRun'), actor: requireActor(ctx) });
    ok(ctx, result);
  });

  router.post('/project/import', manage, async (ctx) => {
    const query = readQuery(ctx, ['mode']);
    const mode = choice(query, 'mode', ['merge', 'replace'], 'merge');
    const result = await importBundle(await bundleOf(ctx), { mode, actor: requireActor(ctx) }, services);
    ok(ctx, result);
  });

  router.get('/project/status', manage, async (ctx) => {
    readQuery(ctx, []);
    ok(ctx, services.projectStatus.view());
  });

  // Which file of the project directory holds each definition (the admin shows it in the
  // editor): `[{kind, key, file, handlerFile?}]`, `key` as in plan changes (`GET /api/x`, a group's
  // lower-cased name), `file` relative to the project directory. Read-only; read on each call.
  router.get('/project/files', manage, async (ctx) => {
    readQuery(ctx, []);
    const { files } = loadProject(services.config.projectDir);
    ok(ctx, [...files.values()].map(({ kind, key, relPath, handlerFile }) => ({ kind, key, file: relPath, ...(handlerFile ? { handlerFile: handlerFile.relPath } : {}) })));
  });
}

function flag(query: Record<string, string>, name: string): boolean {
  const value = query[name];
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw badRequest(`Query parameter "${name}" must be true or false`, [{ field: name, message: 'must be true or false' }]);
}

function choice<T extends string>(query: Record<string, string>, name: string, allowed: readonly T[], fallback: T): T {
  const value = query[name];
  if (value === undefined) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw badRequest(`Query parameter "${name}" must be one of: ${allowed.join(', ')}`, [{ field: name, message: `must be one of: ${allowed.join(', ')}` }]);
}

/** Plan and apply manage definitions; records and settings go through import. */
function definitionsOnly(bundle: Bundle): Bundle {
  const extra = (['data', 'settings'] as const).filter((field) => bundle[field] !== undefined);
  if (extra.length > 0) {
    throw badRequest(`Invalid bundle: ${extra.join(' and ')} can only be imported (POST /api/project/import)`, extra.map((field) => ({ field, message: 'is only accepted by import' })));
  }
  return bundle;
}
