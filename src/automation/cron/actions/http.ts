// `http`: a request to any URL the outbound policy allows, checked again at connect time; a 2xx or
// 3xx answer is a success. The status and a truncated body are kept with the run. Hop-by-hop and
// framing headers (`Host`, `Transfer-Encoding`, …) are refused as on a webhook (FRAMING_HEADERS):
// on save, and at run time for a job saved before that rule.
import type { HttpAction } from '../../../model/cron-job.ts';
import { FRAMING_HEADERS } from '../../../model/webhook.ts';
import { CronActionProblem } from '../../../services/cron-jobs.ts';
import { outboundPolicyFor, OutboundRefusedError } from '../../outbound-policy.ts';
import { MAX_KEPT_BODY, type CronActionType } from './action.ts';

const DEFAULT_TIMEOUT_MS = 10_000;

export const httpAction: CronActionType<HttpAction> = {
  async check(action, settings) {
    const framing = framingHeaderOf(action);
    if (framing !== undefined) throw new CronActionProblem(`action.headers.${framing}`, FRAMING_PROBLEM);
    try {
      await outboundPolicyFor(settings.outboundAllowList).checkUrl(action.url);
    } catch (error) {
      if (error instanceof OutboundRefusedError) throw new CronActionProblem('action.url', error.message);
      throw error;
    }
  },

  async run(action, { settings }) {
    const framing = framingHeaderOf(action);
    if (framing !== undefined) return { ok: false, error: `action.headers.${framing}: ${FRAMING_PROBLEM}`, output: null };
    const headers: Record<string, string> = { 'user-agent': 'dyn-cron', ...action.headers };
    let body: string | undefined;
    if (action.body !== undefined && action.method !== 'GET' && action.method !== 'HEAD') {
      body = typeof action.body === 'string' ? action.body : JSON.stringify(action.body);
      if (typeof action.body !== 'string' && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    }
    try {
      const response = await outboundPolicyFor(settings.outboundAllowList).request({
        url: action.url,
        method: action.method,
        headers,
        ...(body !== undefined ? { body } : {}),
        timeoutMs: action.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        maxBodyBytes: MAX_KEPT_BODY,
      });
      const output = { status: response.status, body: response.body, ...(response.truncated ? { truncated: true } : {}) };
      const ok = response.status < 400;
      return { ok, error: ok ? null : `${action.method} ${shownUrl(action.url)} answered ${response.status}`, output };
    } catch (error) {
      return { ok: false, error: error instanceof Error ? error.message : String(error), output: null };
    }
  },
};

/**
 * The URL as a run's error shows it (in the job's runs and the audit log, which `view_logs` may
 * read without seeing the job): its query may carry a secret (`?apikey=…`), so it is left out, as
 * a webhook's errors leave it out.
 */
function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}${parsed.search ? '?…' : ''}`;
  } catch {
    return 'the URL';
  }
}

const FRAMING_PROBLEM = 'hop-by-hop and framing headers cannot be set (the request sets them itself)';

/** The first header the action may not set, by the name it was given. */
function framingHeaderOf(action: HttpAction): string | undefined {
  return Object.keys(action.headers ?? {}).find((name) => FRAMING_HEADERS.has(name.toLowerCase()));
}
