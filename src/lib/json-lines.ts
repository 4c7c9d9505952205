// Lines of a byte stream (JSON Lines, `\n` or `\r\n`), one at a time, for bodies of any size: only
// the line being read is held, and a line longer than `maxLineBytes` stops the read before it is
// buffered whole. Blank lines are skipped (numbers still count them, so errors name the file's line).
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { AppError } from './errors.ts';

export interface Line {
  /** 1-based, as an editor shows it. */
  number: number;
  text: string;
  /** Bytes of the stream read up to the end of this line. */
  bytes: number;
}

export async function* readLines(source: AsyncIterable<Buffer | Uint8Array | string> | Iterable<Buffer | Uint8Array | string>, maxLineBytes: number): AsyncGenerator<Line> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let number = 0;
  let bytes = 0;
  const take = (tail: Buffer): string => {
    const whole = pending.length === 0 ? tail : Buffer.concat([...pending, tail]);
    pending = [];
    pendingBytes = 0;
    const end = whole.length > 0 && whole[whole.length - 1] === 0x0d ? whole.length - 1 : whole.length;
    return whole.toString('utf8', 0, end);
  };
  const tooLong = (): AppError => new AppError(413, `Line ${number + 1} is longer than the limit of ${maxLineBytes} bytes`, { details: [{ field: `line ${number + 1}`, message: `is longer than ${maxLineBytes} bytes` }] });
  for await (const chunk of source) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    for (;;) {
      const newline = buffer.indexOf(0x0a, start);
      if (newline === -1) break;
      if (pendingBytes + newline - start > maxLineBytes) throw tooLong();
      const text = take(buffer.subarray(start, newline));
      bytes += newline + 1 - start;
      number++;
      start = newline + 1;
      if (text.trim() !== '') yield { number, text, bytes };
    }
    const rest = buffer.subarray(start);
    if (rest.length > 0) {
      pendingBytes += rest.length;
      if (pendingBytes > maxLineBytes) throw tooLong();
      // Copied: the source may reuse its buffer for the next chunk.
      pending.push(Buffer.from(rest));
      bytes += rest.length;
    }
  }
  if (pendingBytes > 0) {
    const text = take(Buffer.alloc(0));
    number++;
    if (text.trim() !== '') yield { number, text, bytes };
  }
}

/** The last line of a JSON Lines file, read from its last 4 kB (an export's end line is short). */
export function lastLineOf(file: string): string {
  const size = statSync(file).size;
  const length = Math.min(size, 4096);
  const buffer = Buffer.alloc(length);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buffer, 0, length, size - length);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8').trimEnd().split('\n').at(-1) ?? '';
}
