// The frame of `dynctl tui`: header with the server, the user and the screen tabs; the current
// screen; a footer with the keys. Global keys (when no text field or overlay has the keyboard):
// 1–8 switch screens, `:` opens the palette, `?` the help, `q` quits. Overlays: help, palette,
// the login form (no stored session) and the password prompt (session ended: the screen under it
// stays, and its call runs again once signed in). A server that goes away shows a banner while
// the screens retry.
import React from 'react';
import { Box, Text, useApp, useWindowSize } from 'ink';
import type { DynClient, LoginResult, UserProfile } from '../cli/client.ts';
import { ErrorView } from './components/error-view.ts';
import { TextField } from './components/text-field.ts';
import { safe } from './format.ts';
import { KeyboardProvider, useKeys } from './keys.ts';
import { completeScreen, SCREENS } from './screens/index.ts';
import { SessionContext, type Session } from './session.ts';
import { tone } from './theme.ts';
import { RETRY_MS } from './use-request.ts';

const h = React.createElement;

export interface AppProps {
  client: DynClient;
  /** The signed-in user, when known at start. */
  profile: UserProfile | null;
  /** Saves a session started here (login form, password prompt) for the next dynctl command. */
  onLogin?(result: LoginResult): Promise<void>;
  initialScreen?: string;
  /** The local project directory (default: PROJECT_DIR, else ./project). */
  projectDir?: string;
  /** Terminal size; the real one (and its changes) by default. */
  size?: { rows: number; columns: number };
}

type Overlay = { kind: 'help' } | { kind: 'palette' } | { kind: 'login'; reason: string } | null;

/** The frame inside the one keyboard reader (keys.ts) that every key handler goes through. */
export function App(props: AppProps): React.ReactElement {
  return h(KeyboardProvider, null, h(Frame, props));
}

function Frame(props: AppProps): React.ReactElement {
  const { exit } = useApp();
  const window = useWindowSize();
  const rows = props.size?.rows ?? (window.rows || 24);
  const columns = props.size?.columns ?? (window.columns || 80);
  const [profile, setProfile] = React.useState<UserProfile | null>(props.profile);
  const [screen, setScreen] = React.useState(props.initialScreen ?? 'dashboard');
  const [overlay, setOverlay] = React.useState<Overlay>(props.client.credentialKind === 'none' ? { kind: 'login', reason: 'Sign in' } : null);
  const [captured, setCaptured] = React.useState(false);
  const [offline, setOffline] = React.useState<string | null>(null);
  const retries = React.useRef<Array<() => void>>([]);

  const bodyRows = Math.max(6, rows - 3 - (offline ? 1 : 0));
  const session = React.useMemo<Session>(
    () => ({
      client: props.client,
      profile,
      projectDir: props.projectDir ?? (process.env.PROJECT_DIR?.trim() || './project'),
      can: (permission) => (profile ? profile.permissions.includes(permission) : true),
      size: { rows: bodyRows, columns },
      reportOffline: (message) => setOffline((previous) => (previous === message ? previous : message)),
      reportSessionEnded: (retry) => {
        retries.current.push(retry);
        setOverlay({ kind: 'login', reason: props.client.credentialKind === 'none' ? 'Sign in' : 'Your session has ended: sign in again' });
      },
      setCaptured,
      overlay: overlay !== null,
    }),
    [props.client, props.projectDir, profile, bodyRows, columns, overlay],
  );

  useKeys(
    (input) => {
      if (input === 'q') exit();
      else if (input === '?') setOverlay({ kind: 'help' });
      else if (input === ':') setOverlay({ kind: 'palette' });
      else {
        const target = SCREENS.find((spec) => spec.key === input);
        if (target) setScreen(target.name);
      }
    },
    { isActive: overlay === null && !captured },
  );

  const signedIn = (result: LoginResult): void => {
    setProfile(result.user as UserProfile);
    setOverlay(null);
    void props.onLogin?.(result);
    const pending = retries.current;
    retries.current = [];
    for (const retry of pending) retry();
  };

  const current = SCREENS.find((spec) => spec.name === screen) ?? SCREENS[0]!;
  const mustSignIn = overlay?.kind === 'login' && props.client.credentialKind === 'none';
  return h(
    SessionContext.Provider,
    { value: session },
    h(
      Box,
      { flexDirection: 'column', width: columns, height: rows },
      h(Header, { server: props.client.server, user: profile?.login, current: current.name, columns }),
      // The header names the server already: the banner says what went wrong, shortly enough for 80 columns.
      offline ? h(Text, { color: tone('red'), inverse: true, wrap: 'truncate' }, ` ⚠ server unreachable, retrying every ${RETRY_MS / 1000} s: ${safe(offline.replace(`cannot reach ${props.client.server}: `, ''))} `) : null,
      h(
        Box,
        { flexDirection: 'column', height: bodyRows, overflow: 'hidden' },
        overlay?.kind === 'help' ? h(Help, { onClose: () => setOverlay(null) }) : null,
        overlay?.kind === 'palette' ? h(Palette, { onClose: () => setOverlay(null), onGo: (name) => (setScreen(name), setOverlay(null)) }) : null,
        overlay?.kind === 'login'
          ? h(LoginForm, { client: props.client, login: profile?.login, reason: overlay.reason, onDone: signedIn, onCancel: mustSignIn ? () => exit() : () => setOverlay(null) })
          : null,
        // The screen stays mounted under an overlay (hidden, its keys off): nothing typed or opened is lost.
        h(Box, { display: overlay ? 'none' : 'flex', flexDirection: 'column' }, h(current.component, { key: current.name })),
      ),
      h(Text, { dimColor: true, wrap: 'truncate' }, captured ? 'Enter: confirm  Ctrl+U: clear  Esc: back' : '?:help  ::go to  1-8:screens  ↑↓/jk:move  Enter:open  Esc:back  /:search  q:quit'),
    ),
  );
}

function Header({ server, user, current, columns }: { server: string; user: string | undefined; current: string; columns: number }): React.ReactElement {
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { wrap: 'truncate' }, h(Text, { bold: true, color: tone('cyan') }, 'dyn'), ` ${safe(server)}`, user ? h(Text, { dimColor: true }, `  as ${safe(user)}`) : null),
    h(
      Text,
      { wrap: 'truncate' },
      ...SCREENS.map((spec) => {
        const label = columns < 76 && spec.name.length > 7 ? spec.name.slice(0, 6) : spec.name;
        return h(Text, { key: spec.name, inverse: spec.name === current, bold: spec.name === current }, `${spec.key}:${label} `);
      }),
    ),
  );
}

const KEYS: ReadonlyArray<[string, string]> = [
  ['1-8', 'switch screen'],
  [':', 'go to a screen by name (Tab completes)'],
  ['↑ ↓  j k', 'move; PgUp/PgDn, g/G jump'],
  ['Enter', 'open'],
  ['Esc', 'back; cancels a call under way'],
  ['/', 'search or filter'],
  ['r', 'reload'],
  ['?', 'this help'],
  ['q', 'quit'],
];

function Help({ onClose }: { onClose(): void }): React.ReactElement {
  useKeys(() => onClose());
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { bold: true }, 'Keys'),
    ...KEYS.map(([key, what]) => h(Text, { key }, `  ${key.padEnd(10)} ${what}`)),
    h(Text, { bold: true }, 'Screens'),
    ...SCREENS.map((spec) => h(Text, { key: spec.name, wrap: 'truncate' }, `  ${spec.key} ${spec.name.padEnd(10)} ${spec.about}`)),
    h(Text, { dimColor: true }, 'Each screen lists its own keys in its title line. Any key closes this help.'),
  );
}

function Palette({ onClose, onGo }: { onClose(): void; onGo(name: string): void }): React.ReactElement {
  const [typed, setTyped] = React.useState('');
  const matches = completeScreen(typed);
  useKeys((_input, key) => {
    if (key.tab && matches[0]) setTyped(matches[0].name);
  });
  return h(
    Box,
    { flexDirection: 'column' },
    h(Box, null, h(Text, { color: tone('cyan') }, ':'), h(TextField, { value: typed, onChange: setTyped, onSubmit: () => (matches[0] ? onGo(matches[0].name) : undefined), onCancel: onClose })),
    ...matches.map((spec, index) => h(Text, { key: spec.name, inverse: index === 0, wrap: 'truncate' }, ` ${spec.name.padEnd(10)} ${spec.about}`)),
    matches.length === 0 ? h(Text, { color: tone('yellow') }, ' no screen by that name') : null,
    h(Text, { dimColor: true }, 'Tab completes, Enter goes, Esc closes'),
  );
}

function LoginForm(props: { client: DynClient; login: string | undefined; reason: string; onDone(result: LoginResult): void; onCancel(): void }): React.ReactElement {
  const [login, setLogin] = React.useState(props.login ?? '');
  const [password, setPassword] = React.useState('');
  const [field, setField] = React.useState<'login' | 'password'>(props.login ? 'password' : 'login');
  const [busy, setBusy] = React.useState(false);
  const [error, setError] = React.useState<unknown>(undefined);
  useKeys((_input, key) => {
    if (key.escape) props.onCancel();
  });
  const submit = (): void => {
    if (field === 'login') {
      if (login.trim()) setField('password');
      return;
    }
    if (busy || !password) return;
    setBusy(true);
    setError(undefined);
    props.client.relogin(login.trim(), password).then(props.onDone, (failure: unknown) => {
      setBusy(false);
      setPassword('');
      setError(failure);
    });
  };
  return h(
    Box,
    { flexDirection: 'column', borderStyle: 'round', paddingX: 1, width: 60 },
    h(Text, { bold: true }, safe(`${props.reason} (${props.client.server})`)),
    h(Box, null, h(Text, null, 'Login:    '), field === 'login' ? h(TextField, { value: login, onChange: setLogin, onSubmit: submit }) : h(Text, null, safe(login))),
    h(Box, null, h(Text, null, 'Password: '), field === 'password' ? h(TextField, { value: password, onChange: setPassword, onSubmit: submit, mask: '•' }) : h(Text, null, '')),
    busy ? h(Text, { dimColor: true }, 'signing in…') : null,
    error ? h(ErrorView, { error }) : null,
    h(Text, { dimColor: true }, 'Enter: next / sign in   Esc: cancel'),
  );
}
