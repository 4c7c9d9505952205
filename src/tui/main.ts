// `dynctl tui`: the full-screen Ink app on the same server, stored login and client as the
// other dynctl commands. With no stored session it opens on a login form (the session is then
// stored like `dynctl login` stores it); the client is long-lived, so the session is refreshed
// whenever its access token expires.
import React from 'react';
import { render } from 'ink';
import { DynClient, type LoginResult, type UserProfile } from '../cli/client.ts';
import { DEFAULT_SERVER } from '../cli/config-store.ts';
import type { CliContext } from '../cli/context.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError, NetworkError } from '../cli/errors.ts';
import { App } from './app.ts';
import { RETRY_MS } from './use-request.ts';
import { setColor } from './theme.ts';

/** How long after a resize the frame is drawn afresh: the app's layout follows within a render. */
const REDRAW_AFTER_MS = 60;

export interface TuiOptions {
  /** The screen to open on (a name from screens/index.ts). */
  screen?: string;
}

export async function runTui(context: CliContext, options: TuiOptions = {}): Promise<void> {
  setColor(!context.env.NO_COLOR);
  const target = await context.target();
  const client = target.server ? await context.client({ longLived: true }) : new DynClient({ server: DEFAULT_SERVER, credentials: { kind: 'none' }, longLived: true });
  const profile = await profileOf(client, (message) => process.stderr.write(`${message}\n`));
  const onLogin = async (result: LoginResult): Promise<void> => {
    await context.saveSession(target.name, { server: client.server, accessToken: result.accessToken, refreshToken: result.refreshToken });
  };
  // Interactive even where a CI variable is set: the command has already made sure stdin and
  // stdout are a terminal, and Ink would otherwise draw nothing until exit.
  const tree = React.createElement(App, { client, profile, onLogin, initialScreen: options.screen, projectDir: context.env.PROJECT_DIR?.trim() || './project' });
  const app = render(tree, {
    alternateScreen: true,
    incrementalRendering: true,
    exitOnCtrlC: true,
    patchConsole: true,
    interactive: true,
  });
  // A smaller terminal: Ink draws the frame at once, still as wide as the app laid it out, and
  // the app's own layout follows a moment later, line by line where lines are unchanged, so rows
  // of the wrapped first frame would stay. On the alternate screen the whole screen is ours:
  // once the app has followed, clear it and draw the frame afresh.
  let width = process.stdout.columns;
  let height = process.stdout.rows;
  let redraw: NodeJS.Timeout | undefined;
  const redrawWhenSmaller = (): void => {
    if (process.stdout.columns < width || process.stdout.rows < height) {
      clearTimeout(redraw);
      redraw = setTimeout(() => {
        process.stdout.write('\u001b[2J\u001b[H');
        app.clear();
        app.rerender(tree);
      }, REDRAW_AFTER_MS);
    }
    width = process.stdout.columns;
    height = process.stdout.rows;
  };
  process.stdout.on('resize', redrawWhenSmaller);
  try {
    await app.waitUntilExit();
  } finally {
    clearTimeout(redraw);
    process.stdout.off('resize', redrawWhenSmaller);
  }
}

/**
 * Who is signed in (their permissions decide what the screens offer); null when unknown. A server
 * that cannot be reached yet is waited for, as the screens wait for it later (Ctrl+C leaves).
 */
async function profileOf(client: DynClient, say: (message: string) => void): Promise<UserProfile | null> {
  if (client.credentialKind !== 'session' && client.credentialKind !== 'token') return null;
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.profile();
    } catch (error) {
      // An ended session is asked for again inside the app.
      if (error instanceof ApiError) return null;
      if (!(error instanceof NetworkError)) throw error;
      if (attempt === 1) say(`⚠ server unreachable, retrying every ${RETRY_MS / 1000} s (Ctrl+C to leave): ${error.message}`);
      await sleep(RETRY_MS);
    }
  }
}
