// The `cronJob` kind: cron jobs, one file each under cron/, keyed by name (letter case ignored,
// as the store does). A `javascript` action may keep its code in a .js file beside the YAML
// (`action.file`, like an endpoint's `handler.file`). Run history and outcomes are the store's
// alone: never exported, never compared.
//
// runAs: through the API (`POST /api/project/apply`, `dynctl apply`) the caller must hold at least
// the runAs user's permissions, as for `POST /api/cron`, and is recorded as who saved the job. The
// file sync acts for whoever administers the server (they control the directory): it applies
// runAs as written, audited with source `project-sync` (services/cron-jobs.ts, CronActor).
//
// An HTTP action's credential headers (`Authorization`) leave the store as their placeholder or
// `(secret)`, which keeps the stored value (`secrets`, model/secret-headers.ts).
import type { Actor } from '../../model/actor.ts';
import { actionWithStoredSecrets, isTimezone, maskedAction, maskedActionHeaders, scheduleProblem, TIMEZONE_PROBLEM, type CronAction, type CronJobDoc } from '../../model/cron-job.ts';
import { checkScript, ScriptCompileError } from '../../sandbox/script-runner.ts';
import type { CronActor } from '../../services/cron-jobs.ts';
import { compareText } from '../normalize.ts';
import { isWritten } from './checks.ts';
import { isPlainObject, secretsIn, slugOf, type ProjectKind } from './types.ts';

/** As written: the javascript action's code inline or, in files only, in a .js file. */
export type CronActionSpec = CronAction | { type: 'javascript'; file: string };

export interface CronJobSpec {
  name: string;
  description?: string;
  schedule: string;
  timezone?: string;
  enabled?: boolean;
  runAs?: string | null;
  action: CronActionSpec;
}

/** Every default filled in, as the service stores it. */
export interface NormalCronJob {
  name: string;
  description: string;
  schedule: string;
  timezone: string;
  enabled: boolean;
  runAs: string | null;
  action: CronAction;
}

/** The natural key: `Nightly` and `nightly` are one job. */
export const cronJobKey = (spec: Pick<CronJobSpec, 'name'>): string => spec.name.toLowerCase();

const DEFAULTS = { description: '', timezone: 'UTC', enabled: true, runAs: null } as const;

/** The service collapses the whitespace between a schedule's fields. */
const scheduleOf = (schedule: string): string => schedule.trim().split(/\s+/).join(' ');

export function normalizeCronJob(spec: CronJobSpec): NormalCronJob {
  return {
    name: spec.name,
    description: spec.description ?? DEFAULTS.description,
    schedule: scheduleOf(spec.schedule),
    timezone: spec.timezone ?? DEFAULTS.timezone,
    enabled: spec.enabled ?? DEFAULTS.enabled,
    runAs: spec.runAs?.trim() || DEFAULTS.runAs,
    // A loaded file carries the code (the loader read action.file into action.code).
    action: spec.action as CronAction,
  };
}

export function compactCronJob(spec: NormalCronJob): CronJobSpec {
  const out: Record<string, unknown> = { ...spec };
  for (const [field, value] of Object.entries(DEFAULTS)) if (out[field] === value) delete out[field];
  return out as unknown as CronJobSpec;
}

/** The service's actor: the file sync (no principal) applies runAs as written. */
const cronActor = (actor: Actor): CronActor => ({ principal: actor.principal, ...(actor.request ? { request: actor.request } : {}), ...(actor.source ? { source: actor.source } : {}) });

export const cronJobKind: ProjectKind<CronJobSpec, NormalCronJob, 'cronJob', 'cronJobs'> = {
  kind: 'cronJob',
  label: 'cron job',
  bundleKey: 'cronJobs',
  dir: 'cron',
  schemaFile: 'cron-job.schema.json',
  keyFields: ['name'],
  codeFile: { field: 'action', suffix: '.js' },
  key: (spec) => cronJobKey(spec),
  fileName: (spec) => `${slugOf(spec.name, 'job')}.yaml`,
  // The service's own rules, in its words (the outbound policy of an http action needs the settings: apply checks it).
  check(spec, report) {
    if (isWritten(spec.schedule)) {
      const problem = scheduleProblem(scheduleOf(spec.schedule));
      if (problem) report('schedule', `is not a valid cron expression: ${problem}`);
    }
    if (isWritten(spec.timezone) && !isTimezone(spec.timezone)) report('timezone', TIMEZONE_PROBLEM);
    const action = spec.action;
    if (!isPlainObject(action) || action.type !== 'javascript') return;
    if (action.code === undefined && action.file === undefined) report('action', 'needs code (inline) or file (a .js file beside the YAML)');
    if (isWritten(action.code) && action.code !== '') {
      try {
        checkScript(action.code);
      } catch (error) {
        if (!(error instanceof ScriptCompileError)) throw error;
        // `The code does not compile: … [job.js:3:1]` → `does not compile: …`, at line 3 of the code.
        const line = /\[job\.js:(\d+):\d+\]$/.exec(error.message)?.[1];
        report('action.code', error.message.replace(/^The code /, ''), line === undefined ? {} : { codeLine: Number(line) });
      }
    }
  },

  normalize: normalizeCronJob,
  compact: compactCronJob,
  fields: [{ name: 'name' }, { name: 'description' }, { name: 'schedule' }, { name: 'timezone' }, { name: 'enabled' }, { name: 'runAs' }, { name: 'action' }],
  secrets: secretsIn<NormalCronJob, 'action'>('action', maskedAction, actionWithStoredSecrets, maskedActionHeaders),

  async read(services) {
    const jobs = (await services.cronJobs.all()).map(cronJobSpec);
    return jobs.sort((a, b) => compareText(cronJobKey(a), cronJobKey(b)) || compareText(a.name, b.name));
  },
  ids: async (services) => new Map((await services.cronJobs.all()).map((job) => [cronJobKey(job), job._id])),
  create: async ({ services, actor }, spec) => (await services.cronJobs.create(spec, cronActor(actor)))._id,
  update: async ({ services, actor }, id, spec) => void (await services.cronJobs.update(id, spec, cronActor(actor))),
  // The run history goes with the job, as with DELETE /api/cron/:id.
  async delete({ services, actor }, id) {
    const deleted = await services.cronJobs.delete(id, cronActor(actor));
    await services.cronRuns.deleteOfJob(deleted._id);
  },
};

function cronJobSpec(doc: CronJobDoc): NormalCronJob {
  return normalizeCronJob({
    name: doc.name,
    description: doc.description,
    schedule: doc.schedule,
    timezone: doc.timezone,
    enabled: doc.enabled,
    runAs: doc.runAs,
    action: doc.action,
  });
}
