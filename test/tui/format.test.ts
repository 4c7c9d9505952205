import { describe, expect, it } from 'vitest';
import { cell, clip, jsonLines, row, safe, sparkline, when } from '../../src/tui/format.ts';
import { planLines } from '../../src/tui/screens/project.ts';

describe('tui text helpers', () => {
  it.each([
    { name: 'all zero is a flat line', values: [0, 0, 0], expected: '▁▁▁' },
    { name: 'scaled to the series maximum', values: [0, 4, 8], expected: '▁▅█' },
    { name: 'one busy day', values: [0, 0, 0, 0, 0, 0, 3], expected: '▁▁▁▁▁▁█' },
  ])('sparkline: $name', ({ values, expected }) => {
    expect(sparkline(values)).toBe(expected);
  });

  it('fits cells to their width with an ellipsis and lets the flex column take the rest', () => {
    expect(cell('abcdef', 4)).toBe('abc…');
    expect(cell('ab', 4)).toBe('ab  ');
    expect(cell('a\nb', 3)).toBe('a b');
    const line = row([{ text: 'GET', width: 6 }, { text: '/api/a-very-long-path/that/goes/on', width: 'flex' }, { text: '12', width: 5 }], 30);
    expect(line.length).toBeLessThanOrEqual(30);
    expect(line).toMatch(/^GET {4}\/api\/a-very-lo.*… 12$/);
  });

  it.each([
    { name: 'an OSC title', text: 'a\u001b]0;x\u0007b', expected: String.raw`a\u001b]0;x\u0007b` },
    { name: 'a C1 CSI', text: 'a\u009b2Jb', expected: String.raw`a\u009b2Jb` },
    { name: 'a carriage return and a line break', text: 'a\rb\nc', expected: String.raw`a\u000db\u000ac` },
    { name: 'DEL and NUL', text: '\u007f\u0000', expected: String.raw`\u007f\u0000` },
    { name: 'a right-to-left override (text that reads as other text)', text: 'admin\u202eexe.txt', expected: String.raw`admin\u202eexe.txt` },
    { name: 'isolates, direction marks and a line separator', text: '\u2066a\u2069\u200f\u061c\u2028', expected: String.raw`\u2066a\u2069\u200f\u061c\u2028` },
    { name: 'a zero-width space, a word joiner and a byte-order mark', text: 'ad\u200bmin\u2060\ufeff', expected: String.raw`ad\u200bmin\u2060\ufeff` },
    { name: 'an emoji sequence with zero-width joiners, unchanged', text: '👩\u200d💻', expected: '👩\u200d💻' },
    { name: 'plain text, unchanged', text: 'Dune — €9.50', expected: 'Dune — €9.50' },
  ])('safe: shows $name as escapes', ({ text, expected }) => {
    expect(safe(text)).toBe(expected);
  });

  it('escapes control characters in cells, clipped lines and JSON lines, before they are cut to width', () => {
    expect(cell('a\u001b[2Jb', 12)).toBe(String.raw`a\u001b[2Jb `);
    expect(cell('a\u001b[2Jb', 4)).toBe(String.raw`a\u…`);
    expect(clip('\u009bx', 20)).toBe(String.raw`\u009bx`);
    // JSON escapes C0 characters itself but leaves C1 ones raw; a text body keeps its line breaks.
    expect(jsonLines({ t: 'a\u009b2J\u001b' })).toEqual(['{', String.raw`  "t": "a\u009b2J\u001b"`, '}']);
    expect(jsonLines('one\r\ntwo\u0007')).toEqual(['one', String.raw`two\u0007`]);
  });

  it('shows dates in UTC without the T and — for none', () => {
    expect(when('2026-11-24T18:40:47.123Z')).toBe('2026-11-24 18:40:47');
    expect(when(null)).toBe('—');
  });

  it('lays out a plan like dynctl diff: + create, ~ update with its fields, - delete', () => {
    const lines = planLines([
      { kind: 'group', key: 'shop', action: 'create' },
      { kind: 'endpoint', key: 'GET /api/x', action: 'update', fields: [{ field: 'description', from: '', to: 'X' }] },
      { kind: 'endpoint', key: 'GET /api/y', action: 'delete' },
    ]);
    expect(lines.map((line) => line.text)).toEqual(['+ group shop', '~ endpoint GET /api/x', '    description: "" → "X"', '- endpoint GET /api/y']);
    expect(lines.map((line) => line.action)).toEqual(['create', 'update', 'update', 'delete']);
  });

  it('names groups as written in the bundle and shows which schema field changed, as dynctl diff does', () => {
    const bundle = { groups: [{ name: 'Shop' }], endpoints: [] } as never;
    const schemaBefore = { name: { type: 'string', required: true, description: 'The product name shown in the shop' }, slug: { type: 'string' } };
    const schemaAfter = { name: { type: 'string', required: true, description: 'The product name shown in the shop' } };
    const lines = planLines(
      [
        { kind: 'group', key: 'shop', action: 'create' },
        { kind: 'endpoint', key: 'POST /api/shop/products', action: 'update', fields: [{ field: 'schema', from: schemaBefore, to: schemaAfter }] },
      ],
      bundle,
    );
    expect(lines.map((line) => line.text)).toEqual(['+ group Shop', '~ endpoint POST /api/shop/products', '    schema.slug: {"type":"string"} → (unset)']);
  });
});
