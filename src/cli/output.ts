import { styleText } from 'node:util';
import type { Env } from './config-store.ts';

/**
 * Everything dynctl prints goes through here. Human output is coloured on a terminal (not when
 * the stream is not a TTY, NO_COLOR is set or TERM=dumb); `--json` prints one JSON document on
 * stdout instead — the result, or `{"error": "..."}` — and keeps the one-line error on stderr.
 * Notes meant for a person (hints, "store this key now") go to stderr so stdout stays pipeable.
 */
export type Style = 'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'cyan' | 'magenta';

interface Stream {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface OutputOptions {
  json?: boolean;
  stdout?: Stream;
  stderr?: Stream;
  env?: Env;
}

export function colorEnabled(stream: Stream, env: Env): boolean {
  return Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';
}

export class Output {
  readonly json: boolean;
  private readonly stdout: Stream;
  private readonly stderr: Stream;
  private readonly colorOut: boolean;
  private readonly colorErr: boolean;

  constructor(options: OutputOptions = {}) {
    const env = options.env ?? process.env;
    this.json = options.json ?? false;
    this.stdout = options.stdout ?? process.stdout;
    this.stderr = options.stderr ?? process.stderr;
    this.colorOut = colorEnabled(this.stdout, env);
    this.colorErr = colorEnabled(this.stderr, env);
  }

  /** `text` in a style, for stdout (or stderr with `toStderr`), when colours are on. */
  paint(style: Style | Style[], text: string, toStderr = false): string {
    return (toStderr ? this.colorErr : this.colorOut) ? styleText(style, text, { validateStream: false }) : text;
  }

  /** With --json prints `data`; otherwise runs `human`, which prints the person's version. */
  result(data: unknown, human: () => void): void {
    if (this.json) this.printJson(data);
    else human();
  }

  printJson(data: unknown): void {
    this.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
  }

  line(text = ''): void {
    this.stdout.write(`${terminalSafe(text)}\n`);
  }

  /** A remark for a person, on stderr; silent with --json. */
  note(text: string): void {
    if (!this.json) this.stderr.write(`${terminalSafe(text)}\n`);
  }

  success(text: string): void {
    this.line(`${this.paint('green', '✓')} ${text}`);
  }

  /** One line on stderr (and `{"error"}` on stdout with --json). Never a stack trace. */
  error(message: string, options: { resultPrinted?: boolean } = {}): void {
    if (this.json && !options.resultPrinted) this.stdout.write(`${JSON.stringify({ error: message })}\n`);
    this.stderr.write(`${this.paint('red', 'dynctl: error:', true)} ${terminalSafe(message)}\n`);
  }

  warn(message: string): void {
    this.stderr.write(`${this.paint('yellow', 'dynctl: warning:', true)} ${terminalSafe(message)}\n`);
  }

  /** Columns padded to the widest cell; the header in bold. `empty` when there are no rows. */
  table(headers: string[], rows: string[][], empty = '(none)'): void {
    if (rows.length === 0) {
      this.line(this.paint('dim', empty));
      return;
    }
    rows = rows.map((row) => row.map(oneLine));
    const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
    const format = (cells: string[]): string =>
      cells
        .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
        .join('  ')
        .trimEnd();
    this.line(this.paint('bold', format(headers)));
    for (const row of rows) this.line(format(row));
  }
}

/**
 * Text for a person's terminal with every control character shown as an escape (`\u001b`),
 * the invisible ones too (see oneLine), except line breaks, tabs and the colour codes `paint` makes (bold, dim, six colours, resets): values come from the server and
 * anyone may have written them (a login tried, a profile name), and a raw ESC there could retitle
 * the window, move the cursor or hide lines of the output.
 */
export function terminalSafe(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/\x1b\[(?:1|2|22|3[1-6]|39)m|[\x00-\x08\x0b-\x1f\x7f-\x9f]|[\u061c\u200b\u200e\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]/g, (match) =>
    match.length > 1 ? match : escaped(match),
  );
}

/**
 * A table cell or a value inside a line: on one line, every control character (line breaks too)
 * shown as an escape. So are the invisible ones that reorder or hide text (bidi overrides and
 * isolates, direction marks, zero-width space, word joiner, byte-order mark), with which a login
 * or a name could be made to read as another; the zero-width joiner and non-joiner stay, as
 * scripts and emoji need them.
 */
export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\x00-\x1f\x7f-\x9f]|[\u061c\u200b\u200e\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]/g, escaped);
}

function escaped(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * `2026-11-21T07:27:14.123Z` → `2026-11-21 07:27:14 UTC`: the zone is always said, so a date
 * read on a laptop in another zone is not taken for local time. `-` for nothing.
 */
export function shortDate(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  const text = String(value);
  const at = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isFinite(at) ? `${new Date(at).toISOString().slice(0, 19).replace('T', ' ')} UTC` : text;
}
