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
  /** Lines longer than this go on in the next rows (a long message is read whole), else they are cut. */
  wrapAt?: number;
  /** Rows to use, the position line included when the lines do not fit. */
  height: number;
  active: boolean;
}

export function TextView({ lines: given, height, active, wrapAt }: TextViewProps): React.ReactElement {
  const lines = React.useMemo(() => (wrapAt && wrapAt > 0 ? given.flatMap((line) => wrapped(safe(line), wrapAt)) : given), [given, wrapAt]);
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

/** A line in rows of at most `width` characters (code points, so no surrogate pair is split). */
function wrapped(line: string, width: number): string[] {
  const chars = [...line];
  if (chars.length <= width) return [line];
  const rows: string[] = [];
  for (let at = 0; at < chars.length; at += width) rows.push(chars.slice(at, at + width).join(''));
  return rows;
}
