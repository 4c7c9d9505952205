// Pure text helpers for the TUI: fitting cells into columns, sparklines, dates, JSON as lines.
// No React here, so each can be tested as a function.
//
// Ink prints text as it is given, and most of what the screens show was written by someone else
// (a user's name, a record, a log message): a raw ESC there could retitle the terminal, clear it
// or forge lines. So every helper here that takes text shows its control characters as escapes
// (`\u001b`, as dynctl does), and a screen puts any other server text through `safe`.
import { oneLine } from '../cli/output.ts';

const BARS = '▁▂▃▄▅▆▇█';

/** Text from the server for one line of the screen: every control character, line breaks too, shown as an escape. */
export function safe(text: string): string {
  return oneLine(text);
}

/** A seven-day (or any) series as one character per value, scaled to the series' own maximum. */
export function sparkline(values: readonly number[]): string {
  const max = Math.max(0, ...values);
  if (max === 0) return values.map(() => BARS[0]).join('');
  return values.map((value) => BARS[Math.min(BARS.length - 1, Math.round((value / max) * (BARS.length - 1)))]).join('');
}

/** `text` cut to `width` characters with an ellipsis, or padded with spaces to exactly `width`. */
export function cell(text: string, width: number): string {
  if (width <= 0) return '';
  const flat = safe(text.replace(/\s+/g, ' '));
  if (flat.length > width) return width === 1 ? '…' : `${flat.slice(0, width - 1)}…`;
  return flat.padEnd(width);
}

/** Cuts a line to `width` (no padding). */
export function clip(text: string, width: number): string {
  const line = safe(text);
  return line.length > width ? `${line.slice(0, Math.max(0, width - 1))}…` : line;
}

/** Columns laid out in `width`: fixed widths as given, the `flex` one takes what is left. */
export function row(cells: ReadonlyArray<{ text: string; width: number | 'flex' }>, width: number): string {
  const fixed = cells.reduce((sum, c) => sum + (c.width === 'flex' ? 0 : c.width + 1), 0);
  const flex = Math.max(4, width - fixed - 1);
  return cells.map((c) => cell(c.text, c.width === 'flex' ? flex : c.width)).join(' ').trimEnd();
}

/** `2026-11-24 18:40:47` (UTC, as dynctl shows dates); '—' for none. */
export function when(value: string | Date | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return safe(String(value));
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

/**
 * A value as indented JSON lines (for bodies, records and schemas); a text body as its own lines.
 * JSON escapes C0 characters in strings but not C1 ones (`\u009b` is a CSI), so each line is made safe.
 */
export function jsonLines(value: unknown): string[] {
  if (value === undefined) return ['(no body)'];
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return text.split(/\r?\n/).map(safe);
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
