// The registry of cron action types: adding one is a file and a line here (and its input schema in
// src/model/cron-job.ts).
import type { CronAction, CronActionType as TypeName } from '../../../model/cron-job.ts';
import type { ActiveSettings } from '../../../services/settings.ts';
import type { ActionContext, ActionOutcome, CronActionType } from './action.ts';
import { endpointAction } from './endpoint.ts';
import { httpAction } from './http.ts';
import { javascriptAction } from './javascript.ts';

const ACTIONS: { [T in TypeName]: CronActionType<Extract<CronAction, { type: T }>> } = {
  javascript: javascriptAction,
  http: httpAction,
  endpoint: endpointAction,
};

function typeOf(action: CronAction): CronActionType<CronAction> {
  return ACTIONS[action.type] as CronActionType<CronAction>;
}

export function checkCronAction(action: CronAction, settings: ActiveSettings): Promise<void> {
  return typeOf(action).check(action, settings);
}

export function runCronAction(action: CronAction, context: ActionContext): Promise<ActionOutcome> {
  return typeOf(action).run(action, context);
}
