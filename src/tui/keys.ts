// The one way in for the keyboard. Ink hands `useInput` what one read of the terminal held: `jjjj`
// as one string when a key repeats or several arrive together (SSH, auto-repeat, tmux send-keys),
// and several escape sequences (↓↓↓) as separate events but in the same tick, before React has
// drawn the first key's result — so a handler reading its state (a list cursor, a field's text)
// acts on the same old value each time, and a field opened by one key misses the keys after it.
// Here the app reads Ink's events in one place, splits them into keystrokes, and hands them out
// one at a time, each after the previous one's render has been committed: keys typed together
// behave exactly as keys typed one by one. Screens and components use `useKeys`, never `useInput`.
// One exception, for speed: while a text field has the keyboard, a run of printable characters
// (a paste) goes to it in one piece, as Ink would have sent it, instead of one render per character.
import React from 'react';
import { useInput, type Key } from 'ink';

export type KeyHandler = (input: string, key: Key) => void;

export interface Keystroke {
  input: string;
  key: Key;
}

/** A key with no flag set: what a printable character is. */
export const NO_KEY: Key = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageDown: false,
  pageUp: false,
  home: false,
  end: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
  super: false,
  hyper: false,
  capsLock: false,
  numLock: false,
};

/** One character of a multi-character read as the key it stands for (Ink splits out Backspace and escape sequences itself). */
function keystroke(char: string): Keystroke {
  const code = char.codePointAt(0) ?? 0;
  if (char === '\r' || char === '\n') return { input: '', key: { ...NO_KEY, return: true } };
  if (char === '\t') return { input: '', key: { ...NO_KEY, tab: true } };
  // Ctrl+A … Ctrl+Z, as Ink reports them when they come alone: the letter, with ctrl.
  if (code >= 1 && code <= 26) return { input: String.fromCharCode(code + 96), key: { ...NO_KEY, ctrl: true } };
  if (code < 0x20 || code === 0x7f) return { input: '', key: NO_KEY };
  return { input: char, key: { ...NO_KEY, shift: /[A-Z]/.test(char) } };
}

/** Ink's event as keystrokes: a multi-character `input` is one keystroke per character. */
export function splitKeys(input: string, key: Key): Keystroke[] {
  const chars = [...input];
  if (chars.length <= 1) return [{ input, key }];
  return chars.map(keystroke);
}

interface Listener {
  handler: React.RefObject<KeyHandler>;
  /** A text field: takes runs of printable characters whole. */
  text: boolean;
}

const printable = (stroke: Keystroke): boolean => stroke.input !== '' && !stroke.key.ctrl && !stroke.key.meta && (stroke.input.codePointAt(0) ?? 0) >= 0x20;

const KeyboardContext = React.createContext<Set<Listener> | null>(null);

/** How long a keystroke waits for its render at most: should none come (the app is closing), the next goes anyway. Generous: on a loaded machine a render can take longer than a keystroke gap, and the next key must not overtake it. */
const RENDER_WAIT_MS = 2000;

/** Reads the keyboard for everything under it (see the top of this file). */
export function KeyboardProvider({ children }: { children: React.ReactNode }): React.ReactElement {
  const listeners = React.useRef(new Set<Listener>()).current;
  const queue = React.useRef<Keystroke[]>([]);
  const draining = React.useRef(false);
  const [tick, setTick] = React.useState(0);
  const committed = React.useRef<(() => void) | null>(null);
  React.useLayoutEffect(() => {
    const done = committed.current;
    committed.current = null;
    done?.();
  }, [tick]);
  // Closing: no render will come for a key still waiting for one.
  React.useEffect(
    () => () => {
      queue.current.length = 0;
      committed.current?.();
      committed.current = null;
    },
    [],
  );

  // Resolves once React has committed what the keystroke changed: the tick is in the same batch,
  // and this provider's layout effect runs after those of everything under it (new fields attach).
  const rendered = (): Promise<void> =>
    new Promise((resolve) => {
      // Unref'd: the key that quits is never rendered, and its wait must not hold the process open.
      const timer = setTimeout(() => done(), RENDER_WAIT_MS).unref();
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      committed.current = done;
      setTick((n) => n + 1);
    });

  const drain = async (): Promise<void> => {
    draining.current = true;
    try {
      for (let next = queue.current.shift(); next; next = queue.current.shift()) {
        const active = [...listeners];
        if (printable(next) && active.some((listener) => listener.text)) {
          while (queue.current[0] && printable(queue.current[0])) next = { input: next.input + (queue.current.shift() as Keystroke).input, key: next.key };
        }
        for (const listener of active) listener.handler.current(next.input, next.key);
        await rendered();
      }
    } finally {
      draining.current = false;
    }
  };

  useInput((input, key) => {
    queue.current.push(...splitKeys(input, key));
    if (!draining.current) void drain();
  });
  return React.createElement(KeyboardContext.Provider, { value: listeners }, children);
}

/**
 * Ink's `useInput`, one keystroke per call, through the app's KeyboardProvider. `text`: a text
 * field, which takes a run of printable characters in one call.
 */
export function useKeys(handler: KeyHandler, options: { isActive?: boolean; text?: boolean } = {}): void {
  const listeners = React.useContext(KeyboardContext);
  if (!listeners) throw new Error('useKeys outside <KeyboardProvider>');
  const ref = React.useRef(handler);
  React.useLayoutEffect(() => {
    ref.current = handler;
  });
  const active = options.isActive ?? true;
  const text = options.text ?? false;
  React.useLayoutEffect(() => {
    if (!active) return;
    const listener: Listener = { handler: ref, text };
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }, [active, text, listeners]);
}
