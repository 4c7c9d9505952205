// "Really?" for destructive actions: y confirms, anything else (n, Esc) does not.
import React from 'react';
import { Text, useInput } from 'ink';
import { useSession } from '../session.ts';
import { tone } from '../theme.ts';

const h = React.createElement;

export function Confirm({ question, onAnswer }: { question: string; onAnswer(yes: boolean): void }): React.ReactElement {
  const session = useSession();
  useInput((input) => onAnswer(input === 'y' || input === 'Y'), { isActive: !session.overlay });
  return h(Text, { color: tone('yellow'), bold: true, wrap: 'truncate' }, `${question} [y/N]`);
}
