// Users and groups (Tab switches). Users: Enter shows one (groups by name, with what they
// grant), search with `/` (the server's search over name, login, email, status), `d` disables or enables the user under the cursor (y/N; disabling ends their
// sessions), `u` ends a login lockout — both for `manage_users` only. Groups: name, permissions.
import React from 'react';
import { Box, Text } from 'ink';
import type { User, UserGroup } from '../../cli/client.ts';
import { Busy } from '../components/busy.ts';
import { Confirm } from '../components/confirm.ts';
import { ErrorView } from '../components/error-view.ts';
import { ListView } from '../components/list-view.ts';
import { TextView } from '../components/text-view.ts';
import { SearchLine } from '../components/search-line.ts';
import { row, safe, when } from '../format.ts';
import { useKeys } from '../keys.ts';
import { useSession } from '../session.ts';
import { tone } from '../theme.ts';
import { useAction, useRequest } from '../use-request.ts';

const h = React.createElement;

export function UsersScreen(): React.ReactElement {
  const session = useSession();
  const [tab, setTab] = React.useState<'users' | 'groups'>('users');
  const [busyTab, setBusyTab] = React.useState(false);
  useKeys(
    (_input, key) => {
      if (key.tab) setTab(tab === 'users' ? 'groups' : 'users');
    },
    { isActive: !session.overlay && !busyTab },
  );
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { wrap: 'truncate' }, h(Text, { inverse: tab === 'users', bold: true }, ' Users '), ' ', h(Text, { inverse: tab === 'groups', bold: true }, ' Groups '), h(Text, { dimColor: true }, '  (Tab switches)')),
    tab === 'users' ? h(UserList, { onTyping: setBusyTab }) : h(GroupList),
  );
}

function UserList({ onTyping }: { onTyping(typing: boolean): void }): React.ReactElement {
  const session = useSession();
  const { rows, columns } = session.size;
  const [search, setSearch] = React.useState('');
  const [applied, setApplied] = React.useState('');
  const [searching, setSearching] = React.useState(false);
  const [cursor, setCursor] = React.useState<User | undefined>(undefined);
  const [confirm, setConfirm] = React.useState<User | null>(null);
  // Enter shows the user under the cursor; the list keeps its search and place meanwhile.
  const [open, setOpen] = React.useState<{ user: User; index: number } | null>(null);
  const [place, setPlace] = React.useState(0);
  const users = useRequest((signal) => session.client.users({ page: 1, limit: 100, search: applied || undefined }, { signal }), [applied]);
  const change = useAction<User>(() => users.reload());
  const canWrite = session.can('manage_users');
  // A layout effect: Tab is off before the next key (keys.ts), even one that came in the same read.
  React.useLayoutEffect(() => onTyping(searching || confirm !== null), [searching, confirm, onTyping]);

  useKeys(
    (input, key) => {
      // A "✓ … is disabled" line answers the last key; the next one is about something else.
      if (change.result !== undefined && !change.busy) change.clear();
      if (key.escape) {
        if (users.loading) users.cancel();
        else if (change.busy) change.cancel();
        else if (applied) {
          setSearch('');
          setApplied('');
        }
      } else if (input === '/') setSearching(true);
      else if (input === 'r') users.reload();
      else if (input === 'd' && canWrite && cursor) setConfirm(cursor);
      else if (input === 'u' && canWrite && cursor) change.run((signal) => session.client.unlockUser(cursor._id, { signal }));
    },
    { isActive: !session.overlay && !searching && confirm === null && open === null },
  );
  if (open) return h(UserDetail, { user: open.user, onBack: () => setOpen(null) });

  const layout = (login: string, name: string, status: string, groups: string, last: string): string =>
    row([{ text: login, width: 18 }, { text: name, width: 'flex' }, { text: status, width: 8 }, { text: groups, width: 6 }, { text: last, width: 19 }], columns - 1);
  const result = change.result as (User & { wasLocked?: boolean }) | undefined;
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { dimColor: true, wrap: 'truncate' }, `${users.data ? `${users.data.total} users   ` : ''}Enter details  / search  ${canWrite ? 'd disable/enable  u unlock  ' : ''}r reload`),
    h(SearchLine, { value: search, editing: searching, onChange: setSearch, onDone: () => (setSearching(false), setApplied(search.trim())) }),
    users.loading ? h(Busy, { label: 'loading users' }) : null,
    users.error ? h(ErrorView, { error: users.error }) : null,
    users.data
      ? h(ListView<User>, {
          items: users.data.items,
          height: rows - 5,
          active: !session.overlay && !searching && confirm === null,
          header: ` ${layout('LOGIN', 'NAME', 'STATUS', 'GROUPS', 'LAST LOGIN (UTC)')}`,
          render: (user) => layout(user.login, user.name, user.status, String(user.groupIds.length), when(user.lastLoginAt)),
          color: (user) => (user.status === 'disabled' ? tone('gray') : undefined),
          onCursor: (user: User | undefined, index: number) => {
            setCursor(user);
            setPlace(index);
          },
          onOpen: (user: User, index: number) => setOpen({ user, index }),
          initialCursor: place,
          empty: applied ? `no user matches "${applied}"` : 'no users',
        })
      : null,
    confirm
      ? h(Confirm, {
          question: `${confirm.status === 'active' ? 'disable' : 'enable'} ${confirm.login}?${confirm.status === 'active' ? ' (ends their sessions)' : ''}`,
          onAnswer: (yes: boolean) => {
            const user = confirm;
            setConfirm(null);
            if (yes) change.run((signal) => session.client.setUserStatus(user._id, user.status === 'active' ? 'disabled' : 'active', { signal }));
          },
        })
      : null,
    change.busy ? h(Busy, { label: 'saving' }) : null,
    change.error ? h(ErrorView, { error: change.error }) : null,
    result && !change.busy
      ? h(Text, { color: tone('green') }, safe(result.wasLocked === undefined ? `✓ ${result.login} is ${result.status}` : result.wasLocked ? `✓ ${result.login} unlocked` : `✓ ${result.login} was not locked`))
      : null,
  );
}

/** One user's fields, their groups by name and what those grant; Esc goes back to the list. */
function UserDetail({ user, onBack }: { user: User; onBack(): void }): React.ReactElement {
  const session = useSession();
  const { rows } = session.size;
  // Group names need view, manage_users or manage_api; without them the ids are shown.
  const groups = useRequest((signal) => session.client.listGroups({ signal }), []);
  useKeys(
    (_input, key) => {
      if (key.escape) {
        if (groups.loading) groups.cancel();
        else onBack();
      }
    },
    { isActive: !session.overlay },
  );
  const groupLines = user.groupIds.map((id) => {
    const group = groups.data?.find((g) => g._id === id);
    return group ? `  ${group.name} (${group.permissions.join(', ') || 'no permissions'})` : `  ${id}`;
  });
  const lines = [
    `Login       ${user.login}`,
    `Name        ${user.name || '—'}`,
    `Email       ${user.email ?? '—'}`,
    `Status      ${user.status}`,
    `Last login  ${when(user.lastLoginAt)}`,
    `Created     ${when(user.createdAt)}`,
    `Updated     ${when(user.updatedAt)}`,
    `Id          ${user._id}`,
    `Groups      ${user.groupIds.length === 0 ? 'none' : ''}`,
    ...groupLines,
  ];
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { bold: true, wrap: 'truncate' }, safe(`User ${user.login}`), h(Text, { dimColor: true }, '  (times in UTC)')),
    groups.error ? h(Text, { dimColor: true, wrap: 'truncate' }, 'group names not shown: listing groups needs view, manage_users or manage_api') : null,
    h(TextView, { lines, height: rows - 6, active: !session.overlay }),
    h(Text, { dimColor: true }, 'Esc back'),
  );
}

function GroupList(): React.ReactElement {
  const session = useSession();
  const { rows, columns } = session.size;
  const groups = useRequest((signal) => session.client.listGroups({ signal }), []);
  useKeys(
    (input, key) => {
      if (key.escape && groups.loading) groups.cancel();
      else if (input === 'r') groups.reload();
    },
    { isActive: !session.overlay },
  );
  const layout = (name: string, permissions: string, system: string): string => row([{ text: name, width: 22 }, { text: permissions, width: 'flex' }, { text: system, width: 6 }], columns - 1);
  return h(
    Box,
    { flexDirection: 'column' },
    groups.loading ? h(Busy, { label: 'loading groups' }) : null,
    groups.error ? h(ErrorView, { error: groups.error }) : null,
    groups.data
      ? h(ListView<UserGroup>, {
          items: groups.data,
          height: rows - 2,
          active: !session.overlay,
          header: ` ${layout('NAME', 'PERMISSIONS', 'SYSTEM')}`,
          render: (group) => layout(group.name, group.permissions.join(', '), group.isSystem ? 'yes' : ''),
          empty: 'no groups',
        })
      : null,
  );
}
