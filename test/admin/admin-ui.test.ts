// The web admin in a real browser: Debian's chromium driven by playwright-core against a real
// server (the admin is built first, as `npm install` would). One browser and one page for the
// whole file, so it stays fast. Screenshots of every page go to test-results/admin/ (not
// committed). Without a chromium binary (CHROMIUM_PATH, default /usr/bin/chromium) the file is
// skipped; .ci/run installs it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, createUserWith, startTestServer, type TestServer } from '../helpers/test-server.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ROOT = join(import.meta.dirname, '..', '..');
const SHOTS = join(ROOT, 'test-results', 'admin');

const PAGES: Array<[path: string, heading: string]> = [
  ['/', 'Dashboard'],
  ['/endpoints', 'Endpoints'],
  ['/endpoint-groups', 'Endpoint groups'],
  ['/api-schema', 'API schema'],
  ['/api-docs', 'API docs'],
  ['/cron', 'Cron jobs'],
  ['/webhooks', 'Webhooks'],
  ['/api-keys', 'API keys'],
  ['/mcp', 'MCP'],
  ['/users', 'Users'],
  ['/groups', 'Groups'],
  ['/logs', 'Audit log'],
  ['/database/endpoints', 'Database'],
  ['/system', 'System'],
  ['/settings', 'Settings'],
];

describe.skipIf(!existsSync(CHROMIUM))('the web admin in Chromium', () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let projectDir: string;
  let admin: string;
  const problems: string[] = [];

  beforeAll(async () => {
    execFileSync(process.execPath, [join(ROOT, 'admin', 'build.ts')], { cwd: ROOT, stdio: 'pipe' });
    mkdirSync(SHOTS, { recursive: true });
    projectDir = mkdtempSync(join(tmpdir(), 'dyn-admin-project-'));
    t = await startTestServer({ PROJECT_DIR: projectDir, PROJECT_WATCH: 'on' });
    admin = await t.adminToken();
    browser = await chromium.launch({ executablePath: CHROMIUM });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    // Shorter than the test timeout, so a missing element fails with its locator named.
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      problems.push(`console: ${message.text()} (${message.location().url})`);
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const go = async (path: string) => {
    await page.goto(`${t.url}/admin${path === '/' ? '' : path}`);
  };
  const signIn = async (login: string, password: string) => {
    await page.getByLabel('Login', { exact: true }).fill(login);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
  };

  it('answers /admin and deep links with the app under a strict CSP, and hashed assets gzipped with a long cache', async () => {
    for (const path of ['/admin', '/admin/endpoints/abc', '/admin/settings']) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status).toBe(200);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
      const html = await res.text();
      const asset = html.match(/\/admin\/assets\/app-[\w-]+\.js/)?.[0];
      expect(asset).toBeDefined();
      const js = await fetch(`${t.url}${asset}`);
      expect(js.status).toBe(200);
      expect(js.headers.get('cache-control')).toContain('immutable');
      expect(js.headers.get('content-encoding')).toBe('gzip');
    }
    expect((await fetch(`${t.url}/admin/assets/nope-123.js`)).status).toBe(404);
  });

  it('signs in with the form and shows the dashboard', async () => {
    await go('/');
    await signIn('admin', ADMIN_PASSWORD);
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.getByText('Requests (7 days)').waitFor();
    // The endpoint count includes the platform's own definitions, and says how many those are.
    await page.getByText(/^\d+ of them system$/).waitFor();
  });

  it('shows all fifteen pages to an administrator without console errors, at 1280 and 390 pixels wide', async () => {
    problems.length = 0;
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      for (const [path, heading] of PAGES) {
        await go(path);
        await page.getByRole('heading', { name: heading, exact: true }).first().waitFor();
        await page.waitForLoadState('networkidle');
        await page.screenshot({ path: join(SHOTS, `${path.replace(/\W+/g, '-').replace(/^-|-$/g, '') || 'dashboard'}-${width}.png`) });
        // Every row action can be reached: none starts beyond the right edge of the page.
        const offScreen = await page.evaluate(`[...document.querySelectorAll('td.actions button, td.actions a')].filter((el) => el.getBoundingClientRect().left >= ${width}).map((el) => el.textContent)`);
        expect(offScreen, `${path} at ${width}`).toEqual([]);
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(problems).toEqual([]);
  }, 120_000);

  it('creates an endpoint with a reference field through the editor and calls it with Try it', async () => {
    const target = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'Authors', path: '/api/ui/authors', method: 'GET', accessType: 'public', schema: [{ name: 'name', type: 'string' }] } });
    await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'Add author', path: '/api/ui/authors', method: 'POST', accessType: 'public', schema: [{ name: 'name', type: 'string' }] } });
    expect(target.status).toBe(201);
    const author = await t.api('POST', '/api/ui/authors', { body: { name: 'Le Guin' } });

    await go('/endpoints/new');
    await page.getByLabel('Name', { exact: true }).fill('Add book');
    await page.getByLabel('Path').fill('/api/ui/books');
    await page.getByLabel('Method').selectOption('POST');
    await page.getByRole('button', { name: '+ Add field' }).click();
    const title = page.locator('.schema-field').nth(0);
    await title.locator('input[aria-label^="Name of"]').fill('title');
    await title.getByLabel('required').check();
    await title.getByLabel('unique').check();
    // Unique implies indexed: the indexed box shows it and cannot be unticked on its own.
    await expect(title.getByLabel('indexed').isChecked()).resolves.toBe(true);
    await expect(title.getByLabel('indexed').isDisabled()).resolves.toBe(true);
    await page.getByRole('button', { name: '+ Add field' }).click();
    const ref = page.locator('.schema-field').nth(1);
    await ref.locator('input[aria-label^="Name of"]').fill('author');
    await ref.locator('select[aria-label^="Type of"]').selectOption('reference');
    await ref.locator('select[aria-label^="Reference target of"]').selectOption({ label: 'Authors (GET /api/ui/authors)' });
    await page.screenshot({ path: join(SHOTS, 'endpoint-editor-fields-1280.png') });
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'POST /api/ui/books' }).waitFor();

    const saved = await t.api('GET', '/api/endpoints?search=ui/books', { token: admin });
    expect(saved.body.data[0].schema).toMatchObject([
      { name: 'title', type: 'string', required: true, unique: true },
      { name: 'author', type: 'reference', ref: '/api/ui/authors', refEndpointId: target.body.data._id },
    ]);

    await page.getByLabel('Request body').fill(JSON.stringify({ title: 'The Dispossessed', author: author.body.data._id }));
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(page.getByTestId('try-result').textContent()).resolves.toContain('Status 201');
    // A body that is not JSON: the error, and no answer left over from the request before.
    await page.getByLabel('Request body').fill('{"title": ');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByText(/^Not JSON:/).waitFor();
    await expect(page.getByTestId('try-result').count()).resolves.toBe(0);
    const live = await t.api('POST', '/api/ui/books', { body: { title: 'Nowhere', author: '0123456789abcdef01234567' } });
    expect(live.status).toBe(400);
  });

  it('shows a handler compile error at its line', async () => {
    await page.getByLabel('Run JavaScript instead of the default CRUD').check();
    const editor = page.locator('.cm-content');
    await editor.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type('\n}}');
    try {
      await page.getByRole('button', { name: 'Save' }).click();
      await page.locator('.field-error', { hasText: 'does not compile' }).first().waitFor();
      // The editor draws its lint mark a moment after the form shows the error: waited for, not counted at once.
      await page.locator('.cm-lintRange-error').first().waitFor();
    } finally {
      // The next tests save this form: the broken code goes whatever happened above.
      await editor.click();
      await page.keyboard.press('Control+End');
      for (let i = 0; i < 3; i++) await page.keyboard.press('Backspace');
      await page.getByLabel('Run JavaScript instead of the default CRUD').uncheck();
    }
  });

  it('writes a schema edit back to the YAML file in project/', async () => {
    await page.getByRole('button', { name: '+ Add field' }).last().click();
    const pages = page.locator('.schema-field').last();
    await pages.locator('input[aria-label^="Name of"]').fill('pageCount');
    await pages.locator('select[aria-label^="Type of"]').selectOption('number');
    // After a save the editor reads the definition back; the project file list is asked for again
    // in the same render. Waited for, so the next test does not type into a form about to be reset.
    const reloaded = page.waitForRequest((r) => r.method() === 'GET' && r.url().includes('/api/project/files'));
    const [saved] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'PUT' && r.url().includes('/api/endpoints/')), page.getByRole('button', { name: 'Save' }).click()]);
    expect(saved.status(), await saved.text()).toBe(200);
    await reloaded;
    const file = join(projectDir, 'endpoints', 'ui-books-post.yaml');
    await expect.poll(() => (existsSync(file) ? readFileSync(file, 'utf8') : ''), { timeout: 15_000 }).toContain('pageCount:');
    await page.getByTestId('project-file').filter({ hasText: 'endpoints/ui-books-post.yaml' }).waitFor();
  });

  it("names the project file by the server's project directory (GET /api/project/status), not a fixed project/", async () => {
    const shown = page.getByTestId('project-file');
    await shown.filter({ hasText: join(projectDir, 'endpoints', 'ui-books-post.yaml') }).waitFor();
    await expect(shown.textContent()).resolves.not.toMatch(/(^|\s)project\//);
  });

  it('keeps a half-filled form when the session expires, and saves it after signing in again', async () => {
    await page.getByLabel('Description', { exact: true }).fill('Kept across sign-in');
    await page.context().clearCookies();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'Session expired: sign in again' }).waitFor();
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    const [retried] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'PUT' && r.url().includes('/api/endpoints/')), page.getByRole('button', { name: 'Sign in' }).click()]);
    expect(retried.status()).toBe(200);
    await expect.poll(() => page.getByLabel('Description', { exact: true }).inputValue()).toBe('Kept across sign-in');
    const saved = await t.api('GET', '/api/endpoints?search=ui/books', { token: admin });
    expect(saved.body.data[0].description).toBe('Kept across sign-in');
  });

  it('creates an API key, shows it once, and the key works', async () => {
    await go('/api-keys');
    await page.getByRole('button', { name: 'New API key' }).click();
    await page.getByLabel('Name').fill('ci key');
    // The list's heading names the group; a click on it ticks or unticks nothing.
    const view = page.getByRole('group', { name: 'Permissions' }).getByRole('checkbox', { name: 'view', exact: true });
    const viewBefore = await view.isChecked();
    await page.getByRole('group', { name: 'Permissions' }).getByText('Permissions', { exact: true }).click();
    await expect(view.isChecked()).resolves.toBe(viewBefore);
    // Tab and Shift+Tab go round the dialog's controls, never to the page behind it.
    const focusInDialog = () => page.evaluate(`!!document.querySelector('[role="dialog"]')?.contains(document.activeElement)`);
    for (let i = 0; i < 20; i++) {
      await page.keyboard.press('Tab');
      expect(await focusInDialog(), `after ${i + 1} Tab presses`).toBe(true);
    }
    for (let i = 0; i < 5; i++) {
      await page.keyboard.press('Shift+Tab');
      expect(await focusInDialog(), `after ${i + 1} Shift+Tab presses`).toBe(true);
    }
    await page.getByRole('button', { name: 'Create' }).click();
    const key = (await page.getByTestId('new-key').textContent())?.trim() ?? '';
    expect(key).toMatch(/^dyn_/);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('cell', { name: 'ci key' }).waitFor();
    const res = await t.api('GET', '/api/endpoints', { apiKey: key });
    expect(res.status).toBe(200);
  });

  it('exports the project and imports it back after a delete, showing the plan first', async () => {
    await go('/settings');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download' }).click()]);
    const file = join(mkdtempSync(join(tmpdir(), 'dyn-export-')), 'project.yaml');
    await download.saveAs(file);
    expect(readFileSync(file, 'utf8')).toContain('/api/ui/books');

    const books = (await t.api('GET', '/api/endpoints?search=ui/books', { token: admin })).body.data[0];
    expect((await t.api('DELETE', `/api/endpoints/${books._id}`, { token: admin })).status).toBe(200);

    await page.getByLabel('Project file').setInputFiles(file);
    await page.getByRole('button', { name: 'Show the plan' }).click();
    const plan = page.getByTestId('import-plan');
    await expect(plan.textContent()).resolves.toContain('1 to create');
    await expect(plan.textContent()).resolves.toContain('POST /api/ui/books');
    await page.getByRole('button', { name: 'Apply the import' }).click();
    await page.getByTestId('import-result').waitFor();
    const after = await t.api('GET', '/api/endpoints?search=ui/books', { token: admin });
    expect(after.body.data.map((e: any) => e.path)).toEqual(['/api/ui/books']);
  });

  it('shows a view-only user read-only pages without write controls, and says which pages need more', async () => {
    const viewer = await createUserWith(t, ['view'], 'viewer');
    await page.getByRole('button', { name: 'Sign out' }).click();
    // The sign-in form, not the page signed out of (Settings has fields labelled with "login").
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await signIn(viewer.login, viewer.password);
    await go('/endpoints');
    await page.getByRole('cell', { name: 'Health', exact: true }).waitFor();
    await expect(page.getByRole('link', { name: 'New endpoint' }).count()).resolves.toBe(0);
    await page.getByRole('link', { name: '/api/ui/authors' }).first().click();
    await page.getByLabel('Path').waitFor();
    await expect(page.getByLabel('Path').isDisabled()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Save' }).count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: '+ Add field' }).count()).resolves.toBe(0);
    await go('/users');
    await page.getByRole('cell', { name: 'viewer', exact: true }).waitFor();
    await expect(page.getByRole('button', { name: 'New user' }).count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: 'Delete' }).count()).resolves.toBe(0);
    await go('/cron');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('needs manage_api');
  });

  it('offers a view-only user no link to a page it may not open: the nav shows it locked, the dashboard shows only its number', async () => {
    // Automation health links only when something needs a look: make all three need one.
    await page.route('**/api/dashboard/stats', async (route) => {
      const response = await route.fetch();
      const body = await response.json();
      body.data.automationHealth = { failedCronJobs: 2, webhookErrors: 3, unusedApiKeys: 4 };
      await route.fulfill({ response, json: body });
    });
    try {
      await go('/');
      await page.getByText('2 cron job(s) whose last run failed').waitFor();
      const nav = page.getByRole('navigation', { name: 'Main' });
      for (const title of ['Cron jobs', 'Webhooks', 'API keys', 'MCP', 'Audit log', 'Database', 'Settings']) {
        await expect(nav.getByRole('link', { name: title, exact: true }).count(), title).resolves.toBe(0);
        await expect(nav.locator('[aria-disabled="true"]', { hasText: title }).getAttribute('title'), title).resolves.toMatch(/^needs /);
      }
      for (const title of ['Dashboard', 'Endpoints', 'API docs', 'Users', 'System']) await expect(nav.getByRole('link', { name: title, exact: true }).count(), title).resolves.toBe(1);

      const card = (label: string) => page.locator('.card').filter({ has: page.getByText(label, { exact: true }) });
      for (const label of ['Errors (7 days)', 'Cron jobs', 'Webhooks', 'API keys', 'MCP tools']) {
        await expect(card(label).locator('.value').textContent(), label).resolves.toMatch(/^\d+$/);
        await expect(card(label).getByRole('link').count(), label).resolves.toBe(0);
      }
      await expect(card('Endpoints').getByRole('link').count()).resolves.toBe(1);
      await expect(card('Users').getByRole('link').count()).resolves.toBe(1);
      for (const name of ['see the jobs', 'see webhooks', 'review keys']) await expect(page.getByRole('link', { name }).count(), name).resolves.toBe(0);
      await page.getByText('3 failed webhook deliveries this week').waitFor();
      await page.getByText('4 API key(s) unused for 30 days').waitFor();
    } finally {
      await page.unroute('**/api/dashboard/stats');
    }
  });

  it('shows the current page in the nav readably, in light and dark, also when it is one the user may not open', async () => {
    // WCAG contrast of the current nav item's text on its background (its own, or the sidebar's).
    const contrast = async () => {
      const colors = await page.locator('nav [aria-current="page"]').evaluate((item: any) => {
        const style = (el: any) => (globalThis as any).getComputedStyle(el);
        let back = item;
        while (back.parentElement && /^rgba\(.*, 0\)$/.test(style(back).backgroundColor)) back = back.parentElement;
        return [style(item).color, style(back).backgroundColor] as string[];
      });
      const [a, b] = colors.map((value) => {
        const [r, g, bl] = (value.match(/[\d.]+/g) ?? []).map((c) => (Number(c) / 255 <= 0.03928 ? Number(c) / 255 / 12.92 : ((Number(c) / 255 + 0.055) / 1.055) ** 2.4));
        return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
      }) as [number, number];
      return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    };
    try {
      for (const theme of ['light', 'dark']) {
        await page.evaluate((value) => localStorage.setItem('dyn-theme', value), theme);
        for (const [path, title] of [['/cron', 'Cron jobs'], ['/endpoints', 'Endpoints']]) {
          await go(path!);
          await expect(page.locator('nav [aria-current="page"]').textContent()).resolves.toContain(title);
          await expect(contrast(), `${title}, ${theme}`).resolves.toBeGreaterThanOrEqual(4.5);
        }
      }
    } finally {
      await page.evaluate(() => localStorage.removeItem('dyn-theme'));
    }
  });

  it('starts a user who may not see the dashboard on the first page they may open, and Escape closes the narrow menu', async () => {
    const apiManager = await createUserWith(t, ['manage_api'], 'api-manager');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await go('/');
    await signIn(apiManager.login, apiManager.password);
    await page.waitForURL(/\/admin\/endpoints$/);
    await page.getByRole('cell', { name: 'Health', exact: true }).waitFor();
    await expect(page.getByRole('alert').count()).resolves.toBe(0);
    await page.setViewportSize({ width: 390, height: 800 });
    try {
      const toggle = page.getByRole('button', { name: 'Menu' });
      await toggle.focus();
      await page.keyboard.press('Enter');
      // Waited for: the page renders the key's effect after the key press returns.
      await page.getByRole('button', { name: 'Menu', expanded: true }).waitFor({ timeout: 5000 });
      await page.keyboard.press('Escape');
      await page.getByRole('button', { name: 'Menu', expanded: false }).waitFor({ timeout: 5000 });
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it('a manage_api user picks allowed user groups by name; a save keeps them', async () => {
    // Signed in as the manage_api user of the test above: GET /api/groups answers manage_api too.
    const readers = await t.api('POST', '/api/groups', { token: admin, body: { name: 'Readers', permissions: [] } });
    const created = await t.api('POST', '/api/endpoints', { token: admin, body: { name: 'Members only', path: '/api/ui/members', method: 'GET', accessType: 'group', allowedGroupIds: [readers.body.data._id], schema: [{ name: 'note', type: 'string' }] } });
    expect(created.status, created.text).toBe(201);
    const id = created.body.data._id as string;
    const groupId = readers.body.data._id as string;

    await go(`/endpoints/${id}`);
    const allowed = page.getByRole('group', { name: 'Allowed user groups' });
    await allowed.getByRole('checkbox', { name: 'Readers' }).waitFor();
    await expect(allowed.getByRole('checkbox', { name: 'Readers' }).isChecked()).resolves.toBe(true);
    await expect(allowed.getByRole('alert').count()).resolves.toBe(0);

    const [saved] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'PUT' && r.url().includes(`/api/endpoints/${id}`)), page.getByRole('button', { name: 'Save' }).click()]);
    expect(saved.status(), await saved.text()).toBe(200);
    const after = await t.api('GET', `/api/endpoints/${id}`, { token: admin });
    expect(after.body.data).toMatchObject({ accessType: 'group', allowedGroupIds: [groupId] });
  });

  it('says why when user groups may not be listed, and keeps the allowed ones, shown by id', async () => {
    const groupId = (await t.api('GET', '/api/groups?search=Readers', { token: admin })).body.data[0]._id as string;
    await page.route('**/api/groups?*', (route) => route.fulfill({ status: 403, json: { success: false, error: 'Forbidden: requires one of view, manage_users' } }));
    try {
      await page.reload();
      const allowed = page.getByRole('group', { name: 'Allowed user groups' });
      await expect(allowed.getByRole('alert').textContent()).resolves.toBe('You may not list user groups: that needs view, manage_users or manage_api. Allowed groups already set stay as they are (shown by id).');
      await expect(allowed.getByRole('checkbox', { name: groupId }).isChecked()).resolves.toBe(true);
      await page.screenshot({ path: join(SHOTS, 'endpoint-editor-groups-forbidden-1280.png'), fullPage: true });
    } finally {
      await page.unroute('**/api/groups?*');
    }
  });

  it('names any other failure to list user groups, and still keeps the allowed ones', async () => {
    await page.route('**/api/groups?*', (route) => route.fulfill({ status: 500, json: { success: false, error: 'Internal server error' } }));
    try {
      await page.reload();
      const allowed = page.getByRole('group', { name: 'Allowed user groups' });
      await expect(allowed.getByRole('alert').textContent()).resolves.toBe('Could not list user groups: Internal server error. Allowed groups already set stay as they are (shown by id).');
      await expect(allowed.getByRole('checkbox').isChecked()).resolves.toBe(true);
    } finally {
      await page.unroute('**/api/groups?*');
    }
  });

  it('does not offer a manage_api user the user.* events, and a test event that fails says why', async () => {
    // Signed in as the manage_api user of the tests above; the receiver is real and answers 503.
    const receiver = createServer((_req, res) => {
      res.statusCode = 503;
      res.end('down for maintenance');
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      await go('/webhooks');
      await page.getByRole('button', { name: 'New webhook' }).click();
      const form = page.getByRole('dialog');
      await expect(form.getByRole('checkbox', { name: 'user.created' }).isDisabled()).resolves.toBe(true);
      await expect(form.getByRole('checkbox', { name: 'all (*)' }).isDisabled()).resolves.toBe(true);
      await expect(form.getByRole('checkbox', { name: 'record.created' }).isDisabled()).resolves.toBe(false);
      await form.getByText('user.* events carry user records: following them needs view or manage_users').waitFor();
      await form.getByRole('button', { name: 'Cancel' }).click();
      const port = (receiver.address() as AddressInfo).port;
      const admin = await t.adminToken();
      expect((await t.api('PUT', '/api/settings', { token: admin, body: { outboundAllowList: [`127.0.0.1:${port}`] } })).status).toBe(200);
      const hook = await t.api('POST', '/api/webhooks', { token: admin, body: { name: 'down-hook', url: `http://127.0.0.1:${port}/in`, events: ['record.created'] } });
      expect(hook.status).toBe(201);
      await go(`/webhooks/${hook.body.data._id}`);
      await page.getByRole('button', { name: 'Send a test event' }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      await expect(alert.textContent()).resolves.toMatch(/^The test event was not delivered: the receiver answered 503: down for maintenance\. It is retried at .+\.$/);
      await expect(page.locator('.toast').count()).resolves.toBe(0);
    } finally {
      receiver.close();
    }
  });

  it('changes your own password on the users page through the profile, asking for the current one', async () => {
    const manager = await createUserWith(t, ['manage_users'], 'self-editor');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await signIn(manager.login, manager.password);
    await go('/users');
    const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'self-editor', exact: true }) });
    await row.getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog.getByLabel('Current password').count()).resolves.toBe(0);
    await dialog.getByLabel('New password (leave empty to keep)').fill('self-chosen-pw-2');
    await dialog.getByLabel('Current password').fill('not-my-password');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByRole('alert').waitFor();
    await expect(dialog.getByRole('alert').textContent()).resolves.toMatch(/currentPassword/);
    await dialog.getByLabel('Current password').fill(manager.password);
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    // Still signed in (the profile sets the new session's cookies), and the new password is the one.
    await page.getByRole('cell', { name: 'self-editor', exact: true }).waitFor();
    expect((await t.api('POST', '/api/auth/login', { body: { login: manager.login, password: 'self-chosen-pw-2' } })).status).toBe(200);
    expect((await t.api('POST', '/api/auth/login', { body: { login: manager.login, password: manager.password } })).status).toBe(401);
    // The administrator's groups grant what this manager lacks: the row says so, with no buttons
    // the API would refuse, and the new-user form does not offer the Administrators group.
    const adminRow = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'admin', exact: true }) });
    await expect(adminRow.getByRole('button').count()).resolves.toBe(0);
    await expect(adminRow.getByRole('cell').last().textContent()).resolves.toBe('changing needs manage_api, view, view_logs');
    await expect(row.getByRole('button', { name: 'Edit' }).count()).resolves.toBe(1);
    await page.getByRole('button', { name: 'New user' }).click();
    const form = page.getByRole('dialog');
    await expect(form.getByRole('checkbox', { name: 'Administrators' }).isDisabled()).resolves.toBe(true);
    await expect(form.getByRole('checkbox', { name: 'g-self-editor' }).isDisabled()).resolves.toBe(false);
    await form.getByRole('button', { name: 'Cancel' }).click();
  });
});

/** The build's first load stays small: the entry script and its static imports, gzip-compressed. */
describe('the admin build', () => {
  it('keeps the first load under 300 kB of compressed JavaScript', async () => {
    const { gzipSync } = await import('node:zlib');
    const assets = join(ROOT, 'dist', 'admin', 'assets');
    if (!existsSync(assets)) execFileSync(process.execPath, [join(ROOT, 'admin', 'build.ts')], { cwd: ROOT, stdio: 'pipe' });
    const html = readFileSync(join(ROOT, 'dist', 'admin', 'index.html'), 'utf8');
    const entry = html.match(/assets\/(app-[\w-]+\.js)/)?.[1] ?? '';
    const seen = new Set<string>();
    const visit = (name: string) => {
      if (seen.has(name)) return;
      seen.add(name);
      const text = readFileSync(join(assets, name), 'utf8');
      // Static imports only (`import{…}from"./chunk-X.js"`); pages are dynamic imports, loaded later.
      for (const match of text.matchAll(/(?:^|[;}\s])import\s*(?:[^"'()]*?from\s*)?["']\.\/([\w-]+\.js)["']/g)) visit(match[1]!);
    };
    visit(entry);
    const bytes = [...seen].reduce((sum, name) => sum + gzipSync(readFileSync(join(assets, name))).length, 0);
    expect(readdirSync(assets).length).toBeGreaterThan(seen.size);
    expect(bytes).toBeLessThan(300 * 1024);
  });
});
