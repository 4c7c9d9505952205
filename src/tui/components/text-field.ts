// The one text field of the TUI (forms, search lines, the palette, the try-it fields). Keys, as in a
// shell's line editor:
//
//   typing        inserts at the cursor; with the text selected, replaces it
//   ← → Home End  move (Ctrl+A / Ctrl+E too); the first one drops the selection
//   Backspace     deletes before the cursor (Delete: under it); with the text selected, all of it
//   Ctrl+U        clears the field
//   Enter         onSubmit          Esc  onCancel (the owner closes the field, and puts back what it held)
//
// `selected` starts with the text selected, for a pre-filled value the user more often replaces
// than edits (a directory, a default): the first key typed replaces it, an arrow keeps it.
// A pre-filled value may come from the server (an example body): control characters are shown as
// escapes (format.ts `safe`), each on its own, so the cursor still stands on one character.
import React from 'react';
import { Text } from 'ink';
import { safe } from '../format.ts';
import { useKeys } from '../keys.ts';

const h = React.createElement;

export interface TextFieldProps {
  value: string;
  onChange(value: string): void;
  onSubmit?(value: string): void;
  onCancel?(): void;
  /** Whether the field has the keyboard (default true). */
  focus?: boolean;
  /** Shown instead of each character (passwords). */
  mask?: string;
  /** Shown, dimmed, while the field is empty. */
  placeholder?: string;
  /** Start with the value selected. */
  selected?: boolean;
}

interface Edit {
  cursor: number;
  selected: boolean;
  /** The value this cursor belongs to: a value set from outside puts the cursor at its end. */
  of: string;
}

export function TextField(props: TextFieldProps): React.ReactElement {
  const { value, focus = true } = props;
  const [edit, setEdit] = React.useState<Edit>({ cursor: value.length, selected: Boolean(props.selected) && value.length > 0, of: value });
  const current: Edit = edit.of === value ? edit : { cursor: value.length, selected: false, of: value };

  useKeys(
    (input, key) => {
      const { cursor, selected } = current;
      const change = (text: string, at: number): void => {
        setEdit({ cursor: at, selected: false, of: text });
        if (text !== value) props.onChange(text);
      };
      const move = (at: number): void => setEdit({ cursor: Math.max(0, Math.min(value.length, at)), selected: false, of: value });
      if (key.return) props.onSubmit?.(value);
      else if (key.escape) props.onCancel?.();
      else if (key.ctrl && input === 'u') change('', 0);
      else if (key.leftArrow) move(selected ? 0 : cursor - 1);
      else if (key.rightArrow) move(selected ? value.length : cursor + 1);
      else if (key.home || (key.ctrl && input === 'a')) move(0);
      else if (key.end || (key.ctrl && input === 'e')) move(value.length);
      else if (selected && (key.backspace || key.delete)) change('', 0);
      else if (key.backspace || (key.delete && cursor === value.length)) {
        if (cursor > 0) change(value.slice(0, cursor - 1) + value.slice(cursor), cursor - 1);
      } else if (key.delete) change(value.slice(0, cursor) + value.slice(cursor + 1), cursor);
      else if (input && !key.ctrl && !key.meta && !key.tab && !key.upArrow && !key.downArrow && !key.pageUp && !key.pageDown) {
        if (selected) change(input, input.length);
        else change(value.slice(0, cursor) + input + value.slice(cursor), cursor + input.length);
      }
    },
    { isActive: focus, text: true },
  );

  const shown = props.mask ? props.mask.repeat(value.length) : value;
  if (!focus) return h(Text, null, safe(shown));
  if (shown.length === 0) {
    return h(Text, null, h(Text, { inverse: true }, ' '), props.placeholder ? h(Text, { dimColor: true }, props.placeholder) : null);
  }
  if (current.selected) return h(Text, null, h(Text, { inverse: true }, safe(shown)), ' ');
  const at = current.cursor;
  return h(Text, null, safe(shown.slice(0, at)), h(Text, { inverse: true }, safe(shown[at] ?? ' ')), safe(shown.slice(at + 1)));
}
