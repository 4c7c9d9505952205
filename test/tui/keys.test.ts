import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_KEY, splitKeys } from '../../src/tui/keys.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { KEY, renderTui } from '../helpers/tui.ts';

// Keys that arrive in one read of the terminal (key repeat, SSH, tmux send-keys): `press` writes
// each of its arguments in one write, so `press('jjjj')` is four keys in one read.

describe('splitKeys', () => {
  it.each([
    { name: 'one key stays as Ink reported it', input: 'j', expected: [['j', {}]] },
    { name: 'repeated letters are one key each', input: 'jjj', expected: [['j', {}], ['j', {}], ['j', {}]] },
    { name: 'a capital is shifted', input: 'gG', expected: [['g', {}], ['G', { shift: true }]] },
    { name: 'Enter and Tab inside a read are keys', input: 'a\r\t', expected: [['a', {}], ['', { return: true }], ['', { tab: true }]] },
    { name: 'a control character is Ctrl and its letter', input: 'ab\u0015', expected: [['a', {}], ['b', {}], ['u', { ctrl: true }]] },
  ])('$name', ({ input, expected }) => {
    const strokes = splitKeys(input, NO_KEY);
    expect(strokes.map((stroke) => stroke.input)).toEqual(expected.map(([text]) => text));
    expect(strokes.map((stroke) => stroke.key)).toEqual(expected.map(([, flags]) => ({ ...NO_KEY, ...(flags as object) })));
  });
});

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  const token = await server.adminToken();
  for (const n of [1, 2, 3, 4, 5, 6]) {
    expect((await server.api('POST', '/api/endpoints', { token, body: { name: `Item ${n}`, path: `/api/items${n}`, method: 'GET', accessType: 'public', schema: {} } })).status).toBe(201);
  }
});
afterAll(async () => {
  await server.close();
});

/** The list row under the cursor. */
const selected = (frame: string): string | undefined => /^›\S+ +(\S+)/m.exec(frame)?.[1];

describe('dynctl tui: keys that arrive together', () => {
  it('moves the list cursor once per key, letters and arrows alike', async () => {
    const tui = await renderTui(server, { screen: 'endpoints' });
    try {
      await tui.press('/');
      await tui.type('items');
      await tui.press(KEY.enter);
      const list = await tui.waitFor('6 of');
      expect(selected(list)).toBe('/api/items1');
      await tui.press('jjjj');
      expect(selected(await tui.waitFor(/^›.*items5/m))).toBe('/api/items5');
      await tui.press('kk');
      expect(selected(await tui.waitFor(/^›.*items3/m))).toBe('/api/items3');
      await tui.press(KEY.down.repeat(3));
      expect(selected(await tui.waitFor(/^›.*items6/m))).toBe('/api/items6');
      await tui.press(KEY.up + KEY.up + KEY.up + KEY.up);
      expect(selected(await tui.waitFor(/^›.*items2/m))).toBe('/api/items2');
    } finally {
      tui.unmount();
    }
  });

  it('gives the keys after one that opens a field to the field, and deletes once per Backspace', async () => {
    const tui = await renderTui(server, { screen: 'endpoints' });
    try {
      await tui.waitFor('/api/items6');
      // `/` opens the search; `items4` goes into it, not to the list or the screen keys.
      await tui.press('/items4');
      await tui.waitFor('1 of');
      expect(tui.frame()).toContain('/ items4');
      await tui.press('\u007F'.repeat(6));
      const cleared = await tui.waitFor(/^\/ *$/m);
      expect(cleared).toContain('12 of 12');
      await tui.press(`items3${KEY.enter}j`);
      const frame = await tui.waitFor(/1 of 12/);
      // Enter closed the search: `j` went to the list (one row: nothing to move), not into the search.
      expect(frame).toMatch(/\/ items3 /);
      expect(selected(frame)).toBe('/api/items3');
    } finally {
      tui.unmount();
    }
  });
});
