// What every screen shares: the one API client, who is signed in (their permissions decide which
// write actions are shown), the size of the body area, and the app's cross-cutting reports — the
// server went away (banner, retries), the session ended (password prompt), a text field has the
// keyboard (global keys off).
import React from 'react';
import type { DynClient, UserProfile } from '../cli/client.ts';

export interface Session {
  client: DynClient;
  /** The signed-in user; null with an API key or bearer token from the environment (no profile). */
  profile: UserProfile | null;
  /** True when the login holds `permission`; without a profile, unknown, so the server decides. */
  can(permission: string): boolean;
  /** The local project directory the project screen plans (PROJECT_DIR, else ./project). */
  projectDir: string;
  /** Lines and columns the current screen may use. */
  size: { rows: number; columns: number };
  /** The server could not be reached (message), or is back (null). */
  reportOffline(message: string | null): void;
  /** The session has ended: ask for the password, then call `retry`. */
  reportSessionEnded(retry: () => void): void;
  /** A text field has (true) or has released (false) the keyboard. */
  setCaptured(captured: boolean): void;
  /** True while an overlay (help, palette, password) has the keyboard. */
  overlay: boolean;
}

export const SessionContext = React.createContext<Session | null>(null);

export function useSession(): Session {
  const session = React.useContext(SessionContext);
  if (!session) throw new Error('useSession outside <SessionContext>');
  return session;
}

/**
 * Marks a text field as having the keyboard while `captured` is true. A layout effect: the global
 * keys are off before the next keystroke is handed out (keys.ts), even one typed in the same read.
 */
export function useCapture(captured: boolean): void {
  const { setCaptured } = useSession();
  React.useLayoutEffect(() => {
    setCaptured(captured);
    return () => setCaptured(false);
  }, [captured, setCaptured]);
}
