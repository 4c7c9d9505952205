import { describe, expect, it } from 'vitest';
import { readLines, type Line } from '../../src/lib/json-lines.ts';

async function all(chunks: string[], max = 100): Promise<Line[]> {
  const out: Line[] = [];
  for await (const line of readLines(chunks.map((chunk) => Buffer.from(chunk)), max)) out.push(line);
  return out;
}

describe('readLines', () => {
  it('splits lines across chunks, drops \\r before \\n and skips blank lines (still counting them)', async () => {
    expect(await all(['{"a":', '1}\r\n\n{"b"', ':2}\n', '{"c":3}'])).toEqual([
      { number: 1, text: '{"a":1}', bytes: 9 },
      { number: 3, text: '{"b":2}', bytes: 18 },
      { number: 4, text: '{"c":3}', bytes: 25 },
    ]);
  });

  it('keeps a character whose bytes are split between chunks', async () => {
    const bytes = Buffer.from('"é"\n');
    const lines = [];
    for await (const line of readLines([bytes.subarray(0, 2), bytes.subarray(2)], 100)) lines.push(line.text);
    expect(lines).toEqual(['"é"']);
  });

  it('refuses a line longer than the limit with a 413 naming it, before buffering it whole', async () => {
    await expect(all(['ok\n', 'x'.repeat(60), 'x'.repeat(60)])).rejects.toMatchObject({ status: 413, message: 'Line 2 is longer than the limit of 100 bytes' });
    await expect(all([`ok\n${'y'.repeat(101)}\n`])).rejects.toMatchObject({ status: 413 });
  });
});
