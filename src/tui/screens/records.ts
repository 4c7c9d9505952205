// The records of an endpoint's path, paged (the raw collection browser's `endpointdatas`,
// searched by resource path; `manage_users`): n/p page, Enter shows one as JSON (scrolled with
// ↑↓/PgUp/PgDn/g/G when taller than the screen), x deletes it after a y/N question.
import React from 'react';
import { Box, Text } from 'ink';
import type { StoredRecord } from '../../cli/client.ts';
import { Busy } from '../components/busy.ts';
import { Confirm } from '../components/confirm.ts';
import { ErrorView } from '../components/error-view.ts';
import { ListView } from '../components/list-view.ts';
import { TextView } from '../components/text-view.ts';
import { jsonLines, row, safe, when } from '../format.ts';
import { useKeys } from '../keys.ts';
import { useSession } from '../session.ts';
import { tone } from '../theme.ts';
import { useAction, useRequest } from '../use-request.ts';

const h = React.createElement;

export function RecordsView({ path, onBack }: { path: string; onBack(): void }): React.ReactElement {
  const session = useSession();
  const { rows, columns } = session.size;
  const limit = Math.max(5, rows - 4);
  const [page, setPage] = React.useState(1);
  const [open, setOpen] = React.useState<StoredRecord | null>(null);
  const [cursor, setCursor] = React.useState<StoredRecord | undefined>(undefined);
  const [confirming, setConfirming] = React.useState<StoredRecord | null>(null);
  // A path with parameters (/api/orders/:id/items) is searched by its fixed part before the first one.
  const search = path.split('/:')[0] || path;
  const records = useRequest((signal) => session.client.records(search, { page, limit }, { signal }), [search, page, limit]);
  const remove = useAction<unknown>(() => {
    setOpen(null);
    records.reload();
  });
  const pages = records.data ? Math.max(1, Math.ceil(records.data.total / limit)) : 1;
  const canDelete = session.can('manage_users');

  useKeys(
    (input, key) => {
      // "✓ deleted" answers the last key; the next one is about something else.
      if (remove.result !== undefined && !remove.busy) remove.clear();
      if (key.escape) {
        if (records.loading) records.cancel();
        else if (remove.busy) remove.cancel();
        else if (open) setOpen(null);
        else onBack();
      } else if (input === 'n' && page < pages) setPage(page + 1);
      else if (input === 'p' && page > 1) setPage(page - 1);
      else if (input === 'r') records.reload();
      else if (input === 'x' && canDelete && (open ?? cursor)) setConfirming(open ?? cursor ?? null);
    },
    { isActive: !session.overlay && confirming === null },
  );

  const header = h(Text, { bold: true, wrap: 'truncate' }, `Records of ${safe(path)}`, h(Text, { dimColor: true }, records.data ? `  page ${page}/${pages}, ${records.data.total} in all` : ''));
  const footer = h(Text, { dimColor: true, wrap: 'truncate' }, `${open ? '' : 'Enter view  n/p page  '}${canDelete ? 'x delete  ' : ''}r reload  Esc back`);
  const status = [
    confirming ? h(Confirm, { key: 'c', question: `delete record ${confirming._id}?`, onAnswer: (yes: boolean) => (setConfirming(null), yes ? remove.run((signal) => session.client.deleteRecord(confirming._id, { signal })) : undefined) }) : null,
    remove.busy ? h(Busy, { key: 'b', label: 'deleting' }) : null,
    remove.error ? h(ErrorView, { key: 'e', error: remove.error }) : null,
    remove.result !== undefined && !remove.error ? h(Text, { key: 'ok', color: tone('green') }, '✓ deleted') : null,
  ];
  if (open) {
    const room = rows - 3 - status.filter(Boolean).length;
    return h(Box, { flexDirection: 'column' }, header, h(TextView, { key: open._id, lines: jsonLines(open), height: room, active: !session.overlay && confirming === null, wrapAt: columns - 1 }), ...status, footer);
  }
  const layout = (id: string, created: string, data: string): string => row([{ text: id, width: 24 }, { text: created, width: 19 }, { text: data, width: 'flex' }], columns - 1);
  return h(
    Box,
    { flexDirection: 'column' },
    header,
    records.loading ? h(Busy, { label: 'loading records' }) : null,
    records.error ? h(ErrorView, { error: records.error }) : null,
    records.data
      ? h(ListView<StoredRecord>, {
          items: records.data.items,
          height: rows - 3,
          active: !session.overlay && confirming === null,
          header: ` ${layout('ID', 'CREATED (UTC)', 'DATA')}`,
          render: (record) => layout(record._id, when(record.createdAt), JSON.stringify(record.data)),
          onOpen: (record) => setOpen(record),
          onCursor: (record) => setCursor(record),
          empty: 'no records',
        })
      : null,
    ...status,
    footer,
  );
}
