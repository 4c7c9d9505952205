import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { KEY, renderTui } from '../helpers/tui.ts';

/**
 * Text the server hands back was written by someone else — a user's name, a record, a login
 * someone tried — and the TUI prints it into the admin's terminal. A control character in it is
 * shown as an escape (`\u001b`), never sent to the terminal, where it could retitle the window
 * (OSC `ESC ] 0 ;`), clear the screen (CSI, also the one-byte C1 `\u009b`) or forge lines.
 */
const OSC_TITLE = '\u001b]0;x\u0007';
const SHOWN = String.raw`\u001b]0;x\u0007`;
const C1_CLEAR = '\u009b2J';
const SIZE = { rows: 30, columns: 120 };

/** The frame has no control character but line breaks (ink-testing-library draws without colour). */
function expectNoControlCharacters(frame: string): void {
  // eslint-disable-next-line no-control-regex -- looking for control characters is the point
  expect(frame.replace(/\n/g, '')).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
}

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer();
  token = await server.adminToken();
  expect((await server.api('POST', '/api/users', { token, body: { login: 'mallory', password: 'mallory-password-1', name: `M${OSC_TITLE}` } })).status).toBe(201);
  const notes = { name: `N${OSC_TITLE}`, path: '/api/notes', method: 'POST', accessType: 'public', schema: { text: { type: 'string' } } };
  expect((await server.api('POST', '/api/endpoints', { token, body: notes })).status).toBe(201);
  expect((await server.api('POST', '/api/notes', { body: { text: `a${C1_CLEAR}b` } })).status).toBe(201);
  const job = { name: 'noisy', schedule: '0 3 * * *', action: { type: 'javascript', code: 'async function run() { throw new Error("boom\\u001b]0;x\\u0007") }' } };
  expect((await server.api('POST', '/api/cron', { token, body: job })).status).toBe(201);
});
afterAll(async () => {
  await server.close();
});

describe('dynctl tui: text from the server is shown with its control characters escaped', () => {
  it("shows a user's name with an OSC sequence as \\u001b…\\u0007 in the users list", async () => {
    const tui = await renderTui(server, { screen: 'users', size: SIZE });
    try {
      const frame = await tui.waitFor('mallory');
      expect(frame).toMatch(new RegExp(String.raw`mallory +M\\u001b\]0;x\\u0007 +active`));
      expectNoControlCharacters(frame);
    } finally {
      tui.unmount();
    }
  });

  it("shows an endpoint's name escaped in the list and the detail, and a record's C1 CSI escaped in try-it and the records", async () => {
    const tui = await renderTui(server, { screen: 'endpoints', size: SIZE });
    try {
      const list = await tui.waitFor('/api/notes');
      expect(list).toContain(`N${SHOWN}`);
      expectNoControlCharacters(list);
      await tui.press('/');
      await tui.type('notes');
      await tui.press(KEY.enter, KEY.enter);
      const detail = await tui.waitFor('Schema (1 field)');
      expect(detail).toContain(`Name     N${SHOWN}`);
      expectNoControlCharacters(detail);

      await tui.press('d');
      const records = await tui.waitFor('1 in all');
      expect(records).toContain(String.raw`"text":"a\u009b2Jb"`);
      expectNoControlCharacters(records);
      await tui.press(KEY.enter);
      const record = await tui.waitFor('"resourcePath"');
      expect(record).toContain(String.raw`"text": "a\u009b2Jb"`);
      expectNoControlCharacters(record);

      await tui.press(KEY.escape, KEY.escape);
      await tui.waitFor('t try it');
      await tui.press('t');
      await tui.waitFor('Body:');
      await tui.press('\u0015');
      await tui.type(String.raw`{"text":"c\u009b2Jd"}`);
      await tui.press(KEY.enter);
      const tried = await tui.waitFor('Status 201');
      expect(tried).toContain(String.raw`"text": "c\u009b2Jd"`);
      expectNoControlCharacters(tried);
    } finally {
      tui.unmount();
    }
  });

  it('shows a login someone tried with an OSC sequence escaped in the log tail', async () => {
    expect((await server.api('POST', '/api/auth/login', { body: { login: `x${OSC_TITLE}`, password: 'not-the-password' } })).status).toBe(401);
    const tui = await renderTui(server, { screen: 'logs', size: SIZE });
    try {
      const frame = await tui.waitFor('login_failed');
      expect(frame).toContain(`Failed login for "x${SHOWN}"`);
      expectNoControlCharacters(frame);
    } finally {
      tui.unmount();
    }
  });

  it("shows a cron job's error escaped when it is run now", async () => {
    const tui = await renderTui(server, { screen: 'cron', size: SIZE });
    try {
      await tui.waitFor('noisy');
      await tui.press('x');
      const frame = await tui.waitFor('✗ noisy: failed in');
      expect(frame).toContain(`boom${SHOWN}`);
      expectNoControlCharacters(frame);
    } finally {
      tui.unmount();
    }
  });
});
