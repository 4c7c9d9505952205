// `javascript`: `async function run()` in an isolate of its own, with the handler memory limit and
// the cron time limit (settings handlerMemoryMb, cronTimeoutMs). Console output is kept with the run,
// with `logsTruncated: true` whenever any of it was dropped or cut.
import type { JavascriptAction } from '../../../model/cron-job.ts';
import { checkScript, runScript, ScriptCompileError } from '../../../sandbox/script-runner.ts';
import { CronActionProblem } from '../../../services/cron-jobs.ts';
import type { CronActionType } from './action.ts';

export const javascriptAction: CronActionType<JavascriptAction> = {
  async check(action) {
    try {
      checkScript(action.code);
    } catch (error) {
      if (error instanceof ScriptCompileError) throw new CronActionProblem('action.code', error.message);
      throw error;
    }
  },

  async run(action, { settings }) {
    const result = await runScript(action.code, { memoryMb: settings.handlerMemoryMb, timeoutMs: settings.cronTimeoutMs });
    const output = {
      logs: result.logs,
      ...(result.logsTruncated ? { logsTruncated: true } : {}),
      ...(result.ok ? { result: result.value } : {}),
      ...(result.valueTruncated ? { resultTruncated: true } : {}),
    };
    return { ok: result.ok, error: result.error, output };
  },
};

