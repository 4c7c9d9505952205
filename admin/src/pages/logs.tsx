// The audit log: action filter, search, date range, paging; each entry expands to all its fields.
import { useState } from 'preact/hooks';
import { setQuery, useRoute } from '../router.ts';
import { EmptyRow, ErrorBox, Json, Page, Pager, SearchBox, fmtDate, usePaged } from '../ui.tsx';

const ACTIONS = [
  'login', 'login_failed', 'logout', 'register', 'user_created', 'user_updated', 'user_deleted', 'user_unlocked', 'group_created', 'group_updated', 'group_deleted',
  'settings_updated', 'logs_cleared', 'logs_purged', 'api_key_created', 'api_key_updated', 'api_key_revoked', 'api_key_used', 'endpoint_created', 'endpoint_updated',
  'endpoint_deleted', 'endpoint_group_created', 'endpoint_group_updated', 'endpoint_group_deleted', 'project_applied', 'project_imported', 'database_document_created',
  'database_document_updated', 'database_document_deleted', 'database_collection_cleared', 'cron_job_created', 'cron_job_updated', 'cron_job_deleted', 'cron_run',
  'webhook_created', 'webhook_updated', 'webhook_deleted', 'webhook_dispatch', 'mcp_call', 'api_call', 'error',
];

interface LogEntry {
  _id: string;
  action: string;
  message: string;
  source?: string;
  ip?: string;
  method?: string;
  path?: string;
  statusCode?: number;
  createdAt: string;
}

/** A local date (yyyy-mm-dd) as the UTC instant of its start; `to` is the day after (exclusive). */
const dayStart = (day: string, plus = 0) => (day ? new Date(new Date(`${day}T00:00:00`).getTime() + plus * 86_400_000).toISOString() : undefined);

export default function Logs() {
  const { query } = useRoute();
  const action = query.get('action') ?? '';
  const from = query.get('from') ?? '';
  const to = query.get('to') ?? '';
  const list = usePaged<LogEntry>('/api/dashboard/logs', { action, from: dayStart(from), to: dayStart(to, 1) }, 25);
  const [open, setOpen] = useState<string | null>(null);
  return (
    <Page title="Audit log">
      <div class="row" style={{ marginBottom: '10px' }}>
        <SearchBox placeholder="Search messages, paths" />
        <select aria-label="Action" value={action} onChange={(e) => setQuery({ action: e.currentTarget.value, page: 1 })}>
          <option value="">All actions</option>
          {ACTIONS.map((a) => (
            <option>{a}</option>
          ))}
        </select>
        <label class="check">
          From <input type="date" aria-label="From" value={from} onChange={(e) => setQuery({ from: e.currentTarget.value, page: 1 })} />
        </label>
        <label class="check">
          To <input type="date" aria-label="To" value={to} onChange={(e) => setQuery({ to: e.currentTarget.value, page: 1 })} />
        </label>
      </div>
      <ErrorBox error={list.error} />
      <div class="panel table-wrap">
        <table>
          <thead>
            <tr>
              <th>When</th>
              <th>Action</th>
              <th>Message</th>
              <th class="hide-sm">IP</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((entry) => [
              <tr>
                <td class="small">
                  <button class="link" aria-expanded={open === entry._id} onClick={() => setOpen(open === entry._id ? null : entry._id)}>
                    {open === entry._id ? '▾' : '▸'} {fmtDate(entry.createdAt)}
                  </button>
                </td>
                <td>
                  <code>{entry.action}</code>
                </td>
                <td>{entry.message}</td>
                <td class="hide-sm">{entry.ip ?? ''}</td>
              </tr>,
              open === entry._id && (
                <tr class="expand-row">
                  <td colSpan={4}>
                    <Json value={entry} />
                  </td>
                </tr>
              ),
            ])}
            <EmptyRow list={list} colSpan={4}>No entries match.</EmptyRow>
          </tbody>
        </table>
        <Pager meta={list.meta} />
      </div>
    </Page>
  );
}
