import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findPlaceholders, hasPlaceholder, placeholderProblems, resolvePlaceholders } from '../../src/project/placeholders.ts';
import { tempDir } from './helpers.ts';

const spec = {
  name: 'Partner feed',
  description: 'Uses ${env:PARTNER_NAME} with key ${file:/run/secrets/partner-key}',
  networkAccess: { enabled: true, allowedDomains: ['${env:PARTNER_DOMAIN}'], allowedIpRanges: [] },
  handler: { enabled: true, code: 'async function handler(req) { return { status: 200, data: `$${req.query.price}` }; }' },
};

describe('finding placeholders', () => {
  it('finds ${env:NAME} and ${file:/path} in string values, with their paths', () => {
    expect(findPlaceholders(spec)).toEqual([
      { path: 'description', source: 'env', name: 'PARTNER_NAME', text: '${env:PARTNER_NAME}' },
      { path: 'description', source: 'file', name: '/run/secrets/partner-key', text: '${file:/run/secrets/partner-key}' },
      { path: 'networkAccess.allowedDomains.0', source: 'env', name: 'PARTNER_DOMAIN', text: '${env:PARTNER_DOMAIN}' },
    ]);
  });

  it('leaves template strings of handler code, other schemes and escaped placeholders alone', () => {
    expect(hasPlaceholder('`${price}` and ${vault:x} and $${env:LITERAL}')).toBe(false);
    expect(findPlaceholders({ code: 'const s = `$${total} ${env}`;' })).toEqual([]);
  });

  it('reports placeholders that can never resolve', () => {
    expect(placeholderProblems({ a: '${env:1BAD}', b: ['${file:secrets/x}'] })).toEqual([
      { path: 'a', message: 'has ${env:1BAD}: not a valid environment variable name' },
      { path: 'b.0', message: 'has ${file:secrets/x}: the file path must be absolute' },
    ]);
  });
});

describe('resolving placeholders', () => {
  it('returns a resolved copy and leaves the value as written', () => {
    const dir = tempDir();
    const key = join(dir, 'partner-key');
    writeFileSync(key, 's3cret\n');
    const value = { ...spec, description: `Uses \${env:PARTNER_NAME} with key \${file:${key}}` };
    const resolved = resolvePlaceholders(value, { env: { PARTNER_NAME: 'Acme', PARTNER_DOMAIN: 'acme.example' } });
    expect(resolved).toEqual({
      ok: true,
      value: { ...spec, description: 'Uses Acme with key s3cret', networkAccess: { ...spec.networkAccess, allowedDomains: ['acme.example'] } },
    });
    expect(value.description).toBe(`Uses \${env:PARTNER_NAME} with key \${file:${key}}`);
  });

  it('turns an escaped $${env:NAME} into the literal text', () => {
    expect(resolvePlaceholders({ a: 'write $${env:HOME} to mean the variable' }, { env: {} })).toEqual({ ok: true, value: { a: 'write ${env:HOME} to mean the variable' } });
  });

  it('accepts a variable that is set but empty', () => {
    expect(resolvePlaceholders('[${env:EMPTY}]', { env: { EMPTY: '' } })).toEqual({ ok: true, value: '[]' });
  });

  it('names every missing variable and unreadable file', () => {
    const result = resolvePlaceholders(spec, { env: { PARTNER_NAME: 'Acme' }, readFile: () => undefined });
    expect(result).toEqual({
      ok: false,
      problems: [
        { path: 'description', message: 'needs the file /run/secrets/partner-key, which cannot be read' },
        { path: 'networkAccess.allowedDomains.0', message: 'needs the environment variable PARTNER_DOMAIN, which is not set' },
      ],
    });
  });

  it('prefixes the paths of its problems with `at`, the place of the value in a bundle', () => {
    expect(resolvePlaceholders({ description: '${env:DYN_NOT_SET}' }, { env: {}, at: 'endpoints[GET /api/x]' })).toEqual({
      ok: false,
      problems: [{ path: 'endpoints[GET /api/x].description', message: 'needs the environment variable DYN_NOT_SET, which is not set' }],
    });
  });

  it('reads process.env and the file system by default', () => {
    process.env.DYN_PLACEHOLDER_TEST = 'from env';
    try {
      expect(resolvePlaceholders({ a: '${env:DYN_PLACEHOLDER_TEST}' })).toEqual({ ok: true, value: { a: 'from env' } });
      expect(resolvePlaceholders({ a: '${file:/nonexistent/dyn-secret}' })).toEqual({ ok: false, problems: [{ path: 'a', message: 'needs the file /nonexistent/dyn-secret, which cannot be read' }] });
    } finally {
      delete process.env.DYN_PLACEHOLDER_TEST;
    }
  });

  it('keeps a __proto__ key a plain key', () => {
    const value = JSON.parse('{"__proto__": {"x": "${env:X}"}}') as Record<string, unknown>;
    const result = resolvePlaceholders(value, { env: { X: '1' } });
    expect(result.ok && Object.getPrototypeOf(result.value)).toBe(Object.prototype);
    expect(result.ok && JSON.stringify(result.value)).toBe('{"__proto__":{"x":"1"}}');
  });
});
