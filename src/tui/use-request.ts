// Network calls from screens: each shows a spinner, can be cancelled (Esc → `cancel`), and handles
// the two failures that are not the screen's business — a server that went away (banner, retried
// every few seconds until it answers) and a session that ended (password prompt, then the call
// again). Any other error is kept for the screen to show with the API's message and details.
import React from 'react';
import { ApiError, NetworkError } from '../cli/errors.ts';
import { useSession } from './session.ts';

export const RETRY_MS = 3_000;

export interface RequestState<T> {
  loading: boolean;
  data: T | undefined;
  error: unknown;
  cancelled: boolean;
  reload(): void;
  cancel(): void;
}

/**
 * Loads `load` when mounted and when `deps` change; `pollMs` loads it again every so often
 * (the logs tail) without showing a spinner. Old answers never overwrite newer ones.
 */
export function useRequest<T>(load: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[], options: { pollMs?: number } = {}): RequestState<T> {
  const session = useSession();
  const [state, setState] = React.useState<{ loading: boolean; data: T | undefined; error: unknown; cancelled: boolean }>({ loading: true, data: undefined, error: undefined, cancelled: false });
  const [generation, setGeneration] = React.useState(0);
  const controller = React.useRef<AbortController | null>(null);
  const loadRef = React.useRef(load);
  loadRef.current = load;

  React.useEffect(() => {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const run = async (quiet: boolean): Promise<void> => {
      const abort = new AbortController();
      controller.current = abort;
      if (!quiet) setState((previous) => ({ ...previous, loading: true, error: undefined, cancelled: false }));
      const outcome = await settle(() => loadRef.current(abort.signal), session, () => setGeneration((g) => g + 1));
      if (stopped || abort.signal.aborted) return;
      controller.current = null;
      if (outcome.kind === 'offline') {
        timer = setTimeout(() => void run(true), RETRY_MS);
        return;
      }
      if (outcome.kind === 'waiting') return;
      setState(outcome.kind === 'ok' ? { loading: false, data: outcome.value, error: undefined, cancelled: false } : (previous) => ({ ...previous, loading: false, error: outcome.error, cancelled: false }));
      if (options.pollMs) timer = setTimeout(() => void run(true), options.pollMs);
    };
    void run(false);
    return () => {
      stopped = true;
      clearTimeout(timer);
      controller.current?.abort();
    };
  }, [...deps, generation]);

  return {
    ...state,
    reload: () => setGeneration((g) => g + 1),
    cancel: () => {
      if (!controller.current) return;
      controller.current.abort();
      controller.current = null;
      setState((previous) => ({ ...previous, loading: false, cancelled: true }));
    },
  };
}

export interface ActionState<T> {
  busy: boolean;
  result: T | undefined;
  error: unknown;
  cancelled: boolean;
  /** Runs one write (or a one-off call such as "try it"); a second run while busy is ignored. */
  run(work: (signal: AbortSignal) => Promise<T>): void;
  cancel(): void;
  clear(): void;
}

/** A call the user starts (run now, delete, test): spinner while busy, cancellable, result or error kept. */
export function useAction<T>(onDone?: (result: T) => void): ActionState<T> {
  const session = useSession();
  const [state, setState] = React.useState<{ busy: boolean; result: T | undefined; error: unknown; cancelled: boolean }>({ busy: false, result: undefined, error: undefined, cancelled: false });
  const controller = React.useRef<AbortController | null>(null);
  const mounted = React.useRef(true);
  React.useEffect(
    () => () => {
      mounted.current = false;
      controller.current?.abort();
    },
    [],
  );
  const onDoneRef = React.useRef(onDone);
  onDoneRef.current = onDone;

  const run = React.useCallback(
    (work: (signal: AbortSignal) => Promise<T>) => {
      if (controller.current) return;
      const start = (): void => {
        const abort = new AbortController();
        controller.current = abort;
        setState({ busy: true, result: undefined, error: undefined, cancelled: false });
        void settle(() => work(abort.signal), session, start).then((outcome) => {
          if (!mounted.current || abort.signal.aborted) return;
          controller.current = null;
          if (outcome.kind === 'waiting') return;
          if (outcome.kind === 'ok') {
            setState({ busy: false, result: outcome.value, error: undefined, cancelled: false });
            onDoneRef.current?.(outcome.value);
          } else {
            // A write is not retried by itself when the server is away: the user decides.
            const error = outcome.kind === 'offline' ? new NetworkError(outcome.message) : outcome.error;
            setState({ busy: false, result: undefined, error, cancelled: false });
          }
        });
      };
      start();
    },
    [session],
  );

  return {
    ...state,
    run,
    cancel: () => {
      if (!controller.current) return;
      controller.current.abort();
      controller.current = null;
      setState({ busy: false, result: undefined, error: undefined, cancelled: true });
    },
    clear: () => setState({ busy: false, result: undefined, error: undefined, cancelled: false }),
  };
}

type Outcome<T> = { kind: 'ok'; value: T } | { kind: 'error'; error: unknown } | { kind: 'offline'; message: string } | { kind: 'waiting' };

/** Runs a call and sorts its end: ok, the screen's error, the server away, or waiting for the password. */
async function settle<T>(work: () => Promise<T>, session: ReturnType<typeof useSession>, retry: () => void): Promise<Outcome<T>> {
  try {
    const value = await work();
    session.reportOffline(null);
    return { kind: 'ok', value };
  } catch (error) {
    if (error instanceof NetworkError) {
      session.reportOffline(error.message);
      return { kind: 'offline', message: error.message };
    }
    session.reportOffline(null);
    // No login yet (the login form is open) or a session that ended: sign in, then run it again.
    // A token or API key from the environment cannot be renewed here: that 401 is the screen's error.
    const kind = session.client.credentialKind;
    if (error instanceof ApiError && error.status === 401 && (kind === 'session' || kind === 'none')) {
      session.reportSessionEnded(retry);
      return { kind: 'waiting' };
    }
    return { kind: 'error', error };
  }
}
