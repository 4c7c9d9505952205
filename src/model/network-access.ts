import { compileDomainRules, InvalidDomainRuleError, requestDomain, type DomainMatcher } from '../lib/domain-rules.ts';
import { badRequest } from '../lib/errors.ts';
import { compileIpRules, InvalidIpRuleError, type IpMatcher } from '../lib/ip-rules.ts';

/**
 * Network access rules of dynamic endpoints, compiled once per definition revision.
 *
 * Which rules apply (endpoint E, its group G, E.inheritGroupNetworkAccess):
 *
 * | E enabled | inherit | G enabled | rules used |
 * |-----------|---------|-----------|------------|
 * | no        | yes     | yes       | G          |
 * | yes       | yes     | yes       | E ∪ G      |
 * | yes       | yes     | no / none | E          |
 * | yes       | no      | any       | E          |
 * | no        | no      | any       | none       |
 * | no        | yes     | no / none | none       |
 *
 * Within the rules used: domains only → the domain must match; IPs only → the IP must match;
 * both → either may match; both lists empty → no filter.
 */
export interface NetworkAccess {
  enabled: boolean;
  allowedDomains: string[];
  allowedIpRanges: string[];
}

export interface NetworkRequest {
  ip: string;
  origin?: string | undefined;
  referer?: string | undefined;
  host?: string | undefined;
}

export interface NetworkPolicy {
  allows(request: NetworkRequest): boolean;
}

export const NETWORK_DENIED = 'Forbidden: network access denied';

const ALLOW_ALL: NetworkPolicy = { allows: () => true };

export function effectiveRules(endpoint: NetworkAccess | undefined, inherit: boolean, group: NetworkAccess | undefined): NetworkAccess | null {
  const own = endpoint?.enabled ? endpoint : null;
  const inherited = inherit && group?.enabled ? group : null;
  if (own && inherited) {
    return {
      enabled: true,
      allowedDomains: [...new Set([...own.allowedDomains, ...inherited.allowedDomains])],
      allowedIpRanges: [...new Set([...own.allowedIpRanges, ...inherited.allowedIpRanges])],
    };
  }
  return own ?? inherited;
}

export function compileNetworkPolicy(rules: NetworkAccess | null): NetworkPolicy {
  if (!rules || (rules.allowedDomains.length === 0 && rules.allowedIpRanges.length === 0)) return ALLOW_ALL;
  const domains: DomainMatcher = compileDomainRules(rules.allowedDomains);
  const ips: IpMatcher = compileIpRules(rules.allowedIpRanges);
  return {
    allows(request: NetworkRequest): boolean {
      if (ips.size > 0 && ips.matches(request.ip)) return true;
      if (domains.size > 0) {
        const domain = requestDomain(request);
        if (domain !== null && domains.matches(domain)) return true;
      }
      return false;
    },
  };
}

/** Checks rules at save time: an invalid rule is a 400 naming it. */
export function assertValidNetworkAccess(rules: NetworkAccess | undefined, field = 'networkAccess'): void {
  if (!rules) return;
  try {
    compileDomainRules(rules.allowedDomains);
  } catch (error) {
    if (error instanceof InvalidDomainRuleError) throw badRequest(`Invalid ${field}.allowedDomains: ${error.message}`, [{ field: `${field}.allowedDomains`, message: error.message }]);
    throw error;
  }
  try {
    compileIpRules(rules.allowedIpRanges);
  } catch (error) {
    if (error instanceof InvalidIpRuleError) throw badRequest(`Invalid ${field}.allowedIpRanges: ${error.message}`, [{ field: `${field}.allowedIpRanges`, message: error.message }]);
    throw error;
  }
}
