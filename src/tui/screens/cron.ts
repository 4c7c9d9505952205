// Cron jobs: each job's schedule, next run and last status; Enter opens its run history
// (GET /api/cron/:id/runs, newest first); `x` runs it now (POST /api/cron/:id/run) and shows
// the run — for logins with `manage_api` only.
import React from 'react';
import { Box, Text } from 'ink';
import type { CronJob, CronRun } from '../../cli/client.ts';
import { Busy } from '../components/busy.ts';
import { ErrorView } from '../components/error-view.ts';
import { ListView } from '../components/list-view.ts';
import { clip, row, safe, when } from '../format.ts';
import { useKeys } from '../keys.ts';
import { useSession } from '../session.ts';
import { tone } from '../theme.ts';
import { useAction, useRequest } from '../use-request.ts';

const h = React.createElement;

export function CronScreen(): React.ReactElement {
  const [open, setOpen] = React.useState<CronJob | null>(null);
  return open ? h(CronRuns, { job: open, onBack: () => setOpen(null) }) : h(CronList, { onOpen: setOpen });
}

const statusColor = (status: string | null | undefined): string | undefined => (status === 'failed' ? tone('red') : status === 'ok' ? tone('green') : undefined);

function CronList({ onOpen }: { onOpen(job: CronJob): void }): React.ReactElement {
  const session = useSession();
  const { rows, columns } = session.size;
  const jobs = useRequest((signal) => session.client.listCronJobs({ signal }), []);
  const [cursor, setCursor] = React.useState<CronJob | undefined>(undefined);
  const canRun = session.can('manage_api');
  const runNow = useAction<CronRun>(() => jobs.reload());
  useKeys(
    (input, key) => {
      if (key.escape) {
        if (jobs.loading) jobs.cancel();
        else if (runNow.busy) runNow.cancel();
      } else if (input === 'r') jobs.reload();
      else if (input === 'x' && canRun && cursor) runNow.run((signal) => session.client.runCronJob(cursor._id, { signal }));
    },
    { isActive: !session.overlay },
  );
  const layout = (name: string, schedule: string, next: string, last: string, status: string): string =>
    row([{ text: name, width: 'flex' }, { text: schedule, width: 14 }, { text: next, width: 19 }, { text: last, width: 19 }, { text: status, width: 6 }], columns - 1);
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { bold: true, wrap: 'truncate' }, 'Cron jobs', h(Text, { dimColor: true }, `  Enter history${canRun ? '  x run now' : ''}  r reload   (times UTC)`)),
    jobs.loading ? h(Busy, { label: 'loading cron jobs' }) : null,
    jobs.error ? h(ErrorView, { error: jobs.error }) : null,
    jobs.data
      ? h(ListView<CronJob>, {
          items: jobs.data,
          height: rows - 4,
          active: !session.overlay,
          header: ` ${layout('NAME', 'SCHEDULE', 'NEXT RUN', 'LAST RUN', 'LAST')}`,
          render: (job) => layout(job.name, job.schedule, job.enabled ? when(job.nextRunAt) : 'disabled', when(job.lastRunAt), job.lastStatus ?? '—'),
          color: (job) => (job.lastStatus === 'failed' ? tone('red') : job.enabled ? undefined : tone('gray')),
          onOpen,
          onCursor: setCursor,
          empty: 'no cron jobs (define them with POST /api/cron or in project/cron/)',
        })
      : null,
    runNow.busy ? h(Busy, { label: `running ${cursor?.name ?? 'the job'}` }) : null,
    runNow.error ? h(ErrorView, { error: runNow.error }) : null,
    runNow.result ? h(RunLine, { run: runNow.result, width: columns }) : null,
  );
}

function RunLine({ run, width }: { run: CronRun; width: number }): React.ReactElement {
  return h(
    Text,
    { wrap: 'truncate' },
    h(Text, { color: statusColor(run.status) }, run.status === 'failed' ? '✗ ' : '✓ '),
    clip(`${run.jobName}: ${run.status} in ${run.durationMs} ms${run.error ? ` — ${run.error}` : ''}`, width - 3),
  );
}

function CronRuns({ job, onBack }: { job: CronJob; onBack(): void }): React.ReactElement {
  const session = useSession();
  const { rows, columns } = session.size;
  const limit = Math.max(5, rows - 5);
  const [page, setPage] = React.useState(1);
  const runs = useRequest((signal) => session.client.cronRuns(job._id, { page, limit }, { signal }), [job._id, page, limit]);
  const pages = runs.data ? Math.max(1, Math.ceil(runs.data.total / limit)) : 1;
  useKeys(
    (input, key) => {
      if (key.escape) {
        if (runs.loading) runs.cancel();
        else onBack();
      } else if (input === 'n' && page < pages) setPage(page + 1);
      else if (input === 'p' && page > 1) setPage(page - 1);
      else if (input === 'r') runs.reload();
    },
    { isActive: !session.overlay },
  );
  const layout = (started: string, trigger: string, status: string, ms: string, error: string): string =>
    row([{ text: started, width: 19 }, { text: trigger, width: 9 }, { text: status, width: 6 }, { text: ms, width: 8 }, { text: error, width: 'flex' }], columns - 1);
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { bold: true, wrap: 'truncate' }, `Runs of ${safe(job.name)}`, h(Text, { dimColor: true }, `  ${safe(`${job.schedule} (${job.timezone})`)}${runs.data ? `  page ${page}/${pages}, ${runs.data.total} runs` : ''}`)),
    runs.loading ? h(Busy, { label: 'loading runs' }) : null,
    runs.error ? h(ErrorView, { error: runs.error }) : null,
    runs.data
      ? h(ListView<CronRun>, {
          items: runs.data.items,
          height: rows - 3,
          active: !session.overlay,
          header: ` ${layout('STARTED (UTC)', 'TRIGGER', 'STATUS', 'MS', 'ERROR / OUTPUT')}`,
          render: (run) => layout(when(run.startedAt), String(run.trigger), String(run.status), String(run.durationMs), run.error ?? (run.output === undefined ? '' : JSON.stringify(run.output))),
          color: (run) => statusColor(run.status),
          empty: 'no runs yet',
        })
      : null,
    h(Text, { dimColor: true }, 'n/p page  r reload  Esc back'),
  );
}
