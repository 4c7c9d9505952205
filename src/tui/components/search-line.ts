// The `/` search field of a list: while it is open it has the keyboard (global keys off);
// Enter keeps the filter, Esc clears it.
import React from 'react';
import { Box, Text } from 'ink';
import { safe } from '../format.ts';
import { useCapture, useSession } from '../session.ts';
import { tone } from '../theme.ts';
import { TextField } from './text-field.ts';

const h = React.createElement;

export function SearchLine(props: { label?: string; value: string; editing: boolean; onChange(value: string): void; onDone(): void }): React.ReactElement | null {
  const session = useSession();
  useCapture(props.editing);
  const clear = (): void => {
    props.onChange('');
    props.onDone();
  };
  if (!props.editing && !props.value) return null;
  return h(
    Box,
    null,
    h(Text, { color: tone('cyan') }, `${props.label ?? '/'} `),
    props.editing ? h(TextField, { focus: !session.overlay, value: props.value, onChange: props.onChange, onSubmit: props.onDone, onCancel: clear }) : h(Text, null, safe(props.value), h(Text, { dimColor: true }, '  (/ to change)')),
  );
}
