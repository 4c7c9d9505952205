import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { KEY, renderTui } from '../helpers/tui.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

describe('dynctl tui: frame and dashboard', () => {
  it('opens on the dashboard with the counts, sparklines and automation health', async () => {
    const tui = await renderTui(server);
    try {
      const frame = await tui.waitFor('Automation health');
      expect(frame).toContain('as admin');
      expect(frame).toContain('1:dashboard');
      expect(frame).toMatch(/Users 1 {3}Endpoints \d+ \(\d+ system\) {3}Requests/);
      expect(frame).toMatch(/logins {6}▁▁▁▁▁▁█ +1 +1/);
      expect(frame).toContain('failed cron jobs   0');
      // Every line fits an 80-column terminal.
      for (const line of frame.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    } finally {
      tui.unmount();
    }
  });

  it('with no stored session opens on the login form, and once signed in shows the screen', async () => {
    const tui = await renderTui(server, { anonymous: true });
    try {
      await tui.waitFor('Sign in (');
      await tui.type('admin');
      await tui.press(KEY.enter);
      await tui.type(ADMIN_PASSWORD);
      const masked = tui.frame();
      expect(masked).not.toContain(ADMIN_PASSWORD);
      await tui.press(KEY.enter);
      const frame = await tui.waitFor('Automation health');
      expect(frame).toContain('as admin');
      expect(frame).not.toContain('not logged in');
    } finally {
      tui.unmount();
    }
  });

  it('switches screens with number keys and with the palette, and shows the help on ?', async () => {
    const tui = await renderTui(server);
    try {
      await tui.waitFor('Automation health');
      await tui.press('2');
      await tui.waitFor('METHOD PATH');
      await tui.press(':');
      await tui.type('da');
      await tui.press(KEY.tab);
      await tui.waitFor(':dashboard');
      await tui.press(KEY.enter);
      await tui.waitFor('Automation health');
      await tui.press('?');
      const help = await tui.waitFor('Keys');
      expect(help).toContain('q          quit');
      expect(help).toContain('8 project');
      await tui.press('x');
      await tui.waitFor('Automation health');
    } finally {
      tui.unmount();
    }
  });

  it('shows a banner while the server is unreachable, retries, and when it is back with the session gone asks for the password and keeps the screen', async () => {
    const other = await startTestServer();
    const port = new URL(other.url).port;
    const tui = await renderTui(other, { screen: 'endpoints' });
    let again: TestServer | undefined;
    try {
      await tui.waitFor('METHOD PATH');
      await tui.press('/');
      await tui.type('health');
      await tui.press(KEY.enter);
      await tui.waitFor('1 of 6');
      await other.close();
      await tui.press('r');
      await tui.waitFor('⚠ server unreachable, retrying every 3 s: connection refused (ECONNREFUSED)');
      // Back on the same port and store, but with new token secrets: the session is gone.
      again = await startTestServer({ PORT: port }, other.dataDir);
      const prompt = await tui.waitFor('Your session has ended: sign in again', 20_000);
      expect(prompt).not.toContain('unreachable');
      expect(prompt).toContain('Login:    admin');
      await tui.type(ADMIN_PASSWORD);
      await tui.press(KEY.enter);
      // The screen under the prompt was kept, search and all, and its call ran again.
      const back = await tui.waitFor(/^(?![\s\S]*session has ended)[\s\S]*\/api\/health/, 20_000);
      expect(back).toContain('/ health');
      expect(back).toContain('1 of 6');
    } finally {
      tui.unmount();
      await again?.close();
    }
  });
});
