import { describe, expect, it } from 'vitest';
import { compileIpRules, InvalidIpRuleError, normalizeIp, PRIVATE_AND_LOOPBACK_RANGES } from '../../src/lib/ip-rules.ts';

describe('compileIpRules', () => {
  it.each([
    ['an IPv4 address', '192.168.1.7', ['192.168.1.7'], ['192.168.1.8', '192.168.1.70']],
    ['an IPv4 CIDR range', '10.0.0.0/8', ['10.0.0.1', '10.255.255.255'], ['11.0.0.1', '9.255.255.255']],
    ['a /32', '203.0.113.9/32', ['203.0.113.9'], ['203.0.113.10']],
    ['a /0 (every IPv4 address)', '0.0.0.0/0', ['1.2.3.4', '255.255.255.255'], ['::1']],
    ['an IPv6 literal', '::1', ['::1', '0:0:0:0:0:0:0:1'], ['::2', '127.0.0.1']],
    ['an IPv6 CIDR range', '2001:db8::/32', ['2001:db8::1', '2001:db8:ffff::1', '2001:DB8::abcd'], ['2001:db9::1', '10.0.0.1']],
    ['an IPv4-mapped IPv6 range', '::ffff:172.16.0.0/108', ['172.16.5.5', '::ffff:172.31.0.1'], ['172.32.0.1']],
  ])('matches %s and nothing outside it', (_name, rule, inside, outside) => {
    const matcher = compileIpRules([rule]);
    for (const ip of inside) expect(matcher.matches(ip), ip).toBe(true);
    for (const ip of outside) expect(matcher.matches(ip), ip).toBe(false);
  });

  it.each(['::ffff:10.0.0.1', '::FFFF:10.1.2.3', '::ffff:a00:1'])('treats the IPv4-mapped client %s as IPv4 (matches 10.0.0.0/8)', (ip) => {
    expect(compileIpRules(['10.0.0.0/8']).matches(ip)).toBe(true);
  });

  it('matches when any one of several rules does, and reports how many rules it holds', () => {
    const matcher = compileIpRules(['10.0.0.0/8', '2001:db8::/32', ' 192.168.1.7 ']);
    expect(matcher.size).toBe(3);
    expect(['10.1.1.1', '2001:db8::5', '192.168.1.7'].map((ip) => matcher.matches(ip))).toEqual([true, true, true]);
    expect(matcher.matches('8.8.8.8')).toBe(false);
  });

  it('an empty rule list matches nothing', () => {
    const matcher = compileIpRules([]);
    expect(matcher.size).toBe(0);
    expect(matcher.matches('127.0.0.1')).toBe(false);
  });

  it.each(['', 'x', 'not-an-ip', '10.0.0', '10.0.0.1:8080', '[::1]'])('never matches the non-address %j', (ip) => {
    expect(compileIpRules(['0.0.0.0/0', '::/0']).matches(ip)).toBe(false);
  });

  it.each([
    ['10.0.0.0/33', 'an IPv4 prefix above 32'],
    ['abc', 'no address at all'],
    ['1.2.3.4/x', 'a non-numeric prefix'],
    ['::1/129', 'an IPv6 prefix above 128'],
    ['', 'an empty rule'],
    ['10.0.0.0/', 'an empty prefix'],
    ['10.0.0.0/-1', 'a negative prefix'],
    ['10.0.0.0/8/8', 'two prefixes'],
    ['1.2.3', 'a truncated IPv4 address'],
    ['::ffff:10.0.0.0/95', 'a mapped range wider than the IPv4 space'],
  ])('throws InvalidIpRuleError at compile time for %j (%s)', (rule) => {
    expect(() => compileIpRules(['127.0.0.1', rule])).toThrow(InvalidIpRuleError);
    try {
      compileIpRules([rule]);
    } catch (error) {
      expect((error as InvalidIpRuleError).rule).toBe(rule);
      expect((error as Error).message).toContain(`"${rule}"`);
    }
  });

  it('the default trusted-proxy ranges cover loopback and private networks only', () => {
    const matcher = compileIpRules(PRIVATE_AND_LOOPBACK_RANGES);
    for (const ip of ['127.0.0.1', '::1', '10.2.3.4', '172.16.0.1', '172.31.255.255', '192.168.0.1', 'fd00::1', '::ffff:192.168.1.1']) {
      expect(matcher.matches(ip), ip).toBe(true);
    }
    for (const ip of ['8.8.8.8', '172.32.0.1', '192.169.0.1', '2001:db8::1', '::ffff:8.8.8.8']) expect(matcher.matches(ip), ip).toBe(false);
  });
});

describe('normalizeIp', () => {
  it.each([
    ['::ffff:10.0.0.1', '10.0.0.1'],
    [' ::FFFF:192.168.0.1 ', '192.168.0.1'],
    ['2001:DB8::1', '2001:db8::1'],
    ['10.0.0.1', '10.0.0.1'],
    ['::ffff:999.0.0.1', '::ffff:999.0.0.1'],
  ])('turns %j into %j', (input, expected) => {
    expect(normalizeIp(input)).toBe(expected);
  });
});
