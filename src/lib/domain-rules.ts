/**
 * Domain rules for network access: `example.com` (exact) or `*.example.com` (any subdomain, not
 * the bare domain). Compiled once; an invalid rule throws when compiled, not per request.
 */
export interface DomainMatcher {
  readonly size: number;
  matches(domain: string): boolean;
}

export class InvalidDomainRuleError extends Error {
  readonly rule: string;
  constructor(rule: string) {
    super(`invalid domain rule: "${rule}" (use example.com, *.example.com or localhost)`);
    this.rule = rule;
  }
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

function validHostname(name: string): boolean {
  return name.length > 0 && name.length <= 253 && name.split('.').every((label) => LABEL.test(label));
}

export function compileDomainRules(rules: readonly string[]): DomainMatcher {
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const raw of rules) {
    const rule = raw.trim().toLowerCase();
    if (rule.startsWith('*.')) {
      const base = rule.slice(2);
      if (!validHostname(base)) throw new InvalidDomainRuleError(raw);
      suffixes.push('.' + base);
    } else {
      if (!validHostname(rule)) throw new InvalidDomainRuleError(raw);
      exact.add(rule);
    }
  }
  return {
    size: rules.length,
    matches(domain: string): boolean {
      const name = domain.toLowerCase();
      return exact.has(name) || suffixes.some((suffix) => name.endsWith(suffix) && name.length > suffix.length);
    },
  };
}

/**
 * The domain a request claims to come from: the Origin header, else the Referer, else Host.
 * Any non-browser client can set all three, so domain rules only restrict browsers.
 */
export function requestDomain(headers: { origin?: string | undefined; referer?: string | undefined; host?: string | undefined }): string | null {
  for (const value of [headers.origin, headers.referer]) {
    if (!value) continue;
    // An opaque origin (a sandboxed frame, a cross-origin redirect) hides the page's domain: it
    // must not fall through to Host, which names this server and would let any page in.
    if (value === 'null') return null;
    try {
      return new URL(value).hostname.toLowerCase().replace(/^\[|\]$/g, '');
    } catch {
      return null;
    }
  }
  if (headers.host) {
    try {
      return new URL(`http://${headers.host}`).hostname.toLowerCase().replace(/^\[|\]$/g, '');
    } catch {
      return null;
    }
  }
  return null;
}
