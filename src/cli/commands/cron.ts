import type { CronJob, CronRun } from '../client.ts';
import type { CommandModule } from '../context.ts';
import { CliError, EXIT } from '../errors.ts';
import { parsePositiveInt } from '../option-parsers.ts';
import { oneLine, shortDate } from '../output.ts';

/** `dynctl cron list|run NAME|runs NAME`: cron jobs (/api/cron), needs manage_api. */
export const cronCommands: CommandModule = {
  register(program, context) {
    const cron = program.command('cron').description('list cron jobs, run one now, show its runs (needs manage_api)');

    cron
      .command('list')
      .description('list cron jobs with their schedule, last and next run')
      .action(async () => {
        const client = await context.client();
        const jobs = await client.listCronJobs();
        context.out.result(jobs, () =>
          context.out.table(['NAME', 'SCHEDULE', 'TZ', 'ACTION', 'ENABLED', 'LAST RUN', 'STATUS', 'NEXT RUN'], jobs.map(jobRow), 'No cron jobs.'),
        );
      });

    cron
      .command('run')
      .description('run a job now and print the run; exits 1 when the run failed')
      .argument('<name>', 'the job name (or id)')
      .action(async (name: string) => {
        const client = await context.client();
        const run = await client.runCronJob(name);
        context.out.result(run, () => {
          if (run.status === 'ok') context.out.success(`Cron job "${oneLine(run.jobName)}" ran in ${run.durationMs} ms`);
          // The job's error is the job's own text: on one line, colour codes in it shown escaped too.
          else context.out.line(`${context.out.paint('red', '✗')} Cron job "${oneLine(run.jobName)}" failed in ${run.durationMs} ms: ${oneLine(run.error ?? '')}`);
          if (run.output !== null && run.output !== undefined) context.out.line(JSON.stringify(run.output, null, 2));
        });
        if (run.status !== 'ok') throw new CliError(`the run failed: ${oneLine(run.error ?? '')}`, EXIT.failure, { resultPrinted: true });
      });

    cron
      .command('runs')
      .description('the latest runs of a job, newest first')
      .argument('<name>', 'the job name (or id)')
      .option('-n, --limit <n>', 'how many runs to show (the server caps it at maxPageSize)', parsePositiveInt, 20)
      .action(async (name: string, options: { limit: number }) => {
        const client = await context.client();
        const page = await client.cronRuns(name, { limit: options.limit });
        context.out.result(page.items, () =>
          context.out.table(['STARTED', 'TRIGGER', 'STATUS', 'DURATION', 'ERROR'], page.items.map(runRow), 'No runs yet.'),
        );
      });
  },
};

function jobRow(job: CronJob): string[] {
  return [job.name, job.schedule, job.timezone, job.action.type, job.enabled ? 'yes' : 'no', shortDate(job.lastRunAt), job.lastStatus ?? '-', shortDate(job.nextRunAt)];
}

function runRow(run: CronRun): string[] {
  return [shortDate(run.startedAt), run.trigger, run.status, `${run.durationMs} ms`, (run.error ?? '').slice(0, 80)];
}
