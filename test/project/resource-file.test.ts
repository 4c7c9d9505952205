import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import type { EndpointSpec } from '../../src/project/bundle.ts';
import { formatProblem, loadProject } from '../../src/project/files.ts';
import { readSchema } from '../../src/project/schema-files.ts';
import { removeSpec, writeProject, writeSpec } from '../../src/project/write.ts';
import { snapshot, tempDir, writeFiles } from './helpers.ts';

const REPO = join(import.meta.dirname, '..', '..');
const read = (dir: string, path: string): string => readFileSync(join(dir, path), 'utf8');

const BOOKS = `# yaml-language-server: $schema=https://dynctl.dev/schemas/resource.schema.json
# the books of the shop
name: books
path: /api/books
methods:
  GET:
    accessType: public
  POST:
    accessType: authenticated
  DELETE:
    accessType: group
    allowedGroups: [Editors]
schema:
  title: {type: string, required: true}
`;

function project(files: Record<string, string>): string {
  const dir = tempDir();
  writeFiles(dir, files);
  return dir;
}

const spec = (dir: string, method: string): EndpointSpec => structuredClone(loadProject(dir).bundle.endpoints.find((e) => e.method === method)!);

describe('loading a resource file', () => {
  it('expands one file into one definition per method, sharing every field not set per method', () => {
    const loaded = loadProject(project({ 'endpoints/books.yaml': BOOKS }));
    expect(loaded.problems).toEqual([]);
    const schema = { title: { type: 'string', required: true } };
    expect(loaded.bundle.endpoints).toEqual([
      { name: 'Delete books', path: '/api/books', method: 'DELETE', accessType: 'group', allowedGroups: ['Editors'], schema },
      { name: 'List books', path: '/api/books', method: 'GET', accessType: 'public', schema },
      { name: 'Create books', path: '/api/books', method: 'POST', accessType: 'authenticated', schema },
    ]);
    expect([...loaded.files.values()].map((f) => [f.key, f.relPath, f.resource?.method])).toEqual([
      ['DELETE /api/books', 'endpoints/books.yaml', 'DELETE'],
      ['GET /api/books', 'endpoints/books.yaml', 'GET'],
      ['POST /api/books', 'endpoints/books.yaml', 'POST'],
    ]);
  });

  it('takes a list of methods, a name set per method, and a handler file per method', () => {
    const loaded = loadProject(
      project({
        'endpoints/notes.yaml': 'name: notes\npath: /api/notes\nmethods: [GET, PUT]\naccessType: public\nschema: {}\n',
        'endpoints/items.yaml': 'name: items\npath: /api/items\naccessType: public\nschema: {}\nmethods:\n  GET: {name: All items}\n  POST:\n    handler: {enabled: true, file: ./items-post.handler.js}\n',
        'endpoints/items-post.handler.js': 'async function handler() {\n  return { status: 201, data: {} };\n}\n',
      }),
    );
    expect(loaded.problems).toEqual([]);
    expect(loaded.bundle.endpoints.map((e) => [e.method, e.path, e.name, e.handler?.code ?? null])).toEqual([
      ['GET', '/api/items', 'All items', null],
      ['GET', '/api/notes', 'List notes', null],
      ['POST', '/api/items', 'Create items', 'async function handler() {\n  return { status: 201, data: {} };\n}\n'],
      ['PUT', '/api/notes', 'Replace notes', null],
    ]);
    expect([...loaded.files.values()].find((f) => f.key === 'POST /api/items')?.handlerFile?.relPath).toBe('endpoints/items-post.handler.js');
  });

  it('is valid against schemas/resource.schema.json, as editors check it (the sample project included)', () => {
    const ajv = new Ajv({ strict: false });
    ajv.addKeyword({ keyword: 'errorMessage', schemaType: 'string' });
    ajv.addSchema(readSchema('endpoint.schema.json'));
    const validate = ajv.compile(readSchema('resource.schema.json'));
    const sample = loadProject(join(REPO, 'project'));
    expect(sample.problems).toEqual([]);
    const files = new Set([...sample.files.values()].filter((f) => f.resource).map((f) => f.relPath));
    expect([...files]).toEqual(['endpoints/categories.yaml']);
    for (const value of [{ name: 'books', path: '/api/books', methods: { GET: { accessType: 'public' }, POST: null }, schema: {} }, { name: 'x', path: '/x', methods: ['GET'] }]) {
      expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
    }
    expect(validate({ name: 'x', path: '/x', methods: { GET: { path: '/y' } } })).toBe(false);
    expect(validate({ name: 'x', path: '/x', methods: ['GET', 'GET'] })).toBe(false);
  });
});

describe('problems in a resource file', () => {
  const problems = (text: string): string[] => loadProject(project({ 'endpoints/books.yaml': text })).problems.map((p) => formatProblem({ ...p, file: 'books.yaml' }));

  it('points at the line of a bad method, and leaves the file out', () => {
    const dir = project({ 'endpoints/books.yaml': 'name: books\npath: /api/books\nmethod: GET\nmethods:\n  - GET\n  - FETCH\n  - GET\naccessType: public\nschema: {}\n' });
    const loaded = loadProject(dir);
    expect(loaded.problems.map((p) => formatProblem({ ...p, file: 'books.yaml' }))).toEqual([
      'books.yaml:3: method cannot be used beside methods: a resource file defines one endpoint per method listed in methods',
      'books.yaml:6: methods.1 must be one of: GET, POST, PUT, PATCH, DELETE',
      'books.yaml:7: methods.2 repeats GET',
    ]);
    expect(loaded.bundle.endpoints).toEqual([]);
  });

  it('refuses a path set per method and a methods value of the wrong shape', () => {
    expect(problems('name: books\npath: /api/books\naccessType: public\nschema: {}\nmethods:\n  GET:\n    path: /api/other\n  POST: yes\n')).toEqual([
      'books.yaml:7: methods.GET.path cannot be set per method: every method of a resource file serves its path',
      'books.yaml:8: methods.POST must be a mapping of the fields this method sets itself (or empty: `GET: {}`)',
    ]);
    expect(problems('name: books\npath: /api/books\naccessType: public\nschema: {}\nmethods: GET\n')).toEqual([
      'books.yaml:5: methods must be a list of methods ([GET, POST]) or a mapping of each method to the fields it sets itself',
    ]);
    expect(problems('name: books\npath: /api/books\naccessType: public\nschema: {}\nmethods: []\n')).toEqual(['books.yaml:5: methods must name at least one method']);
  });

  it("reports a method's own field at its line under methods, and a shared field's problem once", () => {
    expect(
      problems('name: books\npath: /api/books\nmethods:\n  GET:\n    accessType: everyone\n  POST:\n    colour: red\naccessType: public\nschema:\n  title: {type: text}\n'),
    ).toEqual([
      'books.yaml:5: methods.GET.accessType must be one of: public, authenticated, group',
      expect.stringMatching(/^books\.yaml:7: methods\.POST\.colour is not a known field/),
      expect.stringMatching(/^books\.yaml:10: schema\.title\.type must be one of: /),
    ]);
  });

  it('a method defined in another file too is a duplicate, the method named in the message', () => {
    const dir = project({ 'endpoints/books.yaml': 'name: books\npath: /api/books\naccessType: public\nschema: {}\nmethods:\n  - GET\n  - POST\n', 'endpoints/list.yaml': 'name: List\npath: /api/books/\nmethod: POST\naccessType: public\nschema: {}\n' });
    expect(loadProject(dir).problems.map((p) => formatProblem({ ...p, file: p.file?.replace(dir, '') }))).toEqual([
      `/endpoints/list.yaml:2: path duplicates the endpoint POST /api/books in ${join(dir, 'endpoints/books.yaml')}`,
    ]);
    const reversed = project({ 'endpoints/a.yaml': 'name: List\npath: /api/books/\nmethod: POST\naccessType: public\nschema: {}\n', 'endpoints/books.yaml': 'name: books\npath: /api/books\naccessType: public\nschema: {}\nmethods:\n  - GET\n  - POST\n' });
    expect(loadProject(reversed).problems.map((p) => formatProblem({ ...p, file: p.file?.replace(reversed, '') }))).toEqual([
      `/endpoints/books.yaml:2: path duplicates the endpoint POST /api/books/ in ${join(reversed, 'endpoints/a.yaml')} (in POST)`,
    ]);
  });

  it('names the methods a shared field is wrong for when it is not wrong for all', () => {
    expect(problems('name: books\npath: /api/books\naccessType: group\nmethods:\n  GET: {accessType: public}\n  POST: {}\n  PUT: {}\nschema: {}\n')).toEqual([
      'books.yaml:3: accessType is group, so allowedGroups must name at least one user group (in POST, PUT)',
    ]);
  });
});

describe('writing back into a resource file', () => {
  it('keeps the file unchanged when the methods are written as they are', () => {
    const dir = project({ 'endpoints/books.yaml': BOOKS });
    const before = snapshot(dir);
    expect(writeProject(dir, loadProject(dir).bundle)).toEqual({ written: [], unchanged: ['endpoints/books.yaml'], removed: [] });
    expect(snapshot(dir)).toEqual(before);
  });

  it('a shared field every method changes at once stays shared (writeProject writes the methods as one)', () => {
    const dir = project({ 'endpoints/books.yaml': BOOKS });
    const bundle = loadProject(dir).bundle;
    const renamed = { ...bundle, endpoints: bundle.endpoints.map((e) => ({ ...e, group: 'Library' })) };
    expect(writeProject(dir, renamed)).toEqual({ written: ['endpoints/books.yaml'], unchanged: [], removed: [] });
    expect(read(dir, 'endpoints/books.yaml')).toBe(BOOKS.replace('schema:\n', 'group: Library\nschema:\n'));
  });

  it('keeps a shared placeholder when the value written is what it resolves to', () => {
    const dir = project({ 'endpoints/books.yaml': BOOKS.replace('schema:\n', 'description: ${env:DYN_BOOKS_TEXT}\nschema:\n') });
    const post = spec(dir, 'POST');
    const placeholders = { env: { DYN_BOOKS_TEXT: 'Our books' } };
    writeSpec(dir, 'endpoint', { ...post, description: 'Our books', accessType: 'public' }, { placeholders });
    const text = read(dir, 'endpoints/books.yaml');
    expect(text).toContain('description: ${env:DYN_BOOKS_TEXT}\n');
    expect(text).toContain('  POST:\n    accessType: public\n');
    expect(text).not.toContain('Our books');
  });

  it('a field one method no longer shares becomes its own; equal again, it is shared again', () => {
    const dir = project({ 'endpoints/books.yaml': BOOKS });
    const post = spec(dir, 'POST');
    writeSpec(dir, 'endpoint', { ...post, schema: { ...post.schema, isbn: { type: 'string' } } });
    expect(read(dir, 'endpoints/books.yaml')).toBe(`# yaml-language-server: $schema=https://dynctl.dev/schemas/resource.schema.json
# the books of the shop
name: books
path: /api/books
methods:
  GET:
    accessType: public
  POST:
    accessType: authenticated
    schema:
      title:
        type: string
        required: true
      isbn:
        type: string
  DELETE:
    accessType: group
    allowedGroups: [Editors]
schema:
  title: {type: string, required: true}
`);
    expect(loadProject(dir).problems).toEqual([]);
    writeSpec(dir, 'endpoint', post);
    expect(read(dir, 'endpoints/books.yaml')).toBe(BOOKS);
    expect(Object.keys(snapshot(dir))).toEqual(['endpoints/books.yaml']);
  });

  it('a name that is no longer the derived one is set per method', () => {
    const dir = project({ 'endpoints/notes.yaml': 'name: notes\npath: /api/notes\nmethods: [GET, POST]\naccessType: public\nschema: {}\n' });
    writeSpec(dir, 'endpoint', { ...spec(dir, 'GET'), name: 'All notes' });
    expect(read(dir, 'endpoints/notes.yaml')).toMatch(/^name: notes\npath: \/api\/notes\nmethods:\n {2}GET:\n {4}name: All notes\n {2}POST: \{\}\naccessType: public\nschema: \{\}\n$/m);
    expect(loadProject(dir).bundle.endpoints.map((e) => e.name)).toEqual(['All notes', 'Create notes']);
  });

  it('a deleted method leaves the methods list; the last one takes the file with it', () => {
    const dir = project({ 'endpoints/notes.yaml': 'name: notes\npath: /api/notes\nmethods: [GET, POST]\naccessType: public\nschema: {}\n', 'endpoints/books.yaml': BOOKS });
    expect(removeSpec(dir, 'endpoint', 'DELETE /api/books')).toEqual([]);
    expect(read(dir, 'endpoints/books.yaml')).toBe(BOOKS.replace('  DELETE:\n    accessType: group\n    allowedGroups: [Editors]\n', ''));
    expect(removeSpec(dir, 'endpoint', 'GET /api/notes')).toEqual([]);
    expect(read(dir, 'endpoints/notes.yaml')).toContain('methods: [POST]\n');
    expect(removeSpec(dir, 'endpoint', 'POST /api/notes')).toEqual(['endpoints/notes.yaml']);
    expect(existsSync(join(dir, 'endpoints/notes.yaml'))).toBe(false);
  });

  it('a new method of the same path goes to a file of its own', () => {
    const dir = project({ 'endpoints/books.yaml': BOOKS });
    const result = writeSpec(dir, 'endpoint', { ...spec(dir, 'GET'), method: 'PATCH', name: 'Update books' });
    expect(result.relPath).toBe('endpoints/books-patch.yaml');
    expect(read(dir, 'endpoints/books.yaml')).toBe(BOOKS);
  });

  it('keeps the byte-order mark of a resource file and of its handler file', () => {
    const handler = 'async function handler() {\n  return { status: 201, data: {} };\n}\n';
    const dir = project({
      'endpoints/books.yaml': `\uFEFF${BOOKS.replace('schema:\n', 'handler: {enabled: true, file: ./books.handler.js}\nschema:\n')}`,
      'endpoints/books.handler.js': `\uFEFF${handler}`,
    });
    const before = snapshot(dir);
    // Read as the loader reads it (without the mark), the handler is unchanged: nothing is written.
    expect(writeProject(dir, loadProject(dir).bundle).written).toEqual([]);
    expect(snapshot(dir)).toEqual(before);
    writeSpec(dir, 'endpoint', { ...spec(dir, 'POST'), accessType: 'public' });
    expect(read(dir, 'endpoints/books.yaml')).toMatch(/^\uFEFF# yaml-language-server: \$schema=\S+\n# the books of the shop\nname: books\n/);
    expect(read(dir, 'endpoints/books.yaml')).toContain('  POST:\n    accessType: public\n');
    expect(read(dir, 'endpoints/books.handler.js')).toBe(`\uFEFF${handler}`);
    expect(removeSpec(dir, 'endpoint', 'DELETE /api/books')).toEqual([]);
    expect(read(dir, 'endpoints/books.yaml').startsWith('\uFEFF# yaml-language-server:')).toBe(true);
    expect(read(dir, 'endpoints/books.yaml').match(/yaml-language-server/g)).toHaveLength(1);
    expect(loadProject(dir).problems).toEqual([]);
  });

  it('gives changed code a file of its own when a definition of another file runs the same handler file', () => {
    const shared = 'async function handler() {\n  return { status: 201, data: {} };\n}\n';
    const dir = project({
      'endpoints/items.yaml': 'name: items\npath: /api/items\naccessType: public\nschema: {}\nmethods:\n  GET: {}\n  POST:\n    handler: {enabled: true, file: ../handlers/create.js}\n',
      'endpoints/notes.yaml': 'name: Create notes\npath: /api/notes\nmethod: POST\naccessType: public\nschema: {}\nhandler: {enabled: true, file: ../handlers/create.js}\n',
      'handlers/create.js': shared,
    });
    const post = spec(dir, 'POST');
    const code = shared.replace('201', '202');
    writeSpec(dir, 'endpoint', { ...post, handler: { enabled: true, code } });
    expect(read(dir, 'handlers/create.js')).toBe(shared);
    expect(read(dir, 'endpoints/items.yaml')).toContain('    handler: {enabled: true, file: ./items-post.handler.js}\n');
    expect(read(dir, 'endpoints/items-post.handler.js')).toBe(code);
    const loaded = loadProject(dir);
    expect(loaded.problems).toEqual([]);
    expect(loaded.bundle.endpoints.find((e) => e.path === '/api/notes')?.handler?.code).toBe(shared);
    expect(loaded.bundle.endpoints.find((e) => e.path === '/api/items' && e.method === 'POST')?.handler?.code).toBe(code);
  });

  it('keeps changed code inline when the own file name of a shared handler is taken', () => {
    const shared = 'async function handler() {\n  return { status: 201, data: {} };\n}\n';
    const dir = project({
      'endpoints/items.yaml': 'name: items\npath: /api/items\naccessType: public\nschema: {}\nmethods:\n  GET: {}\n  POST:\n    handler: {enabled: true, file: ../handlers/create.js}\n',
      'endpoints/notes.yaml': 'name: Create notes\npath: /api/notes\nmethod: POST\naccessType: public\nschema: {}\nhandler: {enabled: true, file: ../handlers/create.js}\n',
      'endpoints/items-post.handler.js': '// not ours\n',
      'handlers/create.js': shared,
    });
    const code = shared.replace('201', '202');
    writeSpec(dir, 'endpoint', { ...spec(dir, 'POST'), handler: { enabled: true, code } });
    expect(read(dir, 'handlers/create.js')).toBe(shared);
    expect(read(dir, 'endpoints/items-post.handler.js')).toBe('// not ours\n');
    expect(loadProject(dir).bundle.endpoints.find((e) => e.path === '/api/items' && e.method === 'POST')?.handler?.code).toBe(code);
  });

  it("a method whose code is the shared code again shares the handler file again, and its own handler file goes", () => {
    const shared = 'async function handler() {\n  return { status: 200, data: {} };\n}\n';
    const file = BOOKS.replace('schema:\n', 'handler: {enabled: true, file: ./books.handler.js}\nschema:\n');
    const dir = project({ 'endpoints/books.yaml': file, 'endpoints/books.handler.js': shared });
    const post = spec(dir, 'POST');
    writeSpec(dir, 'endpoint', { ...post, handler: { enabled: true, code: shared.replace('200', '201') } }, { handlers: 'file' });
    expect(read(dir, 'endpoints/books-post.handler.js')).toBe(shared.replace('200', '201'));
    writeSpec(dir, 'endpoint', post, { handlers: 'file' });
    expect(Object.keys(snapshot(dir)).sort()).toEqual(['endpoints/books.handler.js', 'endpoints/books.yaml']);
    expect(read(dir, 'endpoints/books.yaml')).toBe(file);
    expect(read(dir, 'endpoints/books.handler.js')).toBe(shared);
  });

  it('a method whose handler is disabled but runs the shared code names the shared handler file, not a copy of it', () => {
    const shared = 'async function handler() {\n  return { status: 200, data: {} };\n}\n';
    const dir = project({ 'endpoints/books.yaml': BOOKS.replace('schema:\n', 'handler: {enabled: true, file: ./books.handler.js}\nschema:\n'), 'endpoints/books.handler.js': shared });
    const post = spec(dir, 'POST');
    writeSpec(dir, 'endpoint', { ...post, handler: { enabled: false, code: shared } }, { handlers: 'file' });
    expect(Object.keys(snapshot(dir)).sort()).toEqual(['endpoints/books.handler.js', 'endpoints/books.yaml']);
    expect(read(dir, 'endpoints/books.yaml')).toContain('  POST:\n    accessType: authenticated\n    handler:\n      enabled: false\n      file: ./books.handler.js\n');
    expect(spec(dir, 'POST').handler).toEqual({ enabled: false, code: shared });
  });

  it("keeps a method's changed handler code in its handler file", () => {
    const dir = project({
      'endpoints/items.yaml': 'name: items\npath: /api/items\naccessType: public\nschema: {}\nmethods:\n  GET: {}\n  POST:\n    handler: {enabled: true, file: ./items-post.handler.js}\n',
      'endpoints/items-post.handler.js': 'async function handler() {\n  return { status: 201, data: {} };\n}\n',
    });
    const post = spec(dir, 'POST');
    const code = 'async function handler() {\n  return { status: 202, data: {} };\n}\n';
    writeSpec(dir, 'endpoint', { ...post, handler: { enabled: true, code } });
    expect(read(dir, 'endpoints/items.yaml')).toContain('    handler: {enabled: true, file: ./items-post.handler.js}\n');
    expect(read(dir, 'endpoints/items-post.handler.js')).toBe(code);
  });
});
