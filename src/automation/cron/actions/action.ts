// The contract of a cron action type: a save-time check and a run. One file per type; the table
// in index.ts is the registry.
import type { CronAction } from '../../../model/cron-job.ts';
import type { Principal } from '../../../model/principal.ts';
import type { ActiveSettings } from '../../../services/settings.ts';
import type { Invoke } from '../invoke.ts';

export interface ActionContext {
  settings: ActiveSettings;
  invoke: Invoke;
  /** Whom an endpoint action calls as (resolved per run: the runAs user's permissions now). */
  principal(): Promise<Principal | undefined>;
}

export interface ActionOutcome {
  ok: boolean;
  error: string | null;
  /** Kept with the run record: bounded (console output, a status and a truncated body). */
  output: unknown;
}

export interface CronActionType<A extends CronAction> {
  /** Throws CronActionProblem naming the field it refuses. */
  check(action: A, settings: ActiveSettings): Promise<void>;
  run(action: A, context: ActionContext): Promise<ActionOutcome>;
}

/** Response bodies kept with a run are cut to this many characters. */
export const MAX_KEPT_BODY = 4096;

export function keptBody(body: unknown): { body: string; truncated: boolean } {
  const text = typeof body === 'string' ? body : (JSON.stringify(body) ?? '');
  return text.length > MAX_KEPT_BODY ? { body: text.slice(0, MAX_KEPT_BODY), truncated: true } : { body: text, truncated: false };
}
