// Logs: the audit log as a live tail (like `tail -f`): polled every 2 s, newest at the bottom,
// new entries appended as they arrive. `/` filters by action (api_call, login, …), `space`
// pauses and resumes.
import React from 'react';
import { Box, Text } from 'ink';
import type { LogEntry } from '../../cli/client.ts';
import { Busy } from '../components/busy.ts';
import { ErrorView } from '../components/error-view.ts';
import { SearchLine } from '../components/search-line.ts';
import { safe, when } from '../format.ts';
import { useKeys } from '../keys.ts';
import { useSession } from '../session.ts';
import { statusTone, tone } from '../theme.ts';
import { useRequest } from '../use-request.ts';

const h = React.createElement;

export const TAIL_POLL_MS = 2_000;
const KEEP = 500;

export function LogsScreen(): React.ReactElement {
  const session = useSession();
  const { rows } = session.size;
  const [action, setAction] = React.useState('');
  const [editing, setEditing] = React.useState(false);
  const [paused, setPaused] = React.useState(false);
  const [entries, setEntries] = React.useState<LogEntry[]>([]);
  const filter = action.trim();
  // The filter applies once typed (Enter), not at every keystroke.
  const [applied, setApplied] = React.useState('');
  const tail = useRequest((signal) => session.client.logs({ page: 1, limit: 50, action: applied || undefined }, { signal }), [applied, paused], { pollMs: paused ? undefined : TAIL_POLL_MS });

  React.useEffect(() => setEntries([]), [applied]);
  React.useEffect(() => {
    if (!tail.data) return;
    setEntries((previous) => {
      // By id, not time: buffered entries (api_call) may arrive with an earlier timestamp.
      const seen = new Set(previous.map((entry) => entry._id));
      const fresh = tail.data!.items.filter((entry) => !seen.has(entry._id)).reverse();
      return fresh.length === 0 ? previous : [...previous, ...fresh].slice(-KEEP);
    });
  }, [tail.data]);

  useKeys(
    (input, key) => {
      if (key.escape && tail.loading) tail.cancel();
      else if (key.escape && applied) {
        setAction('');
        setApplied('');
      }
      else if (input === '/') setEditing(true);
      else if (input === ' ') setPaused(!paused);
    },
    { isActive: !session.overlay && !editing },
  );

  const room = Math.max(1, rows - 3 - (editing || applied ? 1 : 0));
  const visible = entries.slice(-room);
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { bold: true }, 'Logs', h(Text, { dimColor: true }, `  ${paused ? 'PAUSED (space resumes)' : `live, every ${TAIL_POLL_MS / 1000} s (space pauses)`}   / filter by action`)),
    h(SearchLine, { label: 'action:', value: action, editing, onChange: setAction, onDone: () => (setEditing(false), setApplied(filter)) }),
    tail.loading && entries.length === 0 ? h(Busy, { label: 'loading the log' }) : null,
    tail.error ? h(ErrorView, { error: tail.error }) : null,
    ...visible.map((entry) => h(LogLine, { key: entry._id, entry })),
    entries.length === 0 && tail.data ? h(Text, { dimColor: true }, applied ? `no "${safe(applied)}" entries yet` : 'the log is empty') : null,
  );
}

function LogLine({ entry }: { entry: LogEntry }): React.ReactElement {
  const failed = entry.action === 'error' || entry.action === 'login_failed' || (entry.statusCode ?? 0) >= 400;
  const request = entry.method && entry.path ? `${entry.method} ${entry.path}` : '';
  return h(
    Text,
    { wrap: 'truncate' },
    h(Text, { dimColor: true }, when(entry.createdAt).slice(11)),
    ' ',
    h(Text, { color: failed ? tone('red') : tone('cyan') }, safe(entry.action).padEnd(18)),
    ' ',
    request ? `${safe(request)} ` : '',
    entry.statusCode ? h(Text, { color: statusTone(entry.statusCode) }, `${entry.statusCode} `) : null,
    h(Text, { dimColor: Boolean(request) }, safe(entry.message ?? '')),
  );
}
