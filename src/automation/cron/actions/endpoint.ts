// `endpoint`: calls a dynamic path through the engine, as the job's runAs user (or anonymously).
// Network rules are skipped (the call is internal); the endpoint's access type is enforced.
import type { EndpointAction } from '../../../model/cron-job.ts';
import { keptBody, type CronActionType } from './action.ts';

export const endpointAction: CronActionType<EndpointAction> = {
  async check() {
    // The path need not be served yet when the job is saved: a missing endpoint fails the run.
  },

  async run(action, { invoke, principal }) {
    let caller;
    try {
      caller = await principal();
    } catch (error) {
      return { ok: false, error: error instanceof Error ? error.message : String(error), output: null };
    }
    const response = await invoke(
      { method: action.method, path: action.path },
      { body: action.body, query: action.query ?? {}, headers: {}, skipNetworkRules: true, source: 'cron' },
      caller,
    );
    const ok = response.status < 400;
    const failure = (response.body as { error?: unknown } | null)?.error;
    return {
      ok,
      error: ok ? null : `${action.method} ${action.path} answered ${response.status}${failure ? `: ${String(failure)}` : ''}`,
      output: { status: response.status, ...keptBody(response.body) },
    };
  },
};
