import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NETWORK_ACCESS_SCHEMA } from '../../src/model/endpoint.ts';
import { FIELD_TYPE_NAMES, FIELD_TYPES } from '../../src/model/field-types/index.ts';
import type { Bundle, EndpointSpec } from '../../src/project/bundle.ts';
import { endpointKind, groupKind, keyOf, KINDS } from '../../src/project/kinds.ts';
import { validateBundle, validateSpec } from '../../src/project/validate-bundle.ts';

const schemaFile = (name: string): Record<string, any> => JSON.parse(readFileSync(join(import.meta.dirname, '../../schemas', name), 'utf8'));

const endpoint = (overrides: Partial<EndpointSpec> & Record<string, unknown> = {}): EndpointSpec =>
  ({ name: 'Items', path: '/api/items', method: 'GET', accessType: 'public', schema: {}, ...overrides }) as EndpointSpec;

describe('the JSON Schemas in schemas/', () => {
  it.each(KINDS.map((kind) => [kind.kind, kind.schemaFile]))('%s: %s has an $id, refuses unknown fields and describes every property', (_kind, file) => {
    const schema = schemaFile(file);
    expect(schema.$id).toBe(`https://dynctl.dev/schemas/${file}`);
    expect(schema.additionalProperties).toBe(false);
    const undescribed: string[] = [];
    const visit = (node: unknown, path: string): void => {
      if (typeof node !== 'object' || node === null) return;
      const properties = (node as Record<string, any>).properties as Record<string, any> | undefined;
      for (const [name, property] of Object.entries(properties ?? {})) if (!property.description && !property.$ref) undescribed.push(`${path}.${name}`);
      // `if` conditions of the field-type switch describe no property of their own.
      for (const [key, child] of Object.entries(node)) if (key !== 'if') visit(child, `${path}.${key}`);
    };
    visit(schema, '');
    expect(undescribed).toEqual([]);
  });

  it('lists the field types of the registry, each with exactly its options (indexed and unique on the types that can be indexed)', () => {
    const schema = schemaFile('endpoint.schema.json');
    expect(schema.definitions.field.properties.type.enum).toEqual(FIELD_TYPE_NAMES);
    for (const type of Object.values(FIELD_TYPES)) {
      const def = schema.definitions[`${type.name}Field`];
      const indexing = 'indexedAs' in type ? ['indexed', 'unique'] : [];
      expect(Object.keys(def.properties).sort(), type.name).toEqual(['type', 'description', 'required', 'defaultValue', ...indexing, ...Object.keys(type.options.properties)].sort());
      expect(def.required, type.name).toEqual(['type', ...(('required' in type.options ? type.options.required : undefined) ?? [])]);
      expect(def.additionalProperties, type.name).toBe(false);
    }
  });

  it('carries the network rules of the API (model/endpoint.ts) in both files', () => {
    const strip = (node: unknown): unknown =>
      Array.isArray(node) ? node.map(strip) : typeof node === 'object' && node !== null ? Object.fromEntries(Object.entries(node).filter(([key]) => key !== 'description').map(([key, value]) => [key, strip(value)])) : node;
    expect(strip(schemaFile('endpoint.schema.json').properties.networkAccess)).toEqual(NETWORK_ACCESS_SCHEMA);
    expect(strip(schemaFile('endpoint-group.schema.json').definitions.networkAccess)).toEqual(NETWORK_ACCESS_SCHEMA);
  });
});

describe('validateSpec', () => {
  it('accepts a minimal endpoint and a minimal group', () => {
    expect(validateSpec('endpoint', endpoint())).toEqual([]);
    expect(validateSpec('group', { name: 'Shop' })).toEqual([]);
  });

  const cases: Array<{ name: string; kind: 'endpoint' | 'group'; value: unknown; problems: Array<{ path: string; message: string }> }> = [
    { name: 'a definition that is not a mapping', kind: 'group', value: ['Shop'], problems: [{ path: '', message: 'must be a mapping' }] },
    { name: 'a missing required field', kind: 'group', value: { color: '#fff' }, problems: [{ path: 'name', message: 'is required' }] },
    { name: 'a blank name', kind: 'group', value: { name: '  ' }, problems: [{ path: 'name', message: 'must not be blank' }] },
    { name: 'a colour in another notation', kind: 'group', value: { name: 'Shop', color: 'red' }, problems: [{ path: 'color', message: 'must be a colour written #rgb or #rrggbb' }] },
    { name: 'an unknown method', kind: 'endpoint', value: endpoint({ method: 'FETCH' as never }), problems: [{ path: 'method', message: 'must be one of: GET, POST, PUT, PATCH, DELETE' }] },
    { name: 'a group that is neither a name nor null', kind: 'endpoint', value: endpoint({ group: 3 as never }), problems: [{ path: 'group', message: 'must be a string or null' }] },
    { name: 'a database id instead of group names', kind: 'endpoint', value: endpoint({ allowedGroupIds: ['65a1b2c3d4e5f60718293a4b'] }), problems: [{ path: 'allowedGroupIds', message: expect.stringMatching(/^is not a known field \(known: name, /) }] },
    { name: 'an invalid path', kind: 'endpoint', value: endpoint({ path: '/api/it ems' }), problems: [{ path: 'path', message: 'is not a valid path: invalid path segment "it ems" (use letters, digits, . _ ~ - or :param)' }] },
    { name: 'a path shadowing the service', kind: 'endpoint', value: endpoint({ path: '/api/users/extra' }), problems: [{ path: 'path', message: 'would shadow /api/users, which the service serves itself' }] },
    { name: 'a field rule, in the API\'s words', kind: 'endpoint', value: endpoint({ schema: { price: { type: 'number', minimum: 5, maximum: 1 } } }), problems: [{ path: 'schema.price.minimum', message: 'must not be greater than maximum' }] },
    { name: 'a reference into an item path', kind: 'endpoint', value: endpoint({ schema: { tags: { type: 'array', items: { type: 'reference', ref: '/api/tags/' } } } }), problems: [{ path: 'schema.tags.items.ref', message: 'must be a normalized collection path without :parameters, such as /api/shop/categories' }] },
    { name: 'an indexed field on a path with parameters', kind: 'endpoint', value: endpoint({ path: '/api/shops/:shop/items', schema: { sku: { type: 'string', unique: true } } }), problems: [{ path: 'schema.sku.unique', message: 'cannot be set on a path with :parameters (/api/shops/:shop/items): indexes are kept per literal path' }] },
    { name: 'an indexed json field, in the API\'s words', kind: 'endpoint', value: endpoint({ schema: [{ name: 'extra', type: 'json', indexed: true }] as never }), problems: [{ path: 'schema.extra.indexed', message: 'cannot be set on a json field: only scalar fields can be indexed (string, number, boolean, datetime, reference)' }] },
    { name: 'group access without groups', kind: 'endpoint', value: endpoint({ accessType: 'group' }), problems: [{ path: 'accessType', message: 'is group, so allowedGroups must name at least one user group' }] },
    { name: 'an invalid IP rule', kind: 'endpoint', value: endpoint({ networkAccess: { enabled: true, allowedDomains: [], allowedIpRanges: ['10.0.0.1', '300.1.1.1'] } }), problems: [{ path: 'networkAccess.allowedIpRanges.1', message: 'is an invalid IP address or CIDR range: "300.1.1.1"' }] },
    { name: 'handler code that does not compile', kind: 'endpoint', value: endpoint({ handler: { enabled: true, code: 'async function handler(req, db) { return {' } }), problems: [{ path: 'handler.code', message: expect.stringMatching(/^does not compile: Syntax error in handler code at line 1/) }] },
    { name: 'handler code without a handler function', kind: 'endpoint', value: endpoint({ handler: { enabled: true, code: 'const x = 1;' } }), problems: [{ path: 'handler.code', message: 'does not compile: Handler code must define async function handler(req, db)' }] },
    { name: 'a handler with code and file', kind: 'endpoint', value: endpoint({ handler: { enabled: true, code: 'async function handler() {}', file: 'x.js' } }), problems: [{ path: 'handler', message: 'takes code or file, not both' }] },
    { name: 'a malformed placeholder', kind: 'endpoint', value: endpoint({ description: 'key ${env:not a name} and ${file:relative.txt}' }), problems: [{ path: 'description', message: 'has ${env:not a name}: not a valid environment variable name' }, { path: 'description', message: 'has ${file:relative.txt}: the file path must be absolute' }] },
  ];

  it.each(cases)('reports $name', ({ kind, value, problems }) => {
    expect(validateSpec(kind, value)).toEqual(problems);
  });

  it('accepts the API\'s array form (a definition copied from GET /api/endpoints), refEndpointId left to apply time', () => {
    const schema = [
      { name: 'title', type: 'string', required: true, order: 0 },
      { name: 'category', type: 'reference', required: false, order: 1, refEndpointId: '65a1b2c3d4e5f60718293a4b', ref: '/api/shop/categories' },
      { name: 'owner', type: 'reference', refEndpointId: '65a1b2c3d4e5f60718293a4c' },
      { name: 'size', type: 'object', children: [{ name: 'width', type: 'number' }] },
    ];
    expect(validateSpec('endpoint', endpoint({ schema: schema as never }))).toEqual([]);
    expect(validateSpec('endpoint', endpoint({ schema: [{ name: 'sku', type: 'string', unique: true }, { name: 'price', type: 'number', indexed: true }] as never }))).toEqual([]);
    expect(validateSpec('endpoint', endpoint({ schema: [{ name: 'a', type: 'string' }, { name: 'a', type: 'text' }] as never }))).toEqual([{ path: 'schema.1.name', message: 'repeats the field name "a"' }]);
    expect(validateSpec('endpoint', endpoint({ schema: [{ name: 'a', type: 'text' }] as never }))).toEqual([{ path: 'schema.a.type', message: 'must be one of: string, number, boolean, array, object, datetime, json, reference' }]);
  });

  it('leaves a placeholder\'s content to apply time, but not its type', () => {
    expect(validateSpec('group', { name: 'Shop', color: '${env:BRAND_COLOR}', networkAccess: { enabled: true, allowedDomains: ['${env:DOMAIN}'] } })).toEqual([]);
    expect(validateSpec('endpoint', endpoint({ apiVersion: '${env:VERSION}', path: '/api/${env:AREA}/items' }))).toEqual([]);
    expect(validateSpec('endpoint', endpoint({ retentionDays: '${env:DAYS}' as never }))).toEqual([{ path: 'retentionDays', message: 'must be an integer or null' }]);
  });
});

describe('validateBundle', () => {
  const valid: Bundle = {
    groups: [{ name: 'Shop' }],
    endpoints: [endpoint({ group: 'SHOP' }), endpoint({ method: 'POST', group: 'Shop', accessType: 'group', allowedGroups: ['Customers'] })],
    cronJobs: [],
    webhooks: [],
  };

  it('accepts a bundle whose references all resolve (group names regardless of case)', () => {
    expect(validateBundle(valid)).toEqual([]);
  });

  it('names each definition by its natural key', () => {
    const bundle: Bundle = {
      groups: [{ name: 'Shop' }, { name: 'shop ' }, { color: '#fff' } as never],
      endpoints: [endpoint({ schema: { a: { type: 'strin' } } }), endpoint({ path: '/api/items/', group: 'Warehouse' })],
      cronJobs: [],
      webhooks: [],
    };
    expect(validateBundle(bundle)).toEqual([
      { path: 'groups[2].name', message: 'is required' },
      { path: 'endpoints[GET /api/items].schema.a.type', message: 'must be one of: string, number, boolean, array, object, datetime, json, reference' },
      { path: 'groups[shop].name', message: 'duplicates the endpoint group "Shop" in groups[0]' },
      { path: 'endpoints[GET /api/items].path', message: 'duplicates the endpoint GET /api/items in endpoints[0]' },
      { path: 'endpoints[GET /api/items].group', message: 'names the endpoint group "Warehouse", which is not in the project' },
    ]);
  });

  it('reports lists that are not lists', () => {
    expect(validateBundle({ groups: {}, endpoints: [] } as never)).toEqual([{ path: 'groups', message: 'must be a list' }]);
  });
});

describe('the kinds registry', () => {
  it('lists groups before endpoints (endpoints refer to groups), cron jobs and webhooks last', () => {
    expect(KINDS.map((kind) => kind.kind)).toEqual(['group', 'endpoint', 'cronJob', 'webhook']);
  });

  it('derives natural keys and file names', () => {
    expect(groupKind.key({ name: ' Shop ' })).toBe('shop');
    expect(groupKind.fileName({ name: 'Shop & Café' })).toBe('shop-cafe.yaml');
    expect(endpointKind.key(endpoint({ path: 'api/items/' }))).toBe('GET /api/items');
    expect(endpointKind.fileName(endpoint({ method: 'POST', path: '/api/shop/:shopId/items' }))).toBe('shop-shopid-items-post.yaml');
    expect(endpointKind.fileName(endpoint({ path: '/' }))).toBe('root-get.yaml');
    expect(keyOf(endpointKind, { method: 'GET' })).toBeUndefined();
  });
});
