// The `/` search field of a list: while it is open it has the keyboard (global keys off);
// Enter keeps the filter, Esc clears it.
import React from 'react';
import { Box, Text, useInput } from 'ink';
import TextInput from 'ink-text-input';
import { useCapture, useSession } from '../session.ts';
import { tone } from '../theme.ts';

const h = React.createElement;

export function SearchLine(props: { label?: string; value: string; editing: boolean; onChange(value: string): void; onDone(): void }): React.ReactElement | null {
  const session = useSession();
  useCapture(props.editing);
  useInput(
    (_input, key) => {
      if (key.escape) {
        props.onChange('');
        props.onDone();
      }
    },
    { isActive: props.editing && !session.overlay },
  );
  if (!props.editing && !props.value) return null;
  return h(
    Box,
    null,
    h(Text, { color: tone('cyan') }, `${props.label ?? '/'} `),
    props.editing ? h(TextInput, { focus: !session.overlay, value: props.value, onChange: props.onChange, onSubmit: props.onDone }) : h(Text, null, props.value, h(Text, { dimColor: true }, '  (/ to change)')),
  );
}
