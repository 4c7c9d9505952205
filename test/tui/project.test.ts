import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/server-process.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { KEY, renderTui } from '../helpers/tui.ts';

const CTRL_U = '\u0015';

const VALID = join(ROOT, 'test/fixtures/projects/valid');
const BAD = join(ROOT, 'test/fixtures/projects/bad-field-type');

let server: TestServer;
beforeAll(async () => {
  // The fixture's network rule is a `${env:OFFICE_RANGE}` placeholder, resolved by the server.
  process.env.OFFICE_RANGE = '10.0.0.0/8';
  server = await startTestServer({ PLACEHOLDER_ENV_PREFIX: 'OFFICE_' });
  // …and its orders endpoint admits the user group Customers.
  const token = await server.adminToken();
  expect((await server.api('POST', '/api/groups', { token, body: { name: 'Customers', permissions: [] } })).status).toBe(201);
});
afterAll(async () => {
  delete process.env.OFFICE_RANGE;
  await server.close();
});

describe('dynctl tui: project', () => {
  // First: the test after it applies the fixture, and a plan of nothing to do is short.
  it('scrolls a plan taller than the terminal with j/k, PgDn/PgUp and g/G, never past its ends', async () => {
    const tui = await renderTui(server, { screen: 'project', projectDir: VALID, size: { rows: 10, columns: 80 } });
    try {
      await tui.waitFor('Server dir');
      await tui.press('p');
      const top = await tui.waitFor(/lines 1-(\d+) of (\d+)/, 30_000);
      const [, shown, all] = /lines 1-(\d+) of (\d+)/.exec(top)!.map(Number);
      const lastTop = all! - shown! + 1;
      await tui.press('G');
      const end = await tui.waitFor(`lines ${lastTop}-${all} of ${all}`);
      expect(end).toContain('Plan: 5 to create');
      // At the end, j stays there and one k goes up one line.
      await tui.press('j', 'j', 'k');
      await tui.waitFor(`lines ${lastTop - 1}-${all! - 1} of ${all}`);
      await tui.press('g');
      await tui.waitFor(`lines 1-${shown} of ${all}`);
      await tui.press('\u001B[6~');
      await tui.waitFor(`lines ${Math.min(lastTop, shown! + 1)}-`);
    } finally {
      tui.unmount();
    }
  }, 60_000);

  it('shows the server directory status, plans a local directory like dynctl diff and applies it after y', async () => {
    const tui = await renderTui(server, { screen: 'project', projectDir: VALID });
    try {
      const status = await tui.waitFor('Server dir');
      expect(status).toContain('Last sync');
      expect(status).toContain(`Local dir  ${VALID.slice(0, 60)}`);
      await tui.press('p');
      const plan = await tui.waitFor('Plan: 5 to create, 0 to update, 0 to delete.', 30_000);
      expect(plan).toContain('+ group');
      expect(plan).toMatch(/\+ endpoint GET \/api\//);
      await tui.press('a');
      // The question names the server; a long directory is shortened in the middle, never the end.
      await tui.waitFor(`${server.url}? [y/N]`);
      await tui.press('y');
      await tui.waitFor('✓ applied: 5 created, 0 updated, 0 deleted', 30_000);
      await tui.press('p');
      await tui.waitFor('No differences: apply would change nothing', 30_000);
    } finally {
      tui.unmount();
    }
  }, 120_000);

  it('changes the local directory with e: typing replaces it, Ctrl+U clears, Esc keeps the one before', async () => {
    const tui = await renderTui(server, { screen: 'project', projectDir: './project' });
    try {
      await tui.waitFor('Local dir  ./project');
      await tui.press('e');
      await tui.waitFor('Ctrl+U: clear');
      await tui.type('/tmp/x/proj2');
      await tui.press(KEY.enter);
      await tui.waitFor(/Local dir {2}\/tmp\/x\/proj2 *$/m);
      await tui.press('e');
      await tui.waitFor('Ctrl+U: clear');
      await tui.press(CTRL_U);
      await tui.waitFor(/Local dir *$/m);
      await tui.type('/elsewhere');
      await tui.waitFor('Local dir  /elsewhere');
      await tui.press(KEY.escape);
      const kept = await tui.waitFor(/Local dir {2}\/tmp\/x\/proj2 *$/m);
      expect(kept).not.toContain('elsewhere');
      expect(kept).not.toContain('Ctrl+U: clear');
    } finally {
      tui.unmount();
    }
  });

  it('lists the problems of a local directory with file and line and sends nothing', async () => {
    const tui = await renderTui(server, { screen: 'project', projectDir: BAD });
    try {
      await tui.waitFor('Server dir');
      await tui.press('p');
      const frame = await tui.waitFor('1 problem(s), nothing is sent:', 30_000);
      expect(frame).toContain('  endpoints/items.yaml:9: schema.price.type must be one of');
      expect(frame).not.toContain('Plan:');
      await tui.press('a');
      await tui.waitFor('fix the problems first: nothing is sent');
    } finally {
      tui.unmount();
    }
  });

  it("drops a plan once the directory changes: a applies only the plan of the directory shown", async () => {
    const tui = await renderTui(server, { screen: 'project', projectDir: BAD });
    try {
      await tui.waitFor('Server dir');
      await tui.press('a');
      await tui.waitFor(`plan ${BAD} first (p)`);
      await tui.press('p');
      await tui.waitFor('1 problem(s), nothing is sent:', 30_000);
      await tui.press('e');
      await tui.waitFor('Ctrl+U: clear');
      await tui.type('/tmp/elsewhere-proj');
      await tui.press(KEY.enter);
      const frame = await tui.waitFor(/Local dir {2}\/tmp\/elsewhere-proj *$/m);
      expect(frame).not.toContain('problem(s)');
      await tui.press('a');
      const refused = await tui.waitFor('plan /tmp/elsewhere-proj first (p)');
      expect(refused).not.toContain('[y/N]');
    } finally {
      tui.unmount();
    }
  });
});
