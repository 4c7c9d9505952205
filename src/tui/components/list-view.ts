// A list with a cursor: arrows or j/k move, PgUp/PgDn and g/G jump, Enter opens. It shows the
// window of rows that fits `height` around the cursor, so a long list never scrolls the terminal.
// Its lines are server text: whatever `render` gives is made safe (format.ts) once more here.
import React from 'react';
import { Box, Text } from 'ink';
import { safe } from '../format.ts';
import { useKeys } from '../keys.ts';

const h = React.createElement;

export interface ListProps<T> {
  items: readonly T[];
  /** One line per item, already fitted to the width (see format.ts `row`). */
  render(item: T, index: number): string;
  /** The header line above the rows. */
  header?: string;
  height: number;
  active: boolean;
  onOpen?(item: T, index: number): void;
  /** Called as the cursor moves, with the item under it. */
  onCursor?(item: T | undefined, index: number): void;
  /** Where the cursor starts (a list shown again after a detail keeps its place). */
  initialCursor?: number;
  /** Colour of an item's line. */
  color?(item: T): string | undefined;
  empty?: string;
}

export function ListView<T>(props: ListProps<T>): React.ReactElement {
  const { items, height, active } = props;
  const [cursor, setCursor] = React.useState(props.initialCursor ?? 0);
  const last = Math.max(0, items.length - 1);
  const at = Math.min(cursor, last);
  const rows = Math.max(1, height - (props.header ? 1 : 0));

  const move = (to: number): void => {
    const next = Math.max(0, Math.min(last, to));
    setCursor(next);
    props.onCursor?.(items[next], next);
  };

  useKeys(
    (input, key) => {
      if (key.downArrow || input === 'j') move(at + 1);
      else if (key.upArrow || input === 'k') move(at - 1);
      else if (key.pageDown) move(at + rows);
      else if (key.pageUp) move(at - rows);
      else if (input === 'g') move(0);
      else if (input === 'G') move(last);
      else if (key.return && items[at] !== undefined) props.onOpen?.(items[at] as T, at);
    },
    { isActive: active },
  );

  React.useEffect(() => {
    props.onCursor?.(items[at], at);
    // Only when the list itself changes (a reload): moving reports through `move`.
  }, [items]);

  const start = Math.max(0, Math.min(at - Math.floor(rows / 2), items.length - rows));
  const visible = items.slice(start, start + rows);
  return h(
    Box,
    { flexDirection: 'column' },
    props.header ? h(Text, { bold: true, wrap: 'truncate' }, safe(props.header)) : null,
    items.length === 0 ? h(Text, { dimColor: true }, safe(props.empty ?? '(nothing here)')) : null,
    ...visible.map((item, offset) => {
      const index = start + offset;
      const selected = index === at;
      return h(Text, { key: index, inverse: selected, color: props.color?.(item), wrap: 'truncate' }, `${selected ? '›' : ' '}${safe(props.render(item, index))}`);
    }),
  );
}
