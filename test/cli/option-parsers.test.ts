import { describe, expect, it } from 'vitest';
import { tokenExpired } from '../../src/cli/client.ts';
import { normalizeServer } from '../../src/cli/config-store.ts';
import { collectHeader, parseExpiry, parseMethod, parsePermissions } from '../../src/cli/option-parsers.ts';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');

describe('flag values', () => {
  it.each([
    { value: '30d', expected: '2026-12-21T12:00:00.000Z' },
    { value: '12h', expected: '2026-11-22T00:00:00.000Z' },
    { value: '2w', expected: '2026-12-05T12:00:00.000Z' },
    { value: '2027-01-31', expected: '2027-01-31T00:00:00.000Z' },
    { value: '2027-01-31T08:30:00+02:00', expected: '2027-01-31T06:30:00.000Z' },
  ])('--expires $value means $expected', ({ value, expected }) => {
    expect(parseExpiry(value, NOW)).toBe(expected);
  });

  it.each(['tomorrow', '30', '30y', '2026-11-20', '2027-13-45'])('--expires %s is refused', (value) => {
    expect(() => parseExpiry(value, NOW)).toThrow();
  });

  it('--permissions splits, trims, deduplicates and knows the permission names', () => {
    expect(parsePermissions(' view, manage_api,view ')).toEqual(['view', 'manage_api']);
    expect(() => parsePermissions('view,admin')).toThrow('unknown permission "admin"');
  });

  it('--header collects Name: value pairs', () => {
    expect(collectHeader('X-Trace: a:b', collectHeader('Accept: text/plain'))).toEqual({ accept: 'text/plain', 'x-trace': 'a:b' });
    expect(() => collectHeader('no colon')).toThrow();
  });

  it.each(['GET', 'post', 'Put', 'PATCH', 'delete', 'HEAD', 'options'])('call accepts the method %s, upper-cased', (method) => {
    expect(parseMethod(method)).toBe(method.toUpperCase());
  });

  it.each(['FOO', 'CONNECT', 'TRACE', 'G E T', ''])('call refuses the method "%s"', (method) => {
    expect(() => parseMethod(method)).toThrow('is not an HTTP method dynctl can send');
  });

  it('server URLs are normalized and must be http(s)', () => {
    expect(normalizeServer('http://127.0.0.1:3000/')).toBe('http://127.0.0.1:3000');
    expect(normalizeServer('127.0.0.1:3000')).toBe('http://127.0.0.1:3000');
    expect(normalizeServer('https://example.test/dyn/')).toBe('https://example.test/dyn');
    expect(() => normalizeServer('ftp://127.0.0.1')).toThrow('use http:// or https://');
  });
});

describe('access token expiry', () => {
  const jwt = (claims: object): string => `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
  it.each([
    { name: 'a passed exp', token: jwt({ exp: NOW / 1000 - 1 }), expired: true },
    { name: 'an exp within the 10 s skew', token: jwt({ exp: NOW / 1000 + 5 }), expired: true },
    { name: 'a future exp', token: jwt({ exp: NOW / 1000 + 600 }), expired: false },
    { name: 'no exp', token: jwt({}), expired: false },
    { name: 'not a JWT', token: 'garbage', expired: false },
  ])('$name → expired: $expired', ({ token, expired }) => {
    expect(tokenExpired(token, NOW)).toBe(expired);
  });
});
