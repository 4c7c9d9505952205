// `dynctl tui`: the full-screen Ink app on the same server, stored login and client as the
// other dynctl commands. With no stored session it opens on a login form (the session is then
// stored like `dynctl login` stores it); the client is long-lived, so the session is refreshed
// whenever its access token expires.
import React from 'react';
import { render } from 'ink';
import { DynClient, type LoginResult, type UserProfile } from '../cli/client.ts';
import { DEFAULT_SERVER } from '../cli/config-store.ts';
import type { CliContext } from '../cli/context.ts';
import { ApiError } from '../cli/errors.ts';
import { App } from './app.ts';
import { setColor } from './theme.ts';

export interface TuiOptions {
  /** The screen to open on (a name from screens/index.ts). */
  screen?: string;
}

export async function runTui(context: CliContext, options: TuiOptions = {}): Promise<void> {
  setColor(!context.env.NO_COLOR);
  const target = await context.target();
  const client = target.server ? await context.client({ longLived: true }) : new DynClient({ server: DEFAULT_SERVER, credentials: { kind: 'none' }, longLived: true });
  const profile = await profileOf(client);
  const onLogin = async (result: LoginResult): Promise<void> => {
    await context.saveSession(target.name, { server: client.server, accessToken: result.accessToken, refreshToken: result.refreshToken });
  };
  // Interactive even where a CI variable is set: the command has already made sure stdin and
  // stdout are a terminal, and Ink would otherwise draw nothing until exit.
  const app = render(React.createElement(App, { client, profile, onLogin, initialScreen: options.screen, projectDir: context.env.PROJECT_DIR?.trim() || './project' }), {
    alternateScreen: true,
    incrementalRendering: true,
    exitOnCtrlC: true,
    patchConsole: true,
    interactive: true,
  });
  await app.waitUntilExit();
}

/** Who is signed in (their permissions decide what the screens offer); null when unknown. */
async function profileOf(client: DynClient): Promise<UserProfile | null> {
  if (client.credentialKind !== 'session' && client.credentialKind !== 'token') return null;
  try {
    return await client.profile();
  } catch (error) {
    // An ended session is asked for again inside the app; anything else shows on its screens.
    if (error instanceof ApiError) return null;
    throw error;
  }
}
