import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Bundle, EndpointSpec } from '../../src/project/bundle.ts';
import { loadProject } from '../../src/project/files.ts';
import { removeSpec, writeProject, writeSpec } from '../../src/project/write.ts';
import { ChangedMeanwhile } from '../../src/project/yaml-write.ts';
import { copyOf, fixture, snapshot, tempDir, writeFiles } from './helpers.ts';

const REPO = join(import.meta.dirname, '..', '..');
const valid = (): Bundle => loadProject(fixture('valid')).bundle;
const byKey = (bundle: Bundle, method: string, path: string): EndpointSpec => structuredClone(bundle.endpoints.find((e) => e.method === method && e.path === path)!);
const read = (dir: string, path: string): string => readFileSync(join(dir, path), 'utf8');
const endpointText = (name: string): string => `name: ${name}\npath: /api/things\nmethod: GET\naccessType: public\nschema: {}\n`;

describe('writing a whole project', () => {
  it('into an empty directory: every file lands under its name together, no temp file is left, and it loads back as written', () => {
    const source = loadProject(fixture('valid'));
    expect(source.problems).toEqual([]);
    const dir = tempDir();
    const result = writeProject(dir, source.bundle, { handlers: 'file' });
    const all = readdirSync(dir, { recursive: true }).map(String);
    expect(all.filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(result.written.length).toBeGreaterThan(0);
    for (const relPath of result.written) expect(existsSync(join(dir, relPath))).toBe(true);
    const loaded = loadProject(dir);
    expect(loaded.problems).toEqual([]);
    expect(loaded.bundle).toEqual(source.bundle);
  });

  it('writes what loads back into the same bundle', () => {
    const dir = tempDir();
    writeProject(dir, valid());
    const loaded = loadProject(dir);
    expect(loaded.problems).toEqual([]);
    expect(loaded.bundle).toEqual(valid());
  });

  it('gives byte-identical files for the same bundle (export → import → export)', () => {
    const first = tempDir();
    const second = tempDir();
    writeProject(first, valid());
    writeProject(second, loadProject(first).bundle);
    expect(snapshot(second)).toEqual(snapshot(first));
  });

  it('does not depend on the order of definitions in the bundle', () => {
    const bundle = valid();
    const reversed: Bundle = { groups: [...bundle.groups].reverse(), endpoints: [...bundle.endpoints].reverse(), cronJobs: [], webhooks: [] };
    const a = tempDir();
    const b = tempDir();
    writeProject(a, bundle);
    writeProject(b, reversed);
    expect(snapshot(b)).toEqual(snapshot(a));
  });

  it('changes nothing when the directory already holds the bundle', () => {
    const dir = tempDir();
    writeProject(dir, valid());
    const before = snapshot(dir);
    const again = writeProject(dir, valid());
    expect(again.written).toEqual([]);
    expect(again.removed).toEqual([]);
    expect(again.unchanged).toHaveLength(5);
    expect(snapshot(dir)).toEqual(before);
  });

  it('names new files after the natural key, groups by name and endpoints by path and method', () => {
    const dir = tempDir();
    writeProject(dir, valid());
    expect(Object.keys(snapshot(dir))).toEqual([
      'endpoints/internal-health-get.yaml',
      'endpoints/shop-orders-post.yaml',
      'endpoints/shop-products-get.yaml',
      'groups/internal.yaml',
      'groups/shop.yaml',
    ]);
  });

  it('removes the files of definitions that are no longer in the bundle, handler files included', () => {
    const dir = copyOf('valid');
    const bundle = valid();
    const result = writeProject(dir, { groups: bundle.groups.filter((g) => g.name === 'Shop'), endpoints: bundle.endpoints.filter((e) => e.method === 'GET'), cronJobs: [], webhooks: [] });
    expect(result.removed.sort()).toEqual(['endpoints/orders.yaml', 'groups/internal.yml', 'handlers/orders.js']);
    expect(Object.keys(snapshot(dir))).toEqual(['README.md', 'endpoints/health.yaml', 'endpoints/products.yaml', 'groups/shop.yaml']);
  });

  it('updates existing files in place and leaves files it cannot read alone', () => {
    const dir = copyOf('valid');
    writeFiles(dir, { 'endpoints/broken.yaml': 'name: [unterminated\n' });
    const result = writeProject(dir, valid());
    expect(result.written).toEqual([]);
    expect(read(dir, 'endpoints/broken.yaml')).toBe('name: [unterminated\n');
    expect(snapshot(dir)).toEqual({ ...snapshot(fixture('valid')), 'endpoints/broken.yaml': 'name: [unterminated\n' });
  });

  it('fills an empty directory that does not exist yet, leaving no temp files behind', () => {
    const dir = join(tempDir(), 'project');
    writeProject(dir, valid());
    expect(Object.keys(snapshot(dir)).filter((name) => name.split('/').some((part) => part.startsWith('.')))).toEqual([]);
  });

  it('refuses a bundle that holds one key twice', () => {
    const bundle = valid();
    expect(() => writeProject(tempDir(), { ...bundle, groups: [...bundle.groups, { name: 'SHOP' }] })).toThrow('the bundle holds the endpoint group shop twice');
  });
});

describe('the file format', () => {
  it('starts every file with the schema comment: the $id URL outside the repository', () => {
    const dir = tempDir();
    writeProject(dir, valid());
    expect(read(dir, 'groups/shop.yaml').split('\n')[0]).toBe('# yaml-language-server: $schema=https://dynctl.dev/schemas/endpoint-group.schema.json');
    expect(read(dir, 'endpoints/shop-orders-post.yaml').split('\n')[0]).toBe('# yaml-language-server: $schema=https://dynctl.dev/schemas/endpoint.schema.json');
  });

  it('points the schema comment at schemas/ by a relative path inside the repository', () => {
    const dir = join(tempDir(REPO), 'project');
    writeProject(dir, valid());
    expect(read(dir, 'groups/shop.yaml').split('\n')[0]).toBe('# yaml-language-server: $schema=../../../schemas/endpoint-group.schema.json');
    expect(read(dir, 'endpoints/shop-orders-post.yaml').split('\n')[0]).toBe('# yaml-language-server: $schema=../../../schemas/endpoint.schema.json');
  });

  it('writes keys in the order of the JSON Schema, whatever the order given', () => {
    const dir = tempDir();
    const spec = {
      handler: { code: 'async function handler() { return { status: 204 }; }', enabled: true },
      schema: { zeta: { maxLength: 5, required: true, type: 'string' }, alpha: { defaultValue: 1, minimum: 0, integer: true, type: 'number' } },
      accessType: 'public',
      method: 'POST',
      path: '/api/things',
      name: 'Things',
    };
    writeSpec(dir, 'endpoint', spec);
    expect(read(dir, 'endpoints/things-post.yaml')).toBe(
      [
        '# yaml-language-server: $schema=https://dynctl.dev/schemas/endpoint.schema.json',
        'name: Things',
        'path: /api/things',
        'method: POST',
        'accessType: public',
        'schema:',
        '  zeta:', // field names keep their own order
        '    type: string',
        '    required: true',
        '    maxLength: 5',
        '  alpha:',
        '    type: number',
        '    integer: true',
        '    minimum: 0',
        '    defaultValue: 1',
        'handler:',
        '  enabled: true',
        '  code: "async function handler() { return { status: 204 }; }"',
        '',
      ].join('\n'),
    );
  });

  it('keeps every string exactly through write and load', () => {
    const strings = ['yes', 'no', 'null', '~', '1.0', '0x1F', '2026-01-01', ' leading', 'trailing ', 'a: b', '# not a comment', "it's \"quoted\"", 'multi\nline\n', 'trailing spaces  \nline', '\ttab', 'ünïcødé ✓', '', '- dash', '@at', '`tick`', '${env:KEPT}', 'x'.repeat(300)];
    const schema = Object.fromEntries(strings.map((text, index) => [`f${index}`, { type: 'string', defaultValue: text, description: text }]));
    const spec = { name: 'Strings', path: '/api/strings', method: 'POST' as const, accessType: 'public' as const, schema };
    const dir = tempDir();
    writeSpec(dir, 'endpoint', spec);
    const loaded = loadProject(dir);
    expect(loaded.bundle.endpoints).toEqual([spec]);
  });

  it('writes the code of a handler with code inline, as a block', () => {
    const dir = tempDir();
    writeProject(dir, valid());
    expect(read(dir, 'endpoints/internal-health-get.yaml')).toContain('handler:\n  enabled: true\n  code: |\n    async function handler() {\n      return { status: 200, data: { ok: true } };\n    }\n');
  });

  it('puts new handlers in a .js file beside the YAML with handlers: file', () => {
    const dir = tempDir();
    writeProject(dir, valid(), { handlers: 'file' });
    expect(read(dir, 'endpoints/shop-orders-post.yaml')).toContain('handler:\n  enabled: true\n  file: ./shop-orders-post.handler.js\n');
    expect(read(dir, 'endpoints/shop-orders-post.handler.js')).toBe(byKey(valid(), 'POST', '/api/shop/orders').handler?.code);
    expect(loadProject(dir).bundle).toEqual(valid());
  });
});

describe('write-back into existing files', () => {
  it('updates one field and keeps the comments elsewhere in the file', () => {
    const dir = copyOf('valid');
    const spec = byKey(valid(), 'GET', '/api/shop/products');
    spec.description = 'Products, newest first';
    (spec.schema.price as { minimum: number }).minimum = 1;
    expect(writeSpec(dir, 'endpoint', spec)).toEqual({ file: join(dir, 'endpoints/products.yaml'), relPath: 'endpoints/products.yaml', changed: true });
    expect(read(dir, 'endpoints/products.yaml')).toBe(
      read(fixture('valid'), 'endpoints/products.yaml')
        .replace('name: List products\n', 'name: List products\ndescription: Products, newest first\n')
        .replace('price: {type: number, minimum: 0}', 'price: {type: number, minimum: 1}'),
    );
  });

  it('keeps the order of the keys of a file it rewrites; a new key goes after the one before it in the schema', () => {
    const dir = tempDir();
    const SCHEMA_COMMENT = '# yaml-language-server: $schema=https://dynctl.dev/schemas/endpoint.schema.json';
    const text = '# mine\nschema:\n  title: {type: string}\n  price: {type: number}\naccessType: public\npath: /api/things\nname: Things\nmethod: GET\n';
    writeFiles(dir, { 'endpoints/things.yaml': text });
    const spec = structuredClone(loadProject(dir).bundle.endpoints[0]!);
    writeSpec(dir, 'endpoint', { ...spec, name: 'All things', description: 'What we sell', schema: { price: spec.schema.price!, title: spec.schema.title! } });
    expect(read(dir, 'endpoints/things.yaml')).toBe(
      `${SCHEMA_COMMENT}\n# mine\nschema:\n  title: {type: string}\n  price: {type: number}\naccessType: public\npath: /api/things\nname: All things\ndescription: What we sell\nmethod: GET\n`,
    );
  });

  it('with a guard, checks the file again right before the rename: a save landing while the new text is flushed is kept, and nothing is written', () => {
    const dir = tempDir();
    writeFiles(dir, { 'endpoints/things.yaml': endpointText('Things') });
    const spec = structuredClone(loadProject(dir).bundle.endpoints[0]!);
    const abs = join(dir, 'endpoints/things.yaml');
    const asRead = read(dir, 'endpoints/things.yaml');
    const seen: Array<string | undefined> = [];
    const guard = (path: string, text: string | undefined): void => {
      seen.push(text);
      // The first look is at what the write is based on; an editor saves right after it.
      if (seen.length === 1) writeFileSync(abs, endpointText('Saved by hand'));
      if (text !== asRead) throw new ChangedMeanwhile(path);
    };
    expect(() => writeSpec(dir, 'endpoint', { ...spec, description: 'from the store' }, { guard })).toThrow(ChangedMeanwhile);
    expect(seen).toEqual([asRead, endpointText('Saved by hand')]);
    expect(read(dir, 'endpoints/things.yaml')).toBe(endpointText('Saved by hand'));
    expect(readdirSync(join(dir, 'endpoints'))).toEqual(['things.yaml']);
  });

  it('keeps the line endings of a file written with CRLF', () => {
    const dir = copyOf('valid');
    const original = read(fixture('valid'), 'endpoints/products.yaml');
    writeFiles(dir, { 'endpoints/products.yaml': original.replace(/\n/g, '\r\n') });
    const spec = byKey(valid(), 'GET', '/api/shop/products');
    spec.description = 'Products, newest first';
    expect(writeSpec(dir, 'endpoint', spec).changed).toBe(true);
    expect(read(dir, 'endpoints/products.yaml')).toBe(original.replace('name: List products\n', 'name: List products\ndescription: Products, newest first\n').replace(/\n/g, '\r\n'));
    expect(loadProject(dir).bundle.endpoints.find((e) => e.method === 'GET' && e.path === '/api/shop/products')).toEqual(spec);
  });

  it('keeps the byte-order mark of a file saved with one, and its schema line once', () => {
    const dir = copyOf('valid');
    const original = read(dir, 'endpoints/products.yaml');
    writeFiles(dir, { 'endpoints/products.yaml': `\uFEFF${original}`, 'handlers/orders.js': `\uFEFF${read(dir, 'handlers/orders.js')}` });
    const products = byKey(valid(), 'GET', '/api/shop/products');
    products.description = 'Products, newest first';
    expect(writeSpec(dir, 'endpoint', products).changed).toBe(true);
    expect(read(dir, 'endpoints/products.yaml')).toBe(`\uFEFF${original.replace('name: List products\n', 'name: List products\ndescription: Products, newest first\n')}`);
    // Unchanged code leaves the file as it is; changed code keeps the mark.
    const orders = byKey(valid(), 'POST', '/api/shop/orders');
    expect(writeSpec(dir, 'endpoint', orders).changed).toBe(false);
    orders.handler = { enabled: true, code: orders.handler!.code!.replace("'placed'", "'new'") };
    expect(writeSpec(dir, 'endpoint', orders).changed).toBe(true);
    expect(read(dir, 'handlers/orders.js')).toBe(`\uFEFF${orders.handler.code}`);
    const loaded = loadProject(dir);
    expect(loaded.problems).toEqual([]);
    expect(byKey(loaded.bundle, 'GET', '/api/shop/products')).toEqual(products);
    expect(byKey(loaded.bundle, 'POST', '/api/shop/orders')).toEqual(orders);
  });

  it('keeps a changed value\'s own comment, and the comments before the first key', () => {
    const dir = copyOf('valid');
    writeSpec(dir, 'endpoint', { ...byKey(valid(), 'GET', '/api/shop/products'), group: 'Shop' });
    expect(read(dir, 'endpoints/products.yaml')).toContain('group: Shop # group names match regardless of letter case\n');
    writeSpec(dir, 'group', { ...valid().groups[1]!, order: 2 });
    expect(read(dir, 'groups/shop.yaml')).toBe(read(fixture('valid'), 'groups/shop.yaml').replace('order: 1', 'order: 2'));
  });

  it('does not touch a file whose definition is unchanged, however it is formatted', () => {
    const dir = copyOf('valid');
    const result = writeProject(dir, valid());
    expect(result.written).toEqual([]);
    expect(snapshot(dir)).toEqual(snapshot(fixture('valid')));
  });

  it('writes handler code back to its .js file and keeps file: in the YAML', () => {
    const dir = copyOf('valid');
    const spec = byKey(valid(), 'POST', '/api/shop/orders');
    spec.handler = { enabled: true, code: spec.handler!.code!.replace("'placed'", "'new'") };
    expect(writeSpec(dir, 'endpoint', spec)).toMatchObject({ relPath: 'endpoints/orders.yaml', changed: true, handlerFile: 'handlers/orders.js' });
    expect(read(dir, 'handlers/orders.js')).toBe(spec.handler.code);
    expect(read(dir, 'endpoints/orders.yaml')).toBe(read(fixture('valid'), 'endpoints/orders.yaml'));
  });

  it('gives changed code a file of its own when another definition runs the same handler file', () => {
    const dir = copyOf('valid');
    writeFiles(dir, { 'endpoints/orders-put.yaml': read(dir, 'endpoints/orders.yaml').replace('method: POST', 'method: PUT') });
    const shared = read(dir, 'handlers/orders.js');
    const spec = byKey(valid(), 'POST', '/api/shop/orders');
    spec.handler = { enabled: true, code: shared.replace("'placed'", "'new'") };
    expect(writeSpec(dir, 'endpoint', spec)).toMatchObject({ relPath: 'endpoints/orders.yaml', changed: true, handlerFile: 'endpoints/orders.handler.js' });
    expect(read(dir, 'handlers/orders.js')).toBe(shared);
    expect(read(dir, 'endpoints/orders.handler.js')).toBe(spec.handler.code);
    const loaded = loadProject(dir);
    expect(loaded.problems).toEqual([]);
    expect(byKey(loaded.bundle, 'POST', '/api/shop/orders').handler?.code).toBe(spec.handler.code);
    expect(byKey(loaded.bundle, 'PUT', '/api/shop/orders').handler?.code).toBe(shared);
    // Unchanged code leaves the shared file shared.
    const put = byKey(loaded.bundle, 'PUT', '/api/shop/orders');
    expect(writeSpec(dir, 'endpoint', put).changed).toBe(false);
  });

  it('leaves a shared handler file saved with a byte-order mark shared when only the YAML changes', () => {
    const dir = copyOf('valid');
    writeFiles(dir, { 'endpoints/orders-put.yaml': read(dir, 'endpoints/orders.yaml').replace('method: POST', 'method: PUT'), 'handlers/orders.js': `\uFEFF${read(dir, 'handlers/orders.js')}` });
    const spec = byKey(loadProject(dir).bundle, 'POST', '/api/shop/orders');
    spec.description = 'Orders, placed';
    expect(writeSpec(dir, 'endpoint', spec)).toMatchObject({ changed: true, handlerFile: 'handlers/orders.js' });
    expect(existsSync(join(dir, 'endpoints/orders.handler.js'))).toBe(false);
  });

  it('removes a handler file the definition no longer names: a cron job whose action is now an HTTP call', () => {
    const dir = tempDir();
    const job = { name: 'nightly', schedule: '0 3 * * *', action: { type: 'javascript', code: 'log("hi")' } };
    writeProject(dir, { groups: [], endpoints: [], cronJobs: [job], webhooks: [] } as unknown as Bundle, { handlers: 'file' });
    expect(existsSync(join(dir, 'cron/nightly.js'))).toBe(true);
    const written = writeSpec(dir, 'cronJob', { ...job, action: { type: 'http', method: 'GET', url: 'https://example.test/' } });
    expect(written.changed).toBe(true);
    expect(existsSync(join(dir, 'cron/nightly.js'))).toBe(false);
    expect(loadProject(dir).problems).toEqual([]);
  });

  it('keeps a placeholder when the value written is what it resolves to', () => {
    const dir = copyOf('valid');
    const spec = byKey(valid(), 'GET', '/internal/health');
    spec.networkAccess = { enabled: true, allowedDomains: [], allowedIpRanges: ['10.1.0.0/16'] };
    writeSpec(dir, 'endpoint', spec, { placeholders: { env: { OFFICE_RANGE: '10.1.0.0/16' } } });
    expect(read(dir, 'endpoints/health.yaml')).toContain('  allowedIpRanges: ["${env:OFFICE_RANGE}"]\n');
    writeSpec(dir, 'endpoint', spec, { placeholders: { env: { OFFICE_RANGE: '192.168.0.0/16' } } });
    expect(read(dir, 'endpoints/health.yaml')).toContain('  allowedIpRanges: [10.1.0.0/16]\n');
  });

  it('finds the file by natural key, whatever its name, and picks a free name for a new one', () => {
    const dir = copyOf('valid');
    writeFiles(dir, { 'endpoints/shop-orders-get.yaml': 'not: a definition\n' });
    const created = writeSpec(dir, 'endpoint', { ...byKey(valid(), 'POST', '/api/shop/orders'), method: 'GET', handler: undefined });
    expect(created.relPath).toBe('endpoints/shop-orders-get-2.yaml');
  });

  it('refuses a handler file outside the project directory', () => {
    const spec = { ...byKey(valid(), 'POST', '/api/shop/orders'), handler: { enabled: true, code: 'x', file: '../../elsewhere.js' } };
    expect(() => writeSpec(tempDir(), 'endpoint', spec)).toThrow('must be a relative path inside the project directory');
  });
});

describe('removing a definition', () => {
  it('deletes its file and its handler file', () => {
    const dir = copyOf('valid');
    expect(removeSpec(dir, 'endpoint', 'POST /api/shop/orders')).toEqual(['endpoints/orders.yaml', 'handlers/orders.js']);
    expect(existsSync(join(dir, 'endpoints/orders.yaml'))).toBe(false);
    expect(existsSync(join(dir, 'handlers/orders.js'))).toBe(false);
  });

  it('keeps a handler file another definition still uses', () => {
    const dir = copyOf('valid');
    writeFiles(dir, { 'endpoints/orders-put.yaml': read(dir, 'endpoints/orders.yaml').replace('method: POST', 'method: PUT') });
    expect(removeSpec(dir, 'endpoint', 'POST /api/shop/orders')).toEqual(['endpoints/orders.yaml']);
    expect(existsSync(join(dir, 'handlers/orders.js'))).toBe(true);
  });

  it('does nothing for a key no file holds', () => {
    expect(removeSpec(copyOf('valid'), 'group', 'warehouse')).toEqual([]);
  });
});
