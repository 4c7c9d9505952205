import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatProblem, loadProject, validateProjectDir, type Problem } from '../../src/project/files.ts';
import { copyOf, fixture, tempDir, writeFiles } from './helpers.ts';

const ITEMS = 'name: Items\npath: /api/items\nmethod: GET\naccessType: public\nschema: {}\n';

describe('loading a valid project directory', () => {
  const loaded = loadProject(fixture('valid'));

  it('reports no problems', () => {
    expect(loaded.problems).toEqual([]);
  });

  it('reads groups and endpoints into the Bundle, sorted by natural key, handler files read into code', () => {
    expect(loaded.bundle).toEqual({
      groups: [
        { name: 'Internal' },
        {
          name: 'Shop',
          description: 'The sample shop',
          color: '#0ea5e9',
          order: 1,
          networkAccess: { enabled: true, allowedDomains: ['shop.example.com', '*.shop.example.com'], allowedIpRanges: [] },
        },
      ],
      endpoints: [
        {
          name: 'List products',
          path: '/api/shop/products',
          method: 'GET',
          accessType: 'public',
          group: 'shop',
          apiVersion: 'v1',
          schema: {
            title: { type: 'string', required: true, maxLength: 200 },
            price: { type: 'number', minimum: 0 },
            category: { type: 'reference', ref: '/api/shop/categories' },
            tags: { type: 'array', items: { type: 'string', enum: ['new', 'sale'] }, defaultValue: [] },
            dimensions: { type: 'object', children: { width: { type: 'number' }, unit: { type: 'string', defaultValue: 'cm' } } },
          },
        },
        {
          name: 'Internal health',
          path: '/internal/health',
          method: 'GET',
          accessType: 'authenticated',
          group: null,
          networkAccess: { enabled: true, allowedIpRanges: ['${env:OFFICE_RANGE}'] },
          schema: {},
          handler: { enabled: true, code: 'async function handler() {\n  return { status: 200, data: { ok: true } };\n}\n' },
        },
        {
          name: 'Place order',
          path: '/api/shop/orders',
          method: 'POST',
          accessType: 'group',
          allowedGroups: ['Customers'],
          group: 'Shop',
          retentionDays: 30,
          schema: {
            productId: { type: 'reference', ref: '/api/shop/products' },
            quantity: { type: 'number', integer: true, minimum: 1, defaultValue: 1 },
          },
          handler: {
            enabled: true,
            code: "// eslint-disable-next-line @typescript-eslint/no-unused-vars -- the sandbox calls it\nasync function handler(req, db) {\n  const order = await db.create({ ...req.body, status: 'placed' });\n  return { status: 201, data: order };\n}\n",
          },
        },
      ],
      cronJobs: [],
      webhooks: [],
    });
  });

  it('remembers each definition\'s file and handler file by kind and natural key', () => {
    const dir = fixture('valid');
    expect(loaded.files.get('group:shop')).toEqual({ kind: 'group', key: 'shop', file: join(dir, 'groups/shop.yaml'), relPath: 'groups/shop.yaml' });
    expect(loaded.files.get('group:internal')?.relPath).toBe('groups/internal.yml');
    expect(loaded.files.get('endpoint:POST /api/shop/orders')).toEqual({
      kind: 'endpoint',
      key: 'POST /api/shop/orders',
      file: join(dir, 'endpoints/orders.yaml'),
      relPath: 'endpoints/orders.yaml',
      handlerFile: { ref: '../handlers/orders.js', file: join(dir, 'handlers/orders.js'), relPath: 'handlers/orders.js' },
    });
  });

  it('names files as reached from the directory given', () => {
    const problems = validateProjectDir('test/fixtures/projects/unknown-group');
    expect(problems.map(formatProblem)).toEqual([
      'test/fixtures/projects/unknown-group/endpoints/items.yaml:5: group names the endpoint group "Warehouse", which is not in the project',
    ]);
  });
});

describe('the sample project in project/', () => {
  const sample = join(import.meta.dirname, '..', '..', 'project');
  it('loads without problems', () => {
    const loaded = loadProject(sample);
    expect(loaded.problems.map(formatProblem)).toEqual([]);
    expect(loaded.bundle.endpoints.length).toBeGreaterThan(0);
  });
});

describe('each kind of problem names its file and line', () => {
  const cases: Array<{ name: string; fixture: string; problems: Array<Omit<Problem, 'message'> & { message: string | RegExp }> }> = [
    {
      name: 'bad YAML syntax',
      fixture: 'bad-yaml-syntax',
      problems: [{ file: 'endpoints/items.yaml', line: 8, path: '', message: /^invalid YAML: / }],
    },
    {
      name: 'a half-written file, cut off in the middle of a mapping',
      fixture: 'half-written',
      problems: [{ file: 'endpoints/items.yaml', line: 8, path: '', message: 'invalid YAML: Implicit map keys need to be followed by map values' }],
    },
    {
      name: 'an unknown field',
      fixture: 'unknown-field',
      problems: [{ file: 'endpoints/items.yaml', line: 8, path: 'networkAccess.allowedIps', message: 'is not a known field (known: enabled, allowedDomains, allowedIpRanges)' }],
    },
    {
      name: 'values of the wrong type',
      fixture: 'wrong-type',
      problems: [
        { file: 'endpoints/items.yaml', line: 5, path: 'enabled', message: 'must be a boolean' },
        { file: 'endpoints/items.yaml', line: 6, path: 'retentionDays', message: 'must be at least 1' },
      ],
    },
    {
      name: 'an unknown field type in the schema, in the API\'s words',
      fixture: 'bad-field-type',
      problems: [{ file: 'endpoints/items.yaml', line: 9, path: 'schema.price.type', message: 'must be one of: string, number, boolean, array, object, datetime, json, reference' }],
    },
    {
      name: 'one endpoint (METHOD path) in two files, paths compared normalized',
      fixture: 'duplicate-endpoint',
      problems: [{ file: 'endpoints/b.yaml', line: 3, path: 'path', message: /^duplicates the endpoint GET \/api\/items in .*endpoints\/a\.yaml$/ }],
    },
    {
      name: 'one group name in two files, regardless of letter case',
      fixture: 'duplicate-group',
      problems: [{ file: 'groups/shop.yaml', line: 1, path: 'name', message: /^duplicates the endpoint group "SHOP" in .*groups\/shop-copy\.yaml$/ }],
    },
    {
      name: 'a group name that no file defines',
      fixture: 'unknown-group',
      problems: [{ file: 'endpoints/items.yaml', line: 5, path: 'group', message: 'names the endpoint group "Warehouse", which is not in the project' }],
    },
    {
      name: 'a handler file that does not exist',
      fixture: 'handler-missing',
      problems: [{ file: 'endpoints/items.yaml', line: 8, path: 'handler.file', message: 'names ./items.handler.js, which does not exist (or is a broken symlink)' }],
    },
    {
      name: 'a handler file outside the project directory',
      fixture: 'handler-outside',
      problems: [{ file: 'endpoints/items.yaml', line: 8, path: 'handler.file', message: 'names ../../handler-outside.js, which is outside the project directory' }],
    },
    {
      name: 'a handler with both code and file',
      fixture: 'handler-code-and-file',
      problems: [{ file: 'endpoints/items.yaml', line: 6, path: 'handler', message: 'takes code or file, not both' }],
    },
    {
      name: 'accessType group with no allowedGroups, and a reference to an item path',
      fixture: 'group-access-without-groups',
      problems: [
        { file: 'endpoints/items.yaml', line: 5, path: 'allowedGroups', message: 'must name at least one user group when accessType is group' },
        { file: 'endpoints/items.yaml', line: 9, path: 'schema.owner.ref', message: 'must be a normalized collection path without :parameters, such as /api/shop/categories' },
      ],
    },
  ];

  it.each(cases)('$name', ({ fixture: name, problems }) => {
    const dir = fixture(name);
    const found = loadProject(dir).problems;
    expect(found).toEqual(problems.map((problem) => ({ ...problem, file: join(dir, problem.file ?? ''), message: typeof problem.message === 'string' ? problem.message : expect.stringMatching(problem.message) })));
  });

  it('a syntax error in a handler file, at its line in that file', () => {
    // Written here, not kept as a fixture: the repository's linter would parse it.
    const dir = tempDir();
    writeFiles(dir, {
      'endpoints/items.yaml': `${ITEMS}handler:\n  enabled: true\n  file: items.handler.js\n`,
      'endpoints/items.handler.js': 'async function handler(req, db) {\n  const x = ;\n  return { status: 200, data: x };\n}\n',
    });
    expect(loadProject(dir).problems).toEqual([
      { file: join(dir, 'endpoints/items.handler.js'), line: 2, path: '', message: expect.stringMatching(/^does not compile: Syntax error in handler code at line 2/) },
    ]);
  });

  it('leaves a definition with problems out of the bundle, and keeps the others', () => {
    const { bundle } = loadProject(fixture('unknown-group'));
    expect(bundle.groups.map((group) => group.name)).toEqual(['Shop']);
    expect(bundle.endpoints).toEqual([]);
  });
});

describe('files the loader refuses', () => {
  it('refuses a symlink that leads out of the project directory', () => {
    const outside = tempDir();
    writeFileSync(join(outside, 'secret.yaml'), ITEMS);
    const dir = tempDir();
    mkdirSync(join(dir, 'endpoints'));
    symlinkSync(join(outside, 'secret.yaml'), join(dir, 'endpoints', 'items.yaml'));
    expect(loadProject(dir).problems).toEqual([{ file: join(dir, 'endpoints/items.yaml'), path: '', message: 'is a symlink leading outside the project directory' }]);
  });

  it('refuses a kind directory that is a symlink leading outside', () => {
    const outside = tempDir();
    writeFiles(outside, { 'items.yaml': ITEMS });
    const dir = tempDir();
    symlinkSync(outside, join(dir, 'endpoints'));
    expect(loadProject(dir).problems).toEqual([{ file: join(dir, 'endpoints'), path: '', message: 'is a symlink leading outside the project directory' }]);
  });

  it('refuses a handler file reached through a symlink leading outside', () => {
    const outside = tempDir();
    writeFiles(outside, { 'h.js': 'async function handler() { return { status: 200 }; }' });
    const dir = tempDir();
    writeFiles(dir, { 'endpoints/items.yaml': `${ITEMS}handler:\n  enabled: true\n  file: h.js\n` });
    symlinkSync(join(outside, 'h.js'), join(dir, 'endpoints', 'h.js'));
    expect(loadProject(dir).problems).toEqual([
      { file: join(dir, 'endpoints/items.yaml'), line: 8, path: 'handler.file', message: 'names h.js, which is a symlink leading outside the project directory' },
    ]);
  });

  it('follows symlinks that stay inside the project directory', () => {
    const dir = tempDir();
    writeFiles(dir, { 'shared/items.yaml': ITEMS });
    mkdirSync(join(dir, 'endpoints'));
    symlinkSync(join(dir, 'shared', 'items.yaml'), join(dir, 'endpoints', 'items.yaml'));
    const loaded = loadProject(dir);
    expect(loaded.problems).toEqual([]);
    expect(loaded.bundle.endpoints.map((endpoint) => endpoint.path)).toEqual(['/api/items']);
  });

  it('refuses a file over the size limit (256 KB unless maxFileBytes)', () => {
    const dir = tempDir();
    writeFiles(dir, { 'endpoints/items.yaml': `${ITEMS}description: "${'x'.repeat(300 * 1024)}"\n`, 'groups/shop.yaml': 'name: Shop\n' });
    const size = 300 * 1024 + ITEMS.length + 'description: ""\n'.length;
    expect(loadProject(dir).problems).toEqual([{ file: join(dir, 'endpoints/items.yaml'), path: '', message: `is ${size} bytes; the limit is 262144 (maxFileBytes)` }]);
    expect(loadProject(dir, { maxFileBytes: 10 }).problems.map((problem) => problem.file)).toEqual([join(dir, 'endpoints/items.yaml'), join(dir, 'groups/shop.yaml')]);
  });

  it('refuses a handler file over the size limit', () => {
    const dir = tempDir();
    writeFiles(dir, { 'endpoints/items.yaml': `${ITEMS}handler: {enabled: true, file: items.js}\n`, 'endpoints/items.js': `// ${'x'.repeat(200)}\n` });
    expect(loadProject(dir, { maxFileBytes: 150 }).problems).toEqual([
      { file: join(dir, 'endpoints/items.yaml'), line: 6, path: 'handler.file', message: 'names items.js, which is 204 bytes; the limit is 150 (maxFileBytes)' },
    ]);
  });

  it('reports an empty file and a file that is not a mapping', () => {
    const dir = tempDir();
    writeFiles(dir, { 'groups/empty.yaml': '', 'groups/list.yaml': '- Shop\n' });
    expect(loadProject(dir).problems.map(formatProblem)).toEqual([
      `${join(dir, 'groups/empty.yaml')}:1: is empty: it must hold one definition`,
      `${join(dir, 'groups/list.yaml')}:1: must be a mapping of fields (key: value lines)`,
    ]);
  });

  it('reports a directory that does not exist', () => {
    expect(validateProjectDir('/nonexistent/dyn-project')).toEqual([{ file: '/nonexistent/dyn-project', path: '', message: 'does not exist' }]);
  });

  it('never throws, whatever the files hold', () => {
    const dir = tempDir();
    writeFiles(dir, {
      'endpoints/a.yaml': 'a: &a [*a]\n',
      'endpoints/b.yaml': '!!binary aGVsbG8=\n',
      'endpoints/c.yaml': 'name: x\n---\nname: y\n',
      'endpoints/d.yaml': '? [complex, key]\n: value\n',
      'endpoints/e.yaml': 'name: 1\nname: 2\n',
      'endpoints/f.yaml': 'schema: {a: {type: object, children: {b: {type: array, items: {type: reference}}}}}\n',
      'groups/g.yaml': '\t\tname: tabs\n',
      'groups/i.yaml': 'name: Shop\norder: .inf\n',
      'groups/j.yaml': 'name: !!set {a, b}\n',
      'groups/h.yaml': `${'a: &x [1]\n'}${Array.from({ length: 200 }, (_, i) => `k${i}: *x`).join('\n')}\n`,
    });
    const problems = loadProject(dir).problems;
    expect(new Set(problems.map((problem) => problem.file))).toEqual(new Set(['a', 'b', 'c', 'd', 'e', 'f'].map((f) => join(dir, `endpoints/${f}.yaml`)).concat(['g', 'h', 'i', 'j'].map((f) => join(dir, `groups/${f}.yaml`)))));
    for (const problem of problems) expect(problem.line === undefined || problem.line >= 1).toBe(true);
  });
});

describe('files the loader ignores', () => {
  it('ignores dotfiles, editor temp files, other extensions and subdirectories', () => {
    const dir = tempDir();
    const broken = 'name: [broken\n';
    writeFiles(dir, {
      'endpoints/items.yaml': ITEMS,
      'endpoints/.items.yaml.swp': broken,
      'endpoints/.items.yaml.swx': broken,
      'endpoints/items.yaml~': broken,
      'endpoints/#items.yaml#': broken,
      'endpoints/.items.yaml.1234.tmp': broken,
      'endpoints/4913': broken,
      'endpoints/items.yaml.bak': broken,
      'endpoints/archive/old.yaml': broken,
      'endpoints/notes.md': broken,
      'README.md': broken,
      'data/records.yaml': broken,
    });
    // Emacs's lock file is a dangling symlink.
    symlinkSync('root@host.1234:1700000000', join(dir, 'endpoints', '.#items.yaml'));
    const loaded = loadProject(dir);
    expect(loaded.problems).toEqual([]);
    expect(loaded.bundle.endpoints.map((endpoint) => endpoint.name)).toEqual(['Items']);
  });

  it('loads an empty directory, or one without kind directories, as an empty bundle', () => {
    expect(loadProject(tempDir())).toEqual({ bundle: { groups: [], endpoints: [], cronJobs: [], webhooks: [] }, problems: [], files: new Map(), sources: { files: new Map(), handlers: new Map() }, unchanged: false });
  });
});

describe('validateProjectDir (dynctl validate)', () => {
  it('lists every problem of a project, sorted by file and line, without a server', () => {
    const dir = copyOf('valid');
    writeFiles(dir, {
      'endpoints/orders.yaml': 'name: Place order\npath: /api/shop/orders\nmethod: POST\naccessType: group\ngroup: Nowhere\nschema:\n  n: {type: numbr}\n',
    });
    expect(validateProjectDir(dir).map(formatProblem)).toEqual([
      `${join(dir, 'endpoints/orders.yaml')}:4: accessType is group, so allowedGroups must name at least one user group`,
      `${join(dir, 'endpoints/orders.yaml')}:5: group names the endpoint group "Nowhere", which is not in the project`,
      `${join(dir, 'endpoints/orders.yaml')}:7: schema.n.type must be one of: string, number, boolean, array, object, datetime, json, reference`,
    ]);
  });
});
