// Which IP addresses outbound requests may not reach unless allow-listed: every address that is not
// a public unicast one. IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4) are
// judged by the IPv4 address inside, so `::ffff:7f00:1` is loopback like 127.0.0.1.
import { BlockList, isIP } from 'node:net';

const RANGES: ReadonlyArray<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'an unspecified ("this network") address'],
  ['10.0.0.0', 8, 'ipv4', 'a private address'],
  ['100.64.0.0', 10, 'ipv4', 'a carrier-grade NAT address'],
  ['127.0.0.0', 8, 'ipv4', 'a loopback address'],
  ['169.254.0.0', 16, 'ipv4', 'a link-local (cloud metadata) address'],
  ['172.16.0.0', 12, 'ipv4', 'a private address'],
  ['192.0.0.0', 24, 'ipv4', 'a reserved address'],
  ['192.0.2.0', 24, 'ipv4', 'a documentation address'],
  ['192.168.0.0', 16, 'ipv4', 'a private address'],
  ['198.18.0.0', 15, 'ipv4', 'a benchmarking address'],
  ['198.51.100.0', 24, 'ipv4', 'a documentation address'],
  ['203.0.113.0', 24, 'ipv4', 'a documentation address'],
  ['224.0.0.0', 4, 'ipv4', 'a multicast address'],
  ['240.0.0.0', 4, 'ipv4', 'a reserved address'],
  ['::', 128, 'ipv6', 'an unspecified address'],
  ['::1', 128, 'ipv6', 'a loopback address'],
  ['100::', 64, 'ipv6', 'a discard address'],
  ['2001:db8::', 32, 'ipv6', 'a documentation address'],
  ['fc00::', 7, 'ipv6', 'a private (unique local) address'],
  ['fe80::', 10, 'ipv6', 'a link-local address'],
  ['fec0::', 10, 'ipv6', 'a site-local address'],
  ['ff00::', 8, 'ipv6', 'a multicast address'],
];

const lists = RANGES.map(([address, prefix, type, reason]) => {
  const list = new BlockList();
  list.addSubnet(address, prefix, type);
  return { list, type, reason };
});

/** Why `address` is refused, or null for a public address. Anything that is not an IP address is refused. */
export function blockedReason(address: string): string | null {
  const plain = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(plain);
  if (family === 0) return 'not an IP address';
  const embedded = family === 6 ? embeddedIpv4(plain) : null;
  const ip = embedded ?? plain;
  const type = embedded !== null || family === 4 ? 'ipv4' : 'ipv6';
  for (const entry of lists) if (entry.type === type && entry.list.check(ip, type)) return entry.reason;
  return null;
}

/** The IPv4 address an IPv6 address carries, for the forms that route to it; else null. */
function embeddedIpv4(address: string): string | null {
  const words = ipv6Words(address);
  if (!words) return null;
  const zeros = (from: number, to: number): boolean => words.slice(from, to).every((w) => w === 0);
  const v4 = (high: number, low: number): string => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible, deprecated), ::ffff:0:a.b.c.d (translated)
  if (zeros(0, 5) && (words[5] === 0xffff || (words[5] === 0 && words[6] !== 0))) return v4(words[6] as number, words[7] as number);
  if (zeros(0, 4) && words[4] === 0xffff && words[5] === 0) return v4(words[6] as number, words[7] as number);
  // 64:ff9b::/96 (NAT64)
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return v4(words[6] as number, words[7] as number);
  // 2002::/16 (6to4)
  if (words[0] === 0x2002) return v4(words[1] as number, words[2] as number);
  return null;
}

function ipv6Words(address: string): number[] | null {
  let text = address.toLowerCase().split('%')[0] as string;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const bytes = dotted[1].split('.').map(Number);
    text = text.slice(0, -dotted[1].length) + `${(((bytes[0] as number) << 8) | (bytes[1] as number)).toString(16)}:${(((bytes[2] as number) << 8) | (bytes[3] as number)).toString(16)}`;
  }
  const [head, tail, ...rest] = text.split('::');
  if (rest.length > 0) return null;
  const part = (s: string | undefined): number[] => (s ? s.split(':').map((w) => parseInt(w, 16)) : []);
  const left = part(head);
  const right = part(tail);
  const fill = tail === undefined ? 0 : 8 - left.length - right.length;
  const words = [...left, ...new Array<number>(Math.max(0, fill)).fill(0), ...right];
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : null;
}
