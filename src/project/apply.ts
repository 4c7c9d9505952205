import { AppError, badRequest } from '../lib/errors.ts';
import type { Actor } from '../model/actor.ts';
import { NOTHING_TO_KEEP } from '../model/secret-headers.ts';
import type { Bundle } from './bundle.ts';
import { handlerFileProblems, isEmptyBundle } from './bundle-shape.ts';
import { diffBundles, itemsOf, prunes, summarize, type Change, type ChangeAction, type PruneOptions } from './diff.ts';
import { rememberPlaceholders } from './placeholder-memory.ts';
import { exportBundle, type ExportOptions } from './export.ts';
import { keyOf, kindList, kindOf, KINDS, specsOf, type ApplyContext, type Kind, type RawSpec } from './kinds/index.ts';
import { DEFAULT_PLACEHOLDER_POLICY, refusedByPolicy, resolvePlaceholders, type Placeholder, type PlaceholderPolicy } from './placeholders.ts';
import type { Problem } from './problem.ts';
import { validateBundle } from './validate-bundle.ts';
import { allUserGroups, type ProjectServices } from './services.ts';

/**
 * The only writer of desired state. Plan, dry-run and apply share one path: validate the bundle
 * → resolve placeholders → check names against the store → diff against an export of the store
 * → apply each change through the services (so every rule of the API applies) in the diff's
 * order. Every step is generic over the kinds of kinds/index.ts: each descriptor reads, writes
 * and checks its own definitions. Only the last step differs between a plan and an apply.
 *
 * Atomicity: the store has no transaction across collections, so every write is wrapped in
 * `withRestore`: it exports what the write may change (definitions, plus settings when the
 * bundle carries them) before starting and, if any step fails, applies that snapshot back with
 * prune through the same engine, then rethrows the failure. Restored definitions keep their
 * content but an endpoint deleted and recreated this way gets a new id (and callCount 0).
 * Records are never in a snapshot: an import stages them and moves them in one step (import.ts).
 */
export interface ChangeResult extends Change {
  status: 'planned' | 'applied';
  /** Id of the created, updated or deleted item (not for planned changes). */
  id?: string;
}

export interface Plan {
  changes: Change[];
  desired: Bundle;
  /** The store's definitions the plan was made against (stored values, as withRestore snapshots them). */
  current: Bundle;
}

/**
 * Store ids of every kind's definitions (and of user groups), loaded before the first change
 * and kept current as definitions are created and deleted: a kind's writes find the ids of the
 * kinds before it, including ones this apply created.
 */
async function applyContext(services: ProjectServices, actor: Actor): Promise<ApplyContext & { ids: Map<string, Map<string, string>> }> {
  const ids = new Map<string, Map<string, string>>();
  for (const kind of KINDS) ids.set(kind.kind, await kind.ids(services));
  const userGroups = new Map((await allUserGroups(services.groups)).map((g) => [g.name.toLowerCase(), g._id]));
  return {
    services,
    actor,
    ids,
    idOf: (kind, key) => ids.get(kind)?.get(key),
    userGroupId: (name) => userGroups.get(name.toLowerCase()),
  };
}

/** Applies changes in the order given (diffBundles' order). With dryRun, writes nothing. */
export async function applyChanges(changes: readonly Change[], desired: Bundle, services: ProjectServices, options: { dryRun: boolean; actor: Actor }): Promise<ChangeResult[]> {
  if (options.dryRun) return changes.map((change) => ({ ...change, status: 'planned' }));
  if (changes.length === 0) return [];
  const context = await applyContext(services, options.actor);
  const items = new Map(KINDS.map((kind) => [kind.kind, itemsOf(desired, kind)]));
  const results: ChangeResult[] = [];
  for (const change of changes) {
    const kind = kindOf(change.kind);
    const ids = context.ids.get(kind.kind) ?? new Map<string, string>();
    const item = items.get(change.kind)?.get(change.key);
    try {
      const id = await write(context, kind, change.action, ids.get(change.key), item);
      if (change.action === 'delete') ids.delete(change.key);
      else ids.set(change.key, id);
      results.push({ ...change, status: 'applied', id });
    } catch (error) {
      throw withContext(error, `${change.kind} ${change.key}`, `${kind.bundleKey}[${change.key}]`);
    }
  }
  return results;
}

async function write(context: ApplyContext, kind: Kind, action: ChangeAction, id: string | undefined, item: object | undefined): Promise<string> {
  if (action === 'create') {
    if (!item) throw new Error('create without a desired item');
    return kind.create(context, item);
  }
  if (!id) throw badRequest('it is not in the store (it changed since the plan was made)');
  if (action === 'update') {
    if (!item) throw new Error('update without a desired item');
    await kind.update(context, id, item);
  } else {
    await kind.delete(context, id);
  }
  return id;
}

/** `endpoint POST /api/x: Invalid path: …`, details at `endpoints[POST /api/x].path`; client errors keep their status. */
function withContext(error: unknown, context: string, at: string): unknown {
  if (!(error instanceof AppError) || error.status >= 500) return error;
  return new AppError(error.status, `${context}: ${error.message}`, {
    ...(error.details ? { details: error.details.map((d) => ({ field: `${at}.${d.field}`, message: d.message })) } : {}),
  });
}

/** Each kind's look-ups on this server (kinds' `resolve`); any problem is a 400 naming the definition. */
async function resolveForServer(services: ProjectServices, bundle: Bundle): Promise<{ bundle: Bundle; problems: Problem[] }> {
  const problems: Problem[] = [];
  const resolved = { ...bundle } as Record<string, unknown>;
  for (const kind of KINDS) {
    if (!kind.resolve) continue;
    const specs = specsOf(bundle, kind) as never[];
    const result = await kind.resolve(services, specs);
    resolved[kind.bundleKey] = result.specs;
    for (const problem of result.problems) {
      problems.push({ path: `${kind.bundleKey}[${keyOf(kind, specs[problem.index]) ?? problem.index}].${problem.path}`, message: problem.message });
    }
  }
  return { bundle: resolved as Bundle, problems };
}

/**
 * The bundle checked (validate-bundle.ts, as for project files), placeholders resolved (env and
 * files read now), schemas in the API's array form made the stored map form, names checked against the store, then the diff. Any problem is a 400 listing
 * all of them, before anything is written.
 */
export async function planBundle(services: ProjectServices, bundle: Bundle, options: PruneOptions): Promise<Plan> {
  const current = await exportBundle(services, { storedValues: true });
  // Definitions that are not pruned stay, so a definition may name one the bundle leaves out.
  const kept = new Set<string>();
  for (const kind of KINDS) if (!prunes(options, kind)) for (const spec of specsOf(current, kind)) kept.add(`${kind.kind}:${kind.key(spec)}`);
  throwProblems([...validateBundle(bundle, kept), ...handlerFileProblems(bundle)]);
  // Every problem at once: an unset placeholder does not hide an unknown group in another
  // definition. A definition with an unresolved placeholder is kept as written, so what the
  // server would check in it (its placeholders' text is no real value) is left for next time.
  const placeholders = resolveBundle(bundle, services.placeholderPolicy ?? DEFAULT_PLACEHOLDER_POLICY);
  const server = await resolveForServer(services, placeholders.bundle);
  const within = (path: string) => placeholders.unresolved.some((at) => path === at || path.startsWith(`${at}.`));
  const problems = [...placeholders.problems, ...server.problems.filter((problem) => !within(problem.path))];
  const desired = server.bundle;
  // Names are checked once the definitions are as the store takes them.
  if (problems.length === placeholders.problems.length) problems.push(...(await referenceProblems(services, desired, current, options)).filter((problem) => !within(problem.path)));
  throwProblems(problems);
  return { changes: diffBundles(current, desired, options), desired, current };
}

export interface ApplyResult {
  changes: ChangeResult[];
  summary: Record<ChangeAction, number>;
  applied: boolean;
}

/**
 * POST /api/project/apply and the file sync: definitions only (every kind's lists); dryRun is
 * the plan. Each change is audited by its service for `actor`, and the apply as a whole too
 * (`project_applied`; for the file sync only when something changed).
 */
export async function applyBundle(services: ProjectServices, bundle: Bundle, options: PruneOptions & { dryRun: boolean; actor: Actor }): Promise<ApplyResult> {
  if (options.prune) refuseEmpty(bundle, 'apply with prune');
  return exclusive(services, async () => {
    const plan = await planBundle(services, bundle, options);
    const changes = options.dryRun
      ? await applyChanges(plan.changes, plan.desired, services, { dryRun: true, actor: options.actor })
      : // The plan's export of the store is the snapshot: read under the same exclusive lock, just before.
        await withRestore(services, {}, options.actor, () => applyChanges(plan.changes, plan.desired, services, { dryRun: false, actor: options.actor }), plan.current);
    const summary = summarize(changes);
    if (!options.dryRun) {
      await rememberPlaceholders(services.store, bundle, plan.desired);
      if (options.actor.request || changes.length > 0) {
        await services.audit.change(options.actor, { action: 'project_applied', message: `Project applied${options.prune ? ' with prune' : ''}: ${counts(summary)}`, source: 'project' });
      }
    }
    return { changes, summary, applied: !options.dryRun };
  });
}

// Import (records and settings besides definitions, streamed or whole) is import.ts.

/**
 * One plan-and-write at a time per process: a plan is only current, and a snapshot only a
 * faithful "before", if no other project write runs in between. (Writes through the ordinary
 * API, or on another instance, are not held back.)
 */
const running = new WeakMap<ProjectServices, Promise<unknown>>();

export async function exclusive<T>(services: ProjectServices, work: () => Promise<T>): Promise<T> {
  const before = running.get(services) ?? Promise.resolve();
  const mine = before.catch(() => undefined).then(work);
  running.set(services, mine);
  return mine;
}

/**
 * Runs a write; on failure puts back what it may have changed (see the top of this file) and
 * rethrows. If even that fails, the state is mixed: that is logged and reported as a 500.
 */
export async function withRestore<T>(services: ProjectServices, scope: Pick<ExportOptions, 'settings'>, actor: Actor, work: () => Promise<T>, taken?: Bundle): Promise<T> {
  const snapshot = taken ?? (await exportBundle(services, { ...scope, storedValues: true }));
  try {
    return await work();
  } catch (error) {
    try {
      await restore(services, snapshot, scope, actor);
    } catch (restoreError) {
      services.logger.error('project: restoring the state before a failed apply failed', { error: restoreError, cause: error });
      throw new AppError(500, 'Applying the bundle failed and the previous state could not be fully restored');
    }
    throw error;
  }
}

/** The restore's writes are audited too (for the same actor): they are changes like any other. */
async function restore(services: ProjectServices, snapshot: Bundle, scope: Pick<ExportOptions, 'settings'>, actor: Actor): Promise<void> {
  if (scope.settings && snapshot.settings) await services.settings.update(snapshot.settings, actor);
  const changes = diffBundles(await exportBundle(services, { storedValues: true }), snapshot, { prune: true });
  await applyChanges(changes, snapshot, services, { dryRun: false, actor });
}

export function counts(summary: Record<ChangeAction, number>): string {
  return `${summary.create} created, ${summary.update} updated, ${summary.delete} deleted`;
}

export function refuseEmpty(bundle: Bundle, what: string): void {
  if (isEmptyBundle(bundle)) {
    const none = kindList((kind) => `no ${kind.bundleKey}`);
    throw badRequest(`Refusing to ${what} with a bundle that has ${none}: it would delete every definition`, [{ field: 'bundle', message: `has ${none}` }]);
  }
}

export function throwProblems(problems: readonly Problem[]): void {
  if (problems.length > 0) throw invalidBundle(problems);
}

function invalidBundle(problems: readonly Problem[]): AppError {
  const first = problems[0];
  return badRequest(`Invalid bundle: ${first ? `${first.path} ${first.message}` : 'it has problems'}`, problems.map((p) => ({ field: p.path, message: p.message })));
}

/**
 * Names that must resolve before anything is written: each kind's store rules (an endpoint's
 * user groups must exist in the store, which a bundle does not define; system endpoints cannot
 * be defined), each `(secret)` must have a stored credential to keep, and each reference to
 * another kind must name a definition in the bundle or — unless that kind is pruned, which would
 * delete it — in the store.
 */
async function referenceProblems(services: ProjectServices, desired: Bundle, current: Bundle, options: PruneOptions): Promise<Problem[]> {
  const known = new Set<string>();
  for (const kind of KINDS) {
    for (const bundle of prunes(options, kind) ? [desired] : [desired, current]) for (const spec of itemsOf(bundle, kind).keys()) known.add(`${kind.kind}:${spec}`);
  }
  const problems: Problem[] = [];
  for (const kind of KINDS) {
    const rules = await kind.storeRules?.(services);
    const stored = kind.secrets ? itemsOf(current, kind) : null;
    for (const spec of specsOf(desired, kind).map((raw) => kind.normalize(raw))) {
      const at = `${kind.bundleKey}[${kind.key(spec)}]`;
      for (const problem of rules?.(spec) ?? []) problems.push({ path: problem.path === '' ? at : `${at}.${problem.path}`, message: problem.message });
      // `(secret)` keeps a stored credential: a definition with none stored to keep is refused now, not halfway through the apply.
      if (kind.secrets && stored) {
        const existing = stored.get(kind.key(spec));
        for (const path of kind.secrets.unkept(existing ? kind.secrets.keep(spec, existing) : spec)) problems.push({ path: `${at}.${path}`, message: NOTHING_TO_KEEP });
      }
      for (const reference of kind.references?.(spec as RawSpec) ?? []) {
        if (known.has(`${reference.kind}:${reference.key}`)) continue;
        problems.push({ path: `${at}.${reference.path}`, message: `names the unknown ${kindOf(reference.kind).label} "${reference.name}"${prunes(options, kindOf(reference.kind)) ? ' (not in the bundle)' : ''}` });
      }
    }
  }
  return problems;
}

/**
 * `${env:NAME}` and `${file:/path}` resolved in definitions and settings (records are restored
 * as they are). Each unresolvable placeholder is a problem named by its definition's key as
 * other bundle problems are (`endpoints[GET /api/x].description`); its value is left as written.
 */
function resolveBundle(bundle: Bundle, policy: PlaceholderPolicy): { bundle: Bundle; problems: Problem[]; unresolved: string[] } {
  const options = { allow: (placeholder: Placeholder) => refusedByPolicy(placeholder, policy) };
  const problems: Problem[] = [];
  const unresolved: string[] = [];
  const resolve = <T>(value: T, at: string): T => {
    const resolved = resolvePlaceholders(value, { ...options, at });
    if (resolved.ok) return resolved.value;
    problems.push(...resolved.problems);
    unresolved.push(at);
    return value;
  };
  const out = { ...bundle } as Record<string, unknown>;
  for (const kind of KINDS) {
    if (out[kind.bundleKey] === undefined) continue;
    out[kind.bundleKey] = specsOf(bundle, kind).map((spec, index) => resolve(spec, `${kind.bundleKey}[${keyOf(kind, spec) ?? index}]`));
  }
  if (bundle.settings !== undefined) out.settings = resolve(bundle.settings, 'settings');
  return { bundle: out as unknown as Bundle, problems, unresolved };
}
