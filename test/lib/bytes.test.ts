import { describe, expect, it } from 'vitest';
import { parseByteSize } from '../../src/lib/bytes.ts';

describe('parseByteSize', () => {
  it.each([
    ['2048', 2048],
    ['10b', 10],
    ['512kb', 512 * 1024],
    ['1mb', 1024 ** 2],
    ['1gb', 1024 ** 3],
    ['1.5kb', 1536],
    [' 2 MB ', 2 * 1024 ** 2],
    ['1KB', 1024],
  ])('reads %j as %d bytes', (text, bytes) => {
    expect(parseByteSize(text)).toBe(bytes);
  });

  it.each(['lots', '', ' ', 'mb', '-1', '0', '0kb', '0.0001kb', '1tb', '1e3', '1 m b', '1,5mb', '0x10'])('refuses %j (null)', (text) => {
    expect(parseByteSize(text)).toBeNull();
  });
});
