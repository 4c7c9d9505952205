// The outbound allow list (setting `outboundAllowList`): entries `host:port` (any scheme) or origins
// `http(s)://host[:port]` (that scheme only; the port defaults to the scheme's). Hosts are read by
// the WHATWG URL parser, the same one that reads the targets, so `2130706433:80`, `0x7f000001:80`
// and `127.0.0.1:80` are one entry. Compiled once; a bad entry throws when compiled.

export interface HostPortTarget {
  /** `http:` or `https:`. */
  protocol: string;
  /** As the URL parser prints it: lower case, IPv4 dotted, IPv6 in brackets. */
  hostname: string;
  port: number;
}

export interface HostPortMatcher {
  readonly size: number;
  matches(target: HostPortTarget): boolean;
}

export class InvalidHostPortRuleError extends Error {
  readonly rule: string;
  constructor(rule: string) {
    super(`invalid outbound allow-list entry "${rule}" (use host:port or an origin such as https://host:8443)`);
    this.rule = rule;
  }
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

/**
 * A host as the URL parser prints it that can name a machine: an IP address, or DNS labels of
 * letters, digits, `-` and `_`. The parser takes more (`*`, `!`, `$`, …), which no lookup finds:
 * an allow-list entry `*:8080` would read as a wildcard and match nothing.
 */
export function isHostName(hostname: string): boolean {
  if (hostname.startsWith('[')) return hostname.endsWith(']');
  return hostname.length <= 253 && /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/.test(hostname);
}

export function compileHostPortRules(rules: readonly string[]): HostPortMatcher {
  const keys = new Set<string>();
  for (const rule of rules) keys.add(ruleKey(rule));
  return {
    size: keys.size,
    matches: (target) => keys.has(`*//${target.hostname}:${target.port}`) || keys.has(`${target.protocol}//${target.hostname}:${target.port}`),
  };
}

function ruleKey(raw: string): string {
  const rule = raw.trim();
  const origin = /^[a-z][a-z0-9+.-]*:\/\//i.test(rule);
  let url: URL;
  try {
    url = new URL(origin ? rule : `http://${rule}`);
  } catch {
    throw new InvalidHostPortRuleError(raw);
  }
  const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password && !rule.endsWith('/');
  if (!bare || !isHostName(url.hostname) || !(url.protocol in DEFAULT_PORTS)) throw new InvalidHostPortRuleError(raw);
  if (!origin && url.port === '') {
    // `host:port` needs its port (an explicit :80 is dropped by the parser, so look at the text).
    if (!/:\d{1,5}$/.test(rule)) throw new InvalidHostPortRuleError(raw);
    return `*//${url.hostname}:80`;
  }
  const port = url.port === '' ? (DEFAULT_PORTS[url.protocol] as number) : Number(url.port);
  return `${origin ? url.protocol : '*'}//${url.hostname}:${port}`;
}

/** The target of a parsed URL, with its effective port. */
export function targetOf(url: URL): HostPortTarget {
  return { protocol: url.protocol, hostname: url.hostname, port: url.port === '' ? (DEFAULT_PORTS[url.protocol] ?? 0) : Number(url.port) };
}
