// API keys: name, prefix, permissions, expiry, last use. `c` creates one (name, then
// permissions, checked here as `dynctl keys create --permissions` checks them) and shows the key
// once — it is never shown again; `x` revokes the one under the cursor after a y/N question.
// Keys need `manage_api` to list at all.
import React from 'react';
import { Box, Text } from 'ink';
import type { ApiKey, CreatedApiKey } from '../../cli/client.ts';
import { parsePermissions } from '../../cli/option-parsers.ts';
import { PERMISSIONS } from '../../model/permissions.ts';
import { Busy } from '../components/busy.ts';
import { Confirm } from '../components/confirm.ts';
import { ErrorView } from '../components/error-view.ts';
import { ListView } from '../components/list-view.ts';
import { TextField } from '../components/text-field.ts';
import { row, safe, when } from '../format.ts';
import { useKeys } from '../keys.ts';
import { useCapture, useSession } from '../session.ts';
import { tone } from '../theme.ts';
import { useAction, useRequest } from '../use-request.ts';

const h = React.createElement;

const DEFAULT_PERMISSIONS = 'view';

type Mode = { kind: 'list' } | { kind: 'create'; step: 'name' | 'permissions' } | { kind: 'revoke'; key: ApiKey };

export function ApiKeysScreen(): React.ReactElement {
  const session = useSession();
  const { rows, columns } = session.size;
  const keys = useRequest((signal) => session.client.listApiKeys({ signal }), []);
  const [mode, setMode] = React.useState<Mode>({ kind: 'list' });
  const [cursor, setCursor] = React.useState<ApiKey | undefined>(undefined);
  const [name, setName] = React.useState('');
  const [permissions, setPermissions] = React.useState(DEFAULT_PERMISSIONS);
  const [problem, setProblem] = React.useState<string | null>(null);
  const canWrite = session.can('manage_api');
  const create = useAction<CreatedApiKey>(() => keys.reload());
  const revoke = useAction<ApiKey>(() => keys.reload());
  const creating = mode.kind === 'create';
  useCapture(creating);

  useKeys(
    (input, key) => {
      if (key.escape) {
        if (keys.loading) keys.cancel();
        else if (create.busy) create.cancel();
        else if (revoke.busy) revoke.cancel();
        else if (create.result) create.clear();
      } else if (input === 'r') keys.reload();
      else if (input === 'c' && canWrite) {
        // A new form each time: nothing of the last one (name, permissions, its problem) is kept.
        create.clear();
        setName('');
        setPermissions(DEFAULT_PERMISSIONS);
        setProblem(null);
        setMode({ kind: 'create', step: 'name' });
      } else if (input === 'x' && canWrite && cursor) setMode({ kind: 'revoke', key: cursor });
    },
    { isActive: !session.overlay && mode.kind === 'list' },
  );

  const submit = (): void => {
    if (mode.kind !== 'create') return;
    if (mode.step === 'name') {
      if (name.trim()) setMode({ kind: 'create', step: 'permissions' });
      return;
    }
    let list: string[];
    try {
      list = parsePermissions(permissions.replace(/\s+/g, ','));
    } catch (error) {
      setProblem((error as Error).message);
      return;
    }
    setProblem(null);
    setMode({ kind: 'list' });
    create.run((signal) => session.client.createApiKey({ name: name.trim(), permissions: list }, { signal }));
  };

  const onCancel = (): void => setMode({ kind: 'list' });

  const layout = (label: string, prefix: string, perms: string, expires: string, used: string): string =>
    row([{ text: label, width: 'flex' }, { text: prefix, width: 16 }, { text: perms, width: 18 }, { text: expires, width: 10 }, { text: used, width: 10 }], columns - 1);
  const below: React.ReactNode[] = [];
  if (mode.kind === 'create') {
    below.push(
      h(Box, { key: 'n' }, h(Text, null, 'Name:        '), mode.step === 'name' ? h(TextField, { focus: !session.overlay, value: name, onChange: setName, onSubmit: submit, onCancel }) : h(Text, null, safe(name))),
      mode.step === 'permissions'
        ? h(Box, { key: 'p' }, h(Text, null, 'Permissions: '), h(TextField, { focus: !session.overlay, value: permissions, selected: true, onChange: setPermissions, onSubmit: submit, onCancel }))
        : null,
      problem ? h(Text, { key: 'pr', color: tone('red') }, `✗ ${safe(problem)}`) : null,
      h(Text, { key: 'h', dimColor: true, wrap: 'truncate' }, `${PERMISSIONS.join(', ')} (comma-separated)   Enter next   Ctrl+U clear   Esc cancel`),
    );
  }
  if (mode.kind === 'revoke') {
    below.push(h(Confirm, { key: 'c', question: `revoke the key "${mode.key.name}" (${mode.key.prefix}…)?`, onAnswer: (yes: boolean) => (setMode({ kind: 'list' }), yes ? revoke.run((signal) => session.client.revokeApiKey(mode.key._id, { signal })) : undefined) }));
  }
  if (create.busy) below.push(h(Busy, { key: 'cb', label: 'creating the key' }));
  if (revoke.busy) below.push(h(Busy, { key: 'rb', label: 'revoking' }));
  for (const error of [create.error, revoke.error]) if (error) below.push(h(ErrorView, { key: `e${below.length}`, error }));
  if (revoke.result) below.push(h(Text, { key: 'rv', color: tone('green') }, `✓ revoked ${safe(revoke.result.name)}`));
  if (create.result) {
    below.push(
      h(
        Box,
        { key: 'key', flexDirection: 'column', borderStyle: 'round', paddingX: 1 },
        h(Text, { color: tone('green') }, `✓ created "${safe(create.result.name)}". Copy the key now: it is not shown again.`),
        h(Text, { bold: true }, safe(create.result.key)),
        h(Text, { dimColor: true }, 'Esc hides it'),
      ),
    );
  }
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { bold: true, wrap: 'truncate' }, 'API keys', h(Text, { dimColor: true }, `  ${canWrite ? 'c create  x revoke  ' : ''}r reload`)),
    keys.loading ? h(Busy, { label: 'loading keys' }) : null,
    keys.error ? h(ErrorView, { error: keys.error }) : null,
    keys.data
      ? h(ListView<ApiKey>, {
          items: keys.data,
          height: Math.max(3, rows - 3 - (below.length > 0 ? 5 : 0)),
          active: !session.overlay && mode.kind === 'list',
          header: ` ${layout('NAME', 'PREFIX', 'PERMISSIONS', 'EXPIRES', 'LAST USED')}`,
          render: (k) => layout(k.name, k.prefix, k.permissions.join(','), k.expiresAt ? when(k.expiresAt).slice(0, 10) : 'never', k.lastUsedAt ? when(k.lastUsedAt).slice(0, 10) : 'never'),
          onCursor: setCursor,
          empty: 'no API keys',
        })
      : null,
    ...below,
  );
}
