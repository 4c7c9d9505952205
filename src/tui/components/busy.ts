// The one spinner line: what is under way, and how to stop it.
import React from 'react';
import { Text } from 'ink';
import Spinner from 'ink-spinner';
import { safe } from '../format.ts';
import { tone } from '../theme.ts';

const h = React.createElement;

export function Busy({ label }: { label: string }): React.ReactElement {
  return h(Text, null, h(Text, { color: tone('cyan') }, h(Spinner, { type: 'dots' })), ` ${safe(label)}… `, h(Text, { dimColor: true }, '(Esc to cancel)'));
}
