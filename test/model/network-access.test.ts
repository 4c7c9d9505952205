import { describe, expect, it } from 'vitest';
import { compileDomainRules, InvalidDomainRuleError, requestDomain } from '../../src/lib/domain-rules.ts';
import { AppError } from '../../src/lib/errors.ts';
import { assertValidNetworkAccess, compileNetworkPolicy, effectiveRules, type NetworkAccess } from '../../src/model/network-access.ts';

const on = (allowedDomains: string[], allowedIpRanges: string[]): NetworkAccess => ({ enabled: true, allowedDomains, allowedIpRanges });
const off = (allowedDomains: string[] = [], allowedIpRanges: string[] = []): NetworkAccess => ({ enabled: false, allowedDomains, allowedIpRanges });

describe('domain rules', () => {
  it.each([
    ['example.com', 'example.com', true],
    ['example.com', 'EXAMPLE.com', true],
    ['example.com', 'a.example.com', false],
    ['*.example.com', 'a.example.com', true],
    ['*.example.com', 'b.a.example.com', true],
    ['*.example.com', 'example.com', false],
    ['*.example.com', 'badexample.com', false],
    ['localhost', 'localhost', true],
  ])('%s matches %s: %s', (rule, domain, expected) => {
    expect(compileDomainRules([rule]).matches(domain)).toBe(expected);
  });

  it.each(['', 'http://example.com', 'exa mple.com', '*.', '**.example.com', 'example.com/path', '-bad.com'])('refuses the rule %j when compiled', (rule) => {
    expect(() => compileDomainRules([rule])).toThrow(InvalidDomainRuleError);
  });

  it('reads the domain from Origin, then Referer, then Host', () => {
    expect(requestDomain({ origin: 'https://a.example.com', referer: 'https://b.example.com/x', host: 'c.example.com' })).toBe('a.example.com');
    expect(requestDomain({ referer: 'https://b.example.com/x?y', host: 'c.example.com' })).toBe('b.example.com');
    expect(requestDomain({ host: 'c.example.com:8080' })).toBe('c.example.com');
    expect(requestDomain({})).toBeNull();
  });

  it('takes Origin: null (an opaque origin) as no domain at all, not as a reason to read Host', () => {
    expect(requestDomain({ origin: 'null', host: 'c.example.com' })).toBeNull();
    expect(requestDomain({ origin: 'null', referer: 'https://b.example.com/x', host: 'c.example.com' })).toBeNull();
  });
});

describe('inheritance from the endpoint group', () => {
  const endpoint = on(['endpoint.example.com'], []);
  const group = on(['group.example.com'], []);
  it.each([
    ['endpoint off + inherit + group on → group rules', off(), true, group, ['group.example.com']],
    ['both on + inherit → union', endpoint, true, group, ['endpoint.example.com', 'group.example.com']],
    ['endpoint on + no inherit → endpoint only', endpoint, false, group, ['endpoint.example.com']],
    ['endpoint off + no inherit → none', off(), false, group, null],
    ['endpoint on + inherit + group off → endpoint only', endpoint, true, off(['group.example.com']), ['endpoint.example.com']],
    ['endpoint off + inherit + no group → none', off(), true, undefined, null],
  ])('%s', (_name, own, inherit, grp, expected) => {
    const rules = effectiveRules(own, inherit, grp);
    expect(rules ? rules.allowedDomains : null).toEqual(expected);
  });
});

describe('a compiled policy', () => {
  const request = (ip: string, origin?: string) => ({ ip, origin, host: 'api.local' });

  it('with domains only, needs a matching domain', () => {
    const policy = compileNetworkPolicy(on(['app.example.com'], []));
    expect(policy.allows(request('10.0.0.1', 'https://app.example.com'))).toBe(true);
    expect(policy.allows(request('10.0.0.1', 'https://evil.example.com'))).toBe(false);
  });

  it('with IPs only, needs a matching IP (IPv4, CIDR, IPv6, IPv4-mapped)', () => {
    const policy = compileNetworkPolicy(on([], ['10.0.0.0/8', '2001:db8::/32', '192.168.1.5']));
    expect(policy.allows(request('10.1.2.3'))).toBe(true);
    expect(policy.allows(request('::ffff:10.1.2.3'))).toBe(true);
    expect(policy.allows(request('2001:db8::1'))).toBe(true);
    expect(policy.allows(request('192.168.1.5'))).toBe(true);
    expect(policy.allows(request('192.168.1.6', 'https://app.example.com'))).toBe(false);
  });

  it('with both, either may match', () => {
    const policy = compileNetworkPolicy(on(['app.example.com'], ['10.0.0.0/8']));
    expect(policy.allows(request('10.0.0.1', 'https://other.com'))).toBe(true);
    expect(policy.allows(request('8.8.8.8', 'https://app.example.com'))).toBe(true);
    expect(policy.allows(request('8.8.8.8', 'https://other.com'))).toBe(false);
  });

  it('enabled with both lists empty does not filter', () => {
    expect(compileNetworkPolicy(on([], [])).allows(request('8.8.8.8'))).toBe(true);
    expect(compileNetworkPolicy(null).allows(request('8.8.8.8'))).toBe(true);
  });

  it('an invalid rule is a 400 naming it at save time', () => {
    expect(() => assertValidNetworkAccess(on([], ['10.0.0.0/33']))).toThrow(AppError);
    expect(() => assertValidNetworkAccess(on(['not a domain'], []))).toThrow(/allowedDomains/);
  });
});
