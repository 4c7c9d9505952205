import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCli, signedInCli, type Cli } from '../helpers/dynctl-cli.ts';
import { cleanupServerProcesses, makeDataDir, ROOT, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

/**
 * How dynctl shows what is wrong with a project, wherever it is found: a placeholder the
 * environment cannot resolve (validate offline, diff and apply on the server, the watcher's
 * status) and a bundle file that is not YAML. Always `file:line: path message` where the file is
 * known, and the definition's key where it is not.
 */
const WIDGETS = 'name: Widgets\npath: /api/widgets\nmethod: GET\naccessType: public\ndescription: ${env:DYN_UNSET_VAR}\nschema: {}\n';
const UNSET = 'needs the environment variable DYN_UNSET_VAR, which is not set';

let server: ServerProcess;
let cli: Cli;
let project: string;

beforeAll(async () => {
  const dataDir = makeDataDir();
  project = join(dataDir, 'project');
  cpSync(join(ROOT, 'project'), project, { recursive: true });
  writeFileSync(join(project, 'endpoints', 'widgets.yaml'), WIDGETS);
  server = await startServerProcess({ dataDir, env: { PROJECT_DIR: project } });
  cli = await signedInCli(server.url);
});

afterAll(async () => {
  await cleanupCli();
  await cleanupServerProcesses();
});

describe('a placeholder whose environment variable is not set', () => {
  it('validate warns at its file and line and still calls the directory valid (the server resolves it)', async () => {
    const result = await cli.run(['validate', project]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`dynctl: warning: ${join(project, 'endpoints', 'widgets.yaml')}:5: description ${UNSET} here`);

    const json = await cli.run(['--json', 'validate', project]);
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: true, warnings: [{ file: join(project, 'endpoints', 'widgets.yaml'), line: 5, path: 'description', message: UNSET }] });

    const set = await cli.run(['validate', project], { env: { DYN_UNSET_VAR: 'Widgets for all' } });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).not.toContain('warning');
  });

  it('diff and apply name the file and line, and the error line names the definition', async () => {
    for (const command of ['diff', 'apply']) {
      const result = await cli.run([command, project]);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain(`  ${join(project, 'endpoints', 'widgets.yaml')}:5: description ${UNSET}\n`);
      expect(result.stderr).toContain(`dynctl: error: Invalid bundle: endpoints[GET /api/widgets].description ${UNSET} [HTTP 400]`);
      expect(result.stderr).not.toMatch(/endpoints\.\d/);
    }
    const json = await cli.run(['--json', 'diff', project]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      details: [{ field: 'endpoints[GET /api/widgets].description', message: UNSET }],
      problems: [{ file: join(project, 'endpoints', 'widgets.yaml'), line: 5, path: 'description', message: UNSET }],
    });
  });

  it('status prints the failed reconcile and its problem as lines, not JSON', async () => {
    const result = await cli.run(['status']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Project\\s+${project.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+watching$`, 'm'));
    expect(result.stdout).toMatch(/^Reconcile\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC {2}failed: Invalid bundle: endpoints\[GET \/api\/widgets\]\.description needs/m);
    expect(result.stdout).toContain(`Problems\n  endpoints[GET /api/widgets].description ${UNSET}\n`);
    expect(result.stdout).not.toMatch(/[{}"]/);

    const json = await cli.run(['--json', 'status']);
    expect(JSON.parse(json.stdout)).toMatchObject({ project: { watching: true, lastReconcile: { ok: false }, problems: [{ path: 'endpoints[GET /api/widgets].description', message: UNSET }] } });
  });
});

describe('a placeholder the server would refuse', () => {
  it('validate finds it at its file and line: only variables named with PLACEHOLDER_ENV_PREFIX (DYN_) can be used', async () => {
    const dir = join(project, '..', 'refused-placeholder');
    cpSync(project, dir, { recursive: true });
    writeFileSync(join(dir, 'endpoints', 'widgets.yaml'), WIDGETS.replace('${env:DYN_UNSET_VAR}', '${env:PATH}'));
    const result = await cli.run(['validate', dir]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toContain(`${join(dir, 'endpoints', 'widgets.yaml')}:5: description has \${env:PATH}: only environment variables whose names start with DYN_ can be used\n`);
    writeFileSync(join(dir, 'endpoints', 'widgets.yaml'), WIDGETS.replace('${env:DYN_UNSET_VAR}', '${file:/etc/dyn-no-such-key}'));
    const missing = await cli.run(['validate', dir]);
    expect(missing.code, missing.stderr).toBe(1);
    expect(missing.stdout).toContain(`${join(dir, 'endpoints', 'widgets.yaml')}:5: description has \${file:/etc/dyn-no-such-key}: only files inside /run/secrets can be used\n`);
    expect(missing.stderr).not.toContain('warning');
    writeFileSync(join(dir, 'endpoints', 'widgets.yaml'), WIDGETS.replace('${env:DYN_UNSET_VAR}', '${env:PATH}'));
    // Read as the server reads it: a server with another prefix allows what it names.
    const other = await cli.run(['validate', dir], { env: { PLACEHOLDER_ENV_PREFIX: 'PA' } });
    expect(other.code, other.stderr).toBe(0);
  });
});

describe('a prune of a directory without definitions', () => {
  it('diff --prune refuses it as apply --prune does (it would list deletions apply refuses)', async () => {
    const dir = join(project, '..', 'no-definitions');
    mkdirSync(join(dir, 'endpoints'), { recursive: true });
    for (const command of [['diff', '--prune', dir], ['apply', '--prune', '--yes', dir]]) {
      const result = await cli.run(command);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain(`${dir} holds no definitions: apply --prune would delete every definition on the server; refusing`);
    }
  });
});

describe('dynctl import of a bundle file that is not YAML', () => {
  it('lists the syntax problem at its line and ends the error line with the status, not a colon', async () => {
    const file = join(makeDataDir(), 'broken.yaml');
    writeFileSync(file, 'groups: []\nendpoints\n  - name: x\n');
    const result = await cli.run(['import', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: invalid YAML: \\S`, 'm'));
    expect(result.stderr).toMatch(/dynctl: error: Malformed YAML body: .* at line \d+, column \d+ \[HTTP 400\]\n$/);

    const json = await cli.run(['--json', 'import', file]);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: expect.stringMatching(/^Malformed YAML body/), problems: [{ file, line: 2 }] });
  });
});
