// Lines taller than the room for them (a record, a response body, a log entry): ↑↓/j/k scroll a
// line, PgUp/PgDn (and space) a page, g/G go to the top and the end. A last line says where the
// window is, so nothing is cut off without a word. Lines are made safe (format.ts) here.
import React from 'react';
import { Box, Text } from 'ink';
import { safe } from '../format.ts';
import { useKeys } from '../keys.ts';

const h = React.createElement;

export interface TextViewProps {
  lines: readonly string[];
  /** Rows to use, the position line included when the lines do not fit. */
  height: number;
  active: boolean;
}

export function TextView({ lines, height, active }: TextViewProps): React.ReactElement {
  const fits = lines.length <= height;
  const room = fits ? lines.length : Math.max(1, height - 1);
  const last = Math.max(0, lines.length - room);
  const [top, setTop] = React.useState(0);
  const at = Math.min(top, last);
  useKeys(
    (input, key) => {
      if (key.downArrow || input === 'j') setTop(Math.min(last, at + 1));
      else if (key.upArrow || input === 'k') setTop(Math.max(0, at - 1));
      else if (key.pageDown || input === ' ') setTop(Math.min(last, at + room));
      else if (key.pageUp) setTop(Math.max(0, at - room));
      else if (input === 'g') setTop(0);
      else if (input === 'G') setTop(last);
    },
    { isActive: active && !fits },
  );
  return h(
    Box,
    { flexDirection: 'column' },
    ...lines.slice(at, at + room).map((line, index) => h(Text, { key: index, wrap: 'truncate' }, safe(line))),
    fits ? null : h(Text, { key: 'where', dimColor: true, wrap: 'truncate' }, `lines ${at + 1}–${at + room} of ${lines.length}  ↑↓ PgUp/PgDn g/G scroll`),
  );
}
