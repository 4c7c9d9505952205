// Logs: the audit log as a live tail (like `tail -f`): polled every 2 s, newest at the bottom,
// new entries appended as they arrive. `/` filters by action (api_call, login, …), `space`
// pauses and resumes; paused, ↑↓ pick an entry and Enter shows it whole (a long message scrolls).
import React from 'react';
import { Box, Text } from 'ink';
import type { LogEntry } from '../../cli/client.ts';
import { Busy } from '../components/busy.ts';
import { ErrorView } from '../components/error-view.ts';
import { SearchLine } from '../components/search-line.ts';
import { TextView } from '../components/text-view.ts';
import { jsonLines, safe, when } from '../format.ts';
import { useKeys } from '../keys.ts';
import { useSession } from '../session.ts';
import { statusTone, tone } from '../theme.ts';
import { useRequest } from '../use-request.ts';

const h = React.createElement;

export const TAIL_POLL_MS = 2_000;
const KEEP = 500;

export function LogsScreen(): React.ReactElement {
  const session = useSession();
  const { rows, columns } = session.size;
  const [action, setAction] = React.useState('');
  const [editing, setEditing] = React.useState(false);
  const [paused, setPaused] = React.useState(false);
  const [entries, setEntries] = React.useState<LogEntry[]>([]);
  const [cursor, setCursor] = React.useState<number | null>(null);
  const [open, setOpen] = React.useState<LogEntry | null>(null);
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
      if (open) {
        if (key.escape) setOpen(null);
        return;
      }
      if (key.escape && tail.loading) tail.cancel();
      else if (key.escape && applied) {
        setAction('');
        setApplied('');
      }
      else if (input === '/') setEditing(true);
      else if (input === ' ') {
        // Paused, the tail holds still and a cursor picks an entry to open (a long message).
        setCursor(paused ? null : Math.max(0, entries.length - 1));
        setPaused(!paused);
      } else if (cursor !== null && (key.downArrow || input === 'j')) setCursor(Math.min(entries.length - 1, cursor + 1));
      else if (cursor !== null && (key.upArrow || input === 'k')) setCursor(Math.max(0, cursor - 1));
      else if (cursor !== null && key.return && entries[cursor]) setOpen(entries[cursor]);
    },
    { isActive: !session.overlay && !editing },
  );

  if (open) {
    return h(
      Box,
      { flexDirection: 'column' },
      h(Text, { bold: true, wrap: 'truncate' }, 'Log entry', h(Text, { dimColor: true }, `  ${when(open.createdAt)} UTC   Esc back`)),
      h(TextView, { lines: jsonLines(open), height: rows - 1, active: !session.overlay, wrapAt: columns - 1 }),
    );
  }
  const room = Math.max(1, rows - 3 - (editing || applied ? 1 : 0));
  const start = cursor === null ? Math.max(0, entries.length - room) : Math.max(0, Math.min(cursor - Math.floor(room / 2), entries.length - room));
  const visible = entries.slice(start, start + room);
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { bold: true, wrap: 'truncate' }, 'Logs', h(Text, { dimColor: true }, `  ${paused ? 'PAUSED (space resumes)  ↑↓ move  Enter open' : `live, every ${TAIL_POLL_MS / 1000} s (space pauses)`}   / filter by action`)),
    h(SearchLine, { label: 'action:', value: action, editing, onChange: setAction, onDone: () => (setEditing(false), setApplied(filter)) }),
    tail.loading && entries.length === 0 ? h(Busy, { label: 'loading the log' }) : null,
    tail.error ? h(ErrorView, { error: tail.error }) : null,
    ...visible.map((entry, offset) => h(LogLine, { key: entry._id, entry, selected: cursor === start + offset })),
    entries.length === 0 && tail.data ? h(Text, { dimColor: true }, applied ? `no "${safe(applied)}" entries yet` : 'the log is empty') : null,
  );
}

function LogLine({ entry, selected }: { entry: LogEntry; selected: boolean }): React.ReactElement {
  const failed = entry.action === 'error' || entry.action === 'login_failed' || (entry.statusCode ?? 0) >= 400;
  const request = entry.method && entry.path ? `${entry.method} ${entry.path}` : '';
  return h(
    Text,
    { wrap: 'truncate', inverse: selected },
    selected ? '›' : '',
    h(Text, { dimColor: true }, when(entry.createdAt).slice(11)),
    ' ',
    h(Text, { color: failed ? tone('red') : tone('cyan') }, safe(entry.action).padEnd(18)),
    ' ',
    request ? `${safe(request)} ` : '',
    entry.statusCode ? h(Text, { color: statusTone(entry.statusCode) }, `${entry.statusCode} `) : null,
    h(Text, { dimColor: Boolean(request) }, safe(entry.message ?? '')),
  );
}
