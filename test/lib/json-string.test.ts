import { describe, expect, it } from 'vitest';
import { jsonString } from '../../src/lib/json-string.ts';

describe('jsonString', () => {
  it('writes what JSON.stringify writes for any string', () => {
    const samples = [
      '',
      'plain',
      '6b096eb4ae5ea32175c36a79',
      '2026-11-27T11:51:16.761Z',
      '/api/bench/items/1',
      'GET /api/x → 200',
      'quote " and backslash \\',
      'controls \u0000 \u0001 \b \t \n \f \r \u001f',
      'not escaped: \u007f \u2028 \u2029 é 世界',
      'a pair 🎉 and lone \ud800 \udc00 ends \ud83d',
      '\udfff\ud800',
    ];
    for (const text of samples) expect(jsonString(text), JSON.stringify(text)).toBe(JSON.stringify(text));
  });

  it('agrees with JSON.stringify on random strings of every code unit class', () => {
    // Deterministic: a 32-bit linear congruential generator (its high bits), so a failure repeats.
    let seed = 12345;
    const next = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed >>> 16;
    };
    const units = [0x00, 0x1f, 0x20, 0x22, 0x5c, 0x41, 0x7f, 0xe9, 0x2028, 0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xe000, 0xffff];
    for (let i = 0; i < 2000; i++) {
      const length = next() % 12;
      const text = String.fromCharCode(...Array.from({ length }, () => (next() % 3 === 0 ? (units[next() % units.length] as number) : 0x61 + (next() % 26))));
      expect(jsonString(text)).toBe(JSON.stringify(text));
    }
  });
});
