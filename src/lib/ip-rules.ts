import { BlockList, isIP, isIPv4 } from 'node:net';

/**
 * Address rules (single addresses and CIDR ranges, IPv4 and IPv6) compiled once into a
 * node:net BlockList. A bad rule throws when compiled, never when a request is checked.
 */
export interface IpMatcher {
  readonly size: number;
  matches(ip: string): boolean;
}

export class InvalidIpRuleError extends Error {
  readonly rule: string;
  constructor(rule: string) {
    super(`invalid IP address or CIDR range: "${rule}"`);
    this.rule = rule;
  }
}

/** `::ffff:10.0.0.1` is the IPv4 client 10.0.0.1 as seen by a dual-stack socket. */
export function normalizeIp(address: string): string {
  const trimmed = address.trim().toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(trimmed);
  if (mapped?.[1] && isIPv4(mapped[1])) return mapped[1];
  return trimmed;
}

export function compileIpRules(rules: readonly string[]): IpMatcher {
  const list = new BlockList();
  for (const rule of rules) addRule(list, rule);
  return {
    size: rules.length,
    matches(ip: string): boolean {
      const address = normalizeIp(ip);
      const family = isIP(address);
      if (family === 0) return false;
      return list.check(address, family === 4 ? 'ipv4' : 'ipv6');
    },
  };
}

function addRule(list: BlockList, rule: string): void {
  const [rawAddress, rawPrefix, ...rest] = rule.trim().split('/');
  if (rawAddress === undefined || rest.length > 0) throw new InvalidIpRuleError(rule);
  const address = normalizeIp(rawAddress);
  const family = isIP(address);
  if (family === 0) throw new InvalidIpRuleError(rule);
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (rawPrefix === undefined) {
    list.addAddress(address, type);
    return;
  }
  if (!/^\d{1,3}$/.test(rawPrefix)) throw new InvalidIpRuleError(rule);
  const prefix = Number(rawPrefix);
  const mappedV4 = family === 4 && rawAddress.includes(':');
  const maxPrefix = family === 4 ? 32 : 128;
  // `::ffff:10.0.0.0/104` is an IPv4-mapped range: shift its prefix to the IPv4 one.
  const effectivePrefix = mappedV4 ? prefix - 96 : prefix;
  if (effectivePrefix < 0 || effectivePrefix > maxPrefix || (mappedV4 && prefix > 128)) throw new InvalidIpRuleError(rule);
  list.addSubnet(address, effectivePrefix, type);
}

/** Loopback and private ranges: the default set of trusted proxies. */
export const PRIVATE_AND_LOOPBACK_RANGES: readonly string[] = [
  '127.0.0.0/8',
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '::1',
  'fc00::/7',
];
