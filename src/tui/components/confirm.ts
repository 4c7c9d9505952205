// "Really?" for destructive actions: y confirms, anything else (n, Esc) does not.
import React from 'react';
import { Text, useInput } from 'ink';
import { tone } from '../theme.ts';

const h = React.createElement;

export function Confirm({ question, onAnswer }: { question: string; onAnswer(yes: boolean): void }): React.ReactElement {
  useInput((input) => onAnswer(input === 'y' || input === 'Y'));
  return h(Text, { color: tone('yellow'), bold: true, wrap: 'truncate' }, `${question} [y/N]`);
}
