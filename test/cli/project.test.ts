import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCli, closedPort, makeCli, type Cli } from '../helpers/dynctl-cli.ts';
import { ADMIN_PASSWORD, cleanupServerProcesses, ROOT, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

/**
 * The project commands end to end: `node bin/dynctl.js` against real server processes, on
 * copies of the sample project (./project itself is never touched) in temp directories.
 */
const SAMPLE = join(ROOT, 'project');
const INVALID = join(ROOT, 'test/fixtures/projects/bad-field-type');

let server: ServerProcess;
let cli: Cli;
let work: string;
let dir: string;
let adminToken: string;

async function login(target: ServerProcess): Promise<Cli> {
  const client = makeCli();
  const result = await client.run(['login', '--server', target.url, '--login', 'admin', '--password-stdin'], { input: ADMIN_PASSWORD });
  expect(result.code, result.stderr).toBe(0);
  return client;
}

/** Keys (`METHOD path`) of the server's own (non-system) endpoints. */
async function endpointKeys(target: ServerProcess, token: string): Promise<string[]> {
  const response = await target.api('GET', '/api/endpoints?limit=100', { token });
  expect(response.status, response.text).toBe(200);
  return (response.body.data as Array<{ method: string; path: string; isSystem?: boolean }>)
    .filter((e) => !e.isSystem)
    .map((e) => `${e.method} ${e.path}`)
    .sort();
}

beforeAll(async () => {
  server = await startServerProcess();
  adminToken = (await server.login()).accessToken;
  cli = await login(server);
  work = mkdtempSync(join(tmpdir(), 'dynctl-project-'));
  dir = join(work, 'project');
  cpSync(SAMPLE, dir, { recursive: true });
});

afterAll(async () => {
  await cleanupCli();
  await cleanupServerProcesses();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('dynctl validate', () => {
  it('accepts a valid directory offline (exit 0), also from $PROJECT_DIR', async () => {
    // No server configured at all: validate never talks to one.
    const offline = makeCli({ DYNCTL_SERVER: `http://127.0.0.1:${await closedPort()}` });
    const result = await offline.run(['validate', dir]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/8 definitions valid \(1 group, 6 endpoints, 1 cronJob, 0 webhooks\)/);

    const fromEnv = await offline.run(['--json', 'validate'], { env: { PROJECT_DIR: dir } });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect(JSON.parse(fromEnv.stdout)).toMatchObject({ valid: true, definitions: 8, problems: [] });
  });

  it('lists every problem as file:line: and exits 1', async () => {
    const broken = join(work, 'broken');
    cpSync(SAMPLE, broken, { recursive: true });
    writeFileSync(join(broken, 'endpoints', 'extra.yaml'), 'name: Extra\npath: /api/extra\nmethod: GET\naccessType: public\ngroup: Nope\nschema: {}\n');

    const result = await cli.run(['validate', INVALID]);
    expect(result.code).toBe(1);
    expect(result.stdout.trim()).toMatch(/^.*bad-field-type\/endpoints\/items\.yaml:9: schema\.price\.type must be one of: /);
    expect(result.stderr).toContain('1 problem in');

    const two = await cli.run(['validate', broken]);
    expect(two.code).toBe(1);
    expect(two.stdout).toMatch(/broken\/endpoints\/extra\.yaml:5: group .*Nope/);

    const json = await cli.run(['--json', 'validate', INVALID]);
    expect(json.code).toBe(1);
    const parsed = JSON.parse(json.stdout);
    expect(parsed.valid).toBe(false);
    expect(parsed.problems).toEqual([expect.objectContaining({ line: 9, path: 'schema.price.type' })]);

    expect((await cli.run(['validate', join(work, 'missing')])).code).toBe(1);
  });
});

describe('dynctl diff and apply', () => {
  it('diff before apply shows what would be created (exit 1); apply creates it; a second apply changes nothing', async () => {
    const before = await cli.run(['diff', dir]);
    expect(before.code, before.stderr).toBe(1);
    // A group is named as it is written (its key is the lower-cased name).
    expect(before.stdout).toMatch(/^\+ group Shop$/m);
    expect(before.stdout).toMatch(/^\+ endpoint POST \/api\/shop\/orders$/m);
    expect(before.stdout).toMatch(/^\+ cronJob heartbeat$/m);
    expect(before.stdout).toMatch(/Plan: 8 to create, 0 to update, 0 to delete\./);

    const plan = await cli.run(['--json', 'diff', dir]);
    expect(plan.code).toBe(1);
    expect(JSON.parse(plan.stdout)).toMatchObject({ summary: { create: 8, update: 0, delete: 0 } });

    const apply = await cli.run(['apply', dir]);
    expect(apply.code, apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(/^\+ endpoint GET \/api\/shop\/products$/m);
    expect(apply.stdout).toMatch(/Applied: 8 created, 0 updated, 0 deleted/);
    expect(await endpointKeys(server, adminToken)).toHaveLength(6);

    const again = await cli.run(['apply', dir]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/no changes/i);

    const json = await cli.run(['--json', 'apply', dir]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ changes: [], applied: true });

    const after = await cli.run(['diff', dir]);
    expect(after.code, after.stdout).toBe(0);
    expect(after.stdout).toMatch(/No differences/);
  });

  it('an edited field shows as ~ with the field, and apply updates it', async () => {
    const file = join(dir, 'endpoints', 'products-create.yaml');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace('description: Add a product (signed-in users)', 'description: Add a product (editors)').replace('maxLength: 200', 'maxLength: 300'));

    const diff = await cli.run(['diff', dir]);
    expect(diff.code).toBe(1);
    expect(diff.stdout).toContain('~ endpoint POST /api/shop/products\n');
    expect(diff.stdout).toContain('    description: "Add a product (signed-in users)" → "Add a product (editors)"\n');
    expect(diff.stdout).toContain('    schema.title.maxLength: 200 → 300\n');
    expect(diff.stdout).not.toMatch(/GET \/api\/shop\/products/);

    const apply = await cli.run(['apply', dir]);
    expect(apply.code, apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(/Applied: 0 created, 1 updated, 0 deleted/);
    expect((await cli.run(['diff', dir])).code).toBe(0);
  });

  it('a cron job edited in its files shows as ~ cronJob <name>, its code from the .js file too, and apply updates it', async () => {
    const yaml = join(dir, 'cron', 'heartbeat.yaml');
    writeFileSync(yaml, readFileSync(yaml, 'utf8').replace('schedule: 0 * * * *', 'schedule: 30 * * * *'));
    const code = join(dir, 'cron', 'heartbeat.js');
    writeFileSync(code, readFileSync(code, 'utf8').replace('return { ok: true, at: now };', 'return { ok: true, at: now, beat: 2 };'));

    const diff = await cli.run(['diff', dir]);
    expect(diff.code).toBe(1);
    expect(diff.stdout).toContain('~ cronJob heartbeat\n');
    expect(diff.stdout).toContain('    schedule: "0 * * * *" → "30 * * * *"\n');
    expect(diff.stdout).toMatch(/^ {4}action\.code: /m);

    const apply = await cli.run(['apply', dir]);
    expect(apply.code, apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(/Applied: 0 created, 1 updated, 0 deleted/);
    const job = await server.api('GET', '/api/cron/heartbeat', { token: adminToken });
    expect(job.body.data).toMatchObject({ schedule: '30 * * * *', enabled: false });
    expect(job.body.data.action.code).toContain('beat: 2');
  });

  it('a resource file is planned per method: a shared field shows under each method, a field of one method under it alone', async () => {
    const file = join(dir, 'endpoints', 'categories.yaml');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace('    maxLength: 100\n', '    maxLength: 120\n').replace('    name: Create category\n', '    name: Create category\n    description: New categories\n'));

    const diff = await cli.run(['diff', dir]);
    expect(diff.code, diff.stderr).toBe(1);
    expect(diff.stdout).toContain('~ endpoint GET /api/shop/categories\n    schema.name.maxLength: 100 → 120\n');
    expect(diff.stdout).toContain('~ endpoint POST /api/shop/categories\n    description: "" → "New categories"\n    schema.name.maxLength: 100 → 120\n');
    expect(diff.stdout).toMatch(/Plan: 0 to create, 2 to update, 0 to delete\./);

    const apply = await cli.run(['apply', dir]);
    expect(apply.code, apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(/Applied: 0 created, 2 updated, 0 deleted/);
    const response = await server.api('GET', '/api/endpoints?limit=100', { token: adminToken });
    const categories = (response.body.data as Array<{ method: string; path: string; name: string; description: string }>).filter((e) => e.path === '/api/shop/categories');
    expect(categories.map((e) => [e.method, e.name, e.description]).sort()).toEqual([
      ['GET', 'List categories', 'Product categories, readable by anyone'],
      ['POST', 'Create category', 'New categories'],
    ]);
    expect((await cli.run(['diff', dir])).code).toBe(0);
  });

  it('a deleted definition is kept without --prune, refused with --prune and no terminal, deleted with --prune --yes', async () => {
    const before = await endpointKeys(server, adminToken);
    // POST leaves the methods of the resource file categories.yaml; GET stays.
    const categories = join(dir, 'endpoints', 'categories.yaml');
    const text = readFileSync(categories, 'utf8');
    writeFileSync(categories, text.replace(/^ {2}POST:\n(?: {4}.*\n)+/m, ''));
    expect(readFileSync(categories, 'utf8')).not.toContain('  POST:');

    const kept = await cli.run(['apply', dir]);
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.stdout).toMatch(/no changes/i);
    expect(kept.stderr).toMatch(/1 definition on the server is not in .* and was kept/);
    expect(await endpointKeys(server, adminToken)).toEqual(before);

    // diff mirrors apply: without --prune nothing would change (exit 0), the extra definition is a note.
    const diff = await cli.run(['diff', dir]);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toMatch(/No differences/);
    expect(diff.stdout).not.toMatch(/^- /m);
    expect(diff.stderr).toMatch(/1 definition on the server is not in .*apply keeps it, apply --prune would delete it:\n {2}endpoint POST \/api\/shop\/categories\n/);
    const json = await cli.run(['--json', 'diff', dir]);
    expect(JSON.parse(json.stdout)).toMatchObject({ changes: [], onlyOnServer: [{ kind: 'endpoint', key: 'POST /api/shop/categories', action: 'delete' }] });

    const withPrune = await cli.run(['diff', '--prune', dir]);
    expect(withPrune.code).toBe(1);
    expect(withPrune.stdout).toMatch(/^- endpoint POST \/api\/shop\/categories$/m);
    expect(withPrune.stdout).toMatch(/Plan: 0 to create, 0 to update, 1 to delete\./);

    const refused = await cli.run(['apply', '--prune', dir]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/would delete 1 definition .*POST \/api\/shop\/categories.*--yes/);
    expect(await endpointKeys(server, adminToken)).toEqual(before);

    const dryRun = await cli.run(['apply', '--prune', '--dry-run', dir]);
    expect(dryRun.code, dryRun.stderr).toBe(0);
    expect(dryRun.stdout).toMatch(/Dry run: 0 to create, 0 to update, 1 to delete; nothing was changed/);
    expect(await endpointKeys(server, adminToken)).toEqual(before);

    const pruned = await cli.run(['apply', '--prune', '--yes', dir]);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toMatch(/^- endpoint POST \/api\/shop\/categories$/m);
    expect(pruned.stdout).toMatch(/Applied: 0 created, 0 updated, 1 deleted/);
    expect(await endpointKeys(server, adminToken)).toEqual(before.filter((key) => key !== 'POST /api/shop/categories'));
    expect((await cli.run(['diff', '--prune', dir])).code).toBe(0);
  });

  it('stops on problems in the directory, and on the server refusing the bundle (exit 1 with the details)', async () => {
    const local = await cli.run(['apply', INVALID]);
    expect(local.code).toBe(1);
    expect(local.stderr).toMatch(/items\.yaml:9: schema\.price\.type/);
    expect(local.stderr).toMatch(/nothing was sent to the server/);

    const ghosts = join(work, 'ghosts');
    cpSync(dir, ghosts, { recursive: true });
    const file = join(ghosts, 'endpoints', 'orders-list.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('accessType: authenticated', 'accessType: group\nallowedGroups: [Ghosts, Phantoms]'));
    const before = await endpointKeys(server, adminToken);

    const refused = await cli.run(['apply', ghosts]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/allowedGroups names the unknown user group "Ghosts"/);
    expect(refused.stderr).toMatch(/allowedGroups names the unknown user group "Phantoms"/);
    expect(refused.stderr).toMatch(/\[HTTP 400\]/);

    const json = await cli.run(['--json', 'apply', ghosts]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).details).toHaveLength(2);
    expect(await endpointKeys(server, adminToken)).toEqual(before);
  });
});

describe('dynctl export and import', () => {
  it('exports a project directory that matches the server', async () => {
    const out = join(work, 'exported');
    const result = await cli.run(['export', '--out', out]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/exported 5 endpoints, 1 group, 1 cron job in \d+ ms/);
    expect(readdirSync(join(out, 'groups'))).toEqual(['shop.yaml']);
    const endpoints = readdirSync(join(out, 'endpoints')).sort();
    expect(endpoints).toEqual(['shop-categories-get.yaml', 'shop-orders-get.yaml', 'shop-orders-post.handler.js', 'shop-orders-post.yaml', 'shop-products-get.yaml', 'shop-products-post.yaml']);
    expect(readFileSync(join(out, 'endpoints', 'shop-products-post.yaml'), 'utf8')).toContain('description: Add a product (editors)');
    expect(readdirSync(join(out, 'cron')).sort()).toEqual(['heartbeat.js', 'heartbeat.yaml']);
    // Fields at their defaults are left out, as the server's write-back leaves them out.
    const products = readFileSync(join(out, 'endpoints', 'shop-products-get.yaml'), 'utf8');
    expect(products).not.toMatch(/^(apiVersion|retentionDays|group): null$/m);
    expect(readFileSync(join(out, 'cron', 'heartbeat.yaml'), 'utf8')).not.toContain('runAs: null');

    // The exported directory is a valid project, equal to what the server holds.
    expect((await cli.run(['validate', out])).code).toBe(0);
    expect((await cli.run(['diff', out])).code).toBe(0);

    // Exporting again changes no file.
    const again = await cli.run(['--json', 'export', '--out', out]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ type: 'directory', written: [], removed: [], endpoints: 5, groups: 1, cronJobs: 1 });

    expect((await cli.run(['export', '--data', '--out', join(work, 'nodir')])).code).toBe(2);
  });

  it('into a directory holding definitions the server does not have: stops and writes nothing, unless --prune', async () => {
    const out = join(work, 'exported-wip');
    expect((await cli.run(['export', '--out', out])).code).toBe(0);
    // Work not yet applied: a new endpoint with its handler file.
    writeFileSync(join(out, 'endpoints', 'wip.yaml'), 'name: WIP\npath: /api/wip\nmethod: POST\naccessType: public\nschema: {}\nhandler:\n  enabled: true\n  file: ./wip.handler.js\n');
    writeFileSync(join(out, 'endpoints', 'wip.handler.js'), 'async function handler() { return { status: 200 }; }\n');
    const products = join(out, 'endpoints', 'shop-products-get.yaml');
    writeFileSync(products, readFileSync(products, 'utf8').replace('accessType: public', 'accessType: authenticated'));
    const before = readFileSync(products, 'utf8');

    const refused = await cli.run(['export', '--out', out]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${out} holds 1 definition the server does not have: endpoint POST /api/wip (endpoints/wip.yaml). Nothing was written`);
    expect(readFileSync(join(out, 'endpoints', 'wip.handler.js'), 'utf8')).toContain('handler');
    expect(readFileSync(products, 'utf8')).toBe(before); // not overwritten either

    const pruned = await cli.run(['--json', 'export', '--out', out, '--prune']);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(JSON.parse(pruned.stdout).removed.sort()).toEqual(['endpoints/wip.handler.js', 'endpoints/wip.yaml']);
    expect((await cli.run(['diff', out])).code).toBe(0);
    expect((await cli.run(['export', '--prune', '--out', join(work, 'x.yaml')])).code).toBe(2);
  });

  it('export → import into a fresh server → export gives the same text, records included', async () => {
    const created = await server.api('POST', '/api/shop/products', { token: adminToken, body: { title: 'Dune', price: 9.5 } });
    expect(created.status, created.text).toBe(201);

    const exported = await cli.run(['export', '--data']);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toMatch(/^groups:\n {2}- name: Shop\n/);
    expect(exported.stderr).toMatch(/exported 5 endpoints, 1 group, 1 cron job, 1 record in \d+ ms/);
    const file = join(work, 'bundle.yaml');
    const toFile = await cli.run(['export', '--data', '--out', file]);
    expect(toFile.code, toFile.stderr).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(exported.stdout);

    const fresh = await startServerProcess();
    const freshCli = await login(fresh);
    const imported = await freshCli.run(['import', file]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(/Imported \(merge\): 7 created, 0 updated, 0 deleted; 1 record written/);

    const reexported = await freshCli.run(['export', '--data']);
    expect(reexported.code, reexported.stderr).toBe(0);
    expect(reexported.stdout).toBe(exported.stdout);

    // JSON files and project directories import too; an import of the same state changes nothing.
    const json = join(work, 'bundle.json');
    expect((await cli.run(['export', '--out', json])).code).toBe(0);
    expect(JSON.parse(readFileSync(json, 'utf8'))).toMatchObject({ groups: [{ name: 'Shop' }] });
    const again = await freshCli.run(['--json', 'import', json, '--mode', 'replace']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ mode: 'replace', changes: [], summary: { create: 0, update: 0, delete: 0 } });
    const fromDir = await freshCli.run(['import', join(work, 'exported')]);
    expect(fromDir.code, fromDir.stderr).toBe(0);
    expect(fromDir.stdout).toMatch(/no changes to definitions/);
  });

  it('refuses what it cannot import', async () => {
    expect((await cli.run(['import', join(work, 'nothing.yaml')])).code).toBe(2);
    expect((await cli.run(['import', INVALID])).code).toBe(1);
    expect((await cli.run(['import', join(work, 'bundle.yaml'), '--mode', 'sideways'])).code).toBe(2);
    const bad = join(work, 'bad.json');
    writeFileSync(bad, '{"groups": [], "endpoints": [{"name": "x"}]}');
    const refused = await cli.run(['import', bad]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/\[HTTP 400\]/);
  });
});

describe('credentials and the server', () => {
  it('without credentials the commands exit 3; without a server, 4', async () => {
    const anonymous = makeCli({ DYNCTL_SERVER: server.url });
    for (const args of [['diff', dir], ['apply', dir], ['export'], ['import', join(work, 'bundle.yaml')]]) {
      const result = await anonymous.run(args);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(3);
      expect(result.stderr).toMatch(/not logged in/);
    }
    const json = await anonymous.run(['--json', 'export']);
    expect(JSON.parse(json.stdout).error).toMatch(/not logged in/);

    const nowhere = makeCli({ DYNCTL_SERVER: `http://127.0.0.1:${await closedPort()}` });
    expect((await nowhere.run(['diff', dir])).code).toBe(4);
  });

  it('never touches the sample project', () => {
    expect(readFileSync(join(SAMPLE, 'endpoints', 'categories.yaml'), 'utf8')).toContain('  POST:\n');
    expect(readFileSync(join(SAMPLE, 'endpoints', 'products-create.yaml'), 'utf8')).toContain('Add a product (signed-in users)');
  });
});
