// "Really?" for destructive actions: y confirms, anything else (n, Esc) does not.
import React from 'react';
import { Box, Text } from 'ink';
import { safe } from '../format.ts';
import { useKeys } from '../keys.ts';
import { useSession } from '../session.ts';
import { tone } from '../theme.ts';

const h = React.createElement;

export function Confirm({ question, onAnswer }: { question: string; onAnswer(yes: boolean): void }): React.ReactElement {
  const session = useSession();
  useKeys((input) => onAnswer(input === 'y' || input === 'Y'), { isActive: !session.overlay });
  // A long question (a deep directory, a long server address) is shortened in the middle, so
  // its end and the [y/N] that says a key is awaited stay on screen.
  return h(
    Box,
    null,
    h(Text, { color: tone('yellow'), bold: true, wrap: 'truncate-middle' }, safe(question)),
    h(Box, { flexShrink: 0 }, h(Text, { color: tone('yellow'), bold: true }, ' [y/N]')),
  );
}
