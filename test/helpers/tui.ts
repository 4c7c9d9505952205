import React from 'react';
import { render } from 'ink-testing-library';
import { DynClient, type UserProfile } from '../../src/cli/client.ts';
import { App } from '../../src/tui/app.ts';
import { setColor } from '../../src/tui/theme.ts';
import type { TestServer } from './test-server.ts';

/**
 * `dynctl tui`'s App rendered by ink-testing-library (80×24 unless told) against a real test
 * server, signed in as `login` through the real client. `waitFor` polls the last frame until it
 * holds the text; `press` sends keys one at a time, as a person types them.
 */
export interface TuiHarness {
  frame(): string;
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<string>;
  press(...keys: string[]): Promise<void>;
  type(text: string): Promise<void>;
  client: DynClient;
  unmount(): void;
}

export const KEY = { enter: '\r', escape: '\u001B', down: '\u001B[B', up: '\u001B[A', tab: '\t' } as const;

export interface TuiOptions {
  login?: string;
  password?: string;
  screen?: string;
  size?: { rows: number; columns: number };
  /** Start with no credentials (the login form). */
  anonymous?: boolean;
  /** A client of the test's own (another server, a token); no profile then. */
  client?: DynClient;
  projectDir?: string;
}

export async function renderTui(server: TestServer, options: TuiOptions = {}): Promise<TuiHarness> {
  setColor(false);
  let client: DynClient;
  let profile: UserProfile | null = null;
  if (options.client) {
    client = options.client;
  } else if (options.anonymous) {
    client = new DynClient({ server: server.url, credentials: { kind: 'none' }, longLived: true });
  } else {
    const session = await server.login(options.login, options.password);
    client = new DynClient({ server: server.url, credentials: { kind: 'session', accessToken: session.accessToken, refreshToken: session.refreshToken }, longLived: true });
    profile = await client.profile();
  }
  const app = render(React.createElement(App, { client, profile, initialScreen: options.screen, projectDir: options.projectDir, size: options.size ?? { rows: 24, columns: 80 } }));
  const frame = (): string => app.lastFrame() ?? '';
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  return {
    client,
    frame,
    async waitFor(text, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const current = frame();
        if (typeof text === 'string' ? current.includes(text) : text.test(current)) {
          // Ink attaches a newly shown component's key handler in an effect after the frame is
          // written: let it settle, as a person would, before the next key.
          await pause(150);
          return current;
        }
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(text)}; the screen shows:\n${current}`);
        await pause(25);
      }
    },
    async press(...keys) {
      for (const key of keys) {
        app.stdin.write(key);
        await pause(60);
      }
    },
    async type(text) {
      for (const char of text) {
        app.stdin.write(char);
        await pause(15);
      }
    },
    unmount: () => app.unmount(),
  };
}
