import { describe, expect, it } from 'vitest';
import { compilePattern, PatternSyntaxError } from '../../src/lib/safe-pattern.ts';

describe('compilePattern (RE2)', () => {
  it('searches like a JSON Schema pattern: unanchored unless anchored', () => {
    expect(compilePattern('b').test('abc')).toBe(true);
    expect(compilePattern('^b').test('abc')).toBe(false);
    expect(compilePattern('^[A-Z]{3}$').test('ABC')).toBe(true);
  });

  it('matches code points, as ECMAScript patterns with the u flag do', () => {
    expect(compilePattern('^.$').test('😀')).toBe(true);
    expect(compilePattern('^\\p{L}+$').test('héllo')).toBe(true);
  });

  it('accepts \\uXXXX and \\u{…} escapes and leaves an escaped backslash alone', () => {
    expect(compilePattern('^caf\\u00e9$').test('café')).toBe(true);
    expect(compilePattern('^\\u{1F600}$').test('😀')).toBe(true);
    expect(compilePattern('^\\\\u0041$').test('\\u0041')).toBe(true);
    expect(compilePattern('^\\\\u0041$').test('A')).toBe(false);
  });

  it('answers a catastrophic-backtracking pattern in linear time', () => {
    const pattern = compilePattern('^(a+)+$');
    expect(pattern.test(`${'a'.repeat(100_000)}!`)).toBe(false);
    expect(pattern.test('a'.repeat(100_000))).toBe(true);
  });

  it.each([
    ['([a-z', 'missing closing ]: `[a-z`'],
    ['(?=a)b', 'invalid or unsupported Perl syntax: `(?=`'],
    ['(?<!a)b', 'invalid named capture: `(?<!a)b`'],
    ['(a)\\1', 'invalid escape sequence: `\\1`'],
  ])('refuses %s: %s', (source, reason) => {
    expect(() => compilePattern(source)).toThrow(PatternSyntaxError);
    expect(() => compilePattern(source)).toThrow(reason);
  });
});

describe('patterns in record validation (ajv)', () => {
  it('keeps each pattern apart: ajv caches compiled patterns by their text', async () => {
    const { compileSchema, fieldJsonSchema } = await import('../../src/model/field-types/compile.ts');
    const upper = compileSchema(fieldJsonSchema({ type: 'string', pattern: '^[A-Z]+$' }));
    const digits = compileSchema(fieldJsonSchema({ type: 'string', pattern: '^[0-9]+$' }));
    expect([upper('ABC'), upper('123'), digits('123'), digits('ABC')]).toEqual([true, false, true, false]);
  });
});
