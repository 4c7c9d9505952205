// Checks shared by kinds: rules beyond JSON Schema that need no database. The endpoint rules are
// the endpoints service's own (services/endpoint-rules.ts), so a file is refused for exactly
// what the API would refuse, in the same words. Definitions are of
// unknown shape here (a file may hold anything), so each check tests the types of what it
// reads; JSON Schema has already reported wrong types by then.
import { compileDomainRules, InvalidDomainRuleError } from '../../lib/domain-rules.ts';
import { compileIpRules, InvalidIpRuleError } from '../../lib/ip-rules.ts';
import { checkEndpointPath, checkEndpointSchema, checkGroupAccess as checkEndpointGroupAccess, checkHandlerCode } from '../../services/endpoint-rules.ts';
import { schemaFromWire } from '../../model/schema-wire.ts';
import { hasPlaceholder } from '../placeholders.ts';
import { isPlainObject, type RawSpec, type Report } from './types.ts';

/** A string that is really there: not a placeholder, whose value is only known at apply time. */
export const isWritten = (value: unknown): value is string => typeof value === 'string' && !hasPlaceholder(value);

/** Endpoint rules shared with the endpoints service (services/endpoint-rules.ts), in the same words. */
export function checkPath(path: string, report: Report): void {
  for (const problem of checkEndpointPath(path).problems) report(problem.field, problem.message);
}

export function checkSchema(given: unknown, report: Report, path?: unknown): void {
  // The API's array form is accepted too; refEndpointIds are looked up when the bundle is planned.
  const { schema, problems } = schemaFromWire(given, () => null);
  for (const problem of problems) report(problem.field, problem.message);
  if (problems.length > 0) return;
  const pattern = isWritten(path) ? checkEndpointPath(path).pattern : undefined;
  for (const problem of checkEndpointSchema(schema, { skip: hasPlaceholder, ...(pattern ? { path: pattern } : {}) }).problems) report(problem.field, problem.message);
}

export function checkGroupAccess(spec: RawSpec, report: Report): void {
  for (const problem of checkEndpointGroupAccess(spec.accessType, spec.allowedGroups, 'allowedGroups', 'name')) report(problem.field, problem.message);
}

export function checkNetworkAccess(value: unknown, report: Report): void {
  if (!isPlainObject(value)) return;
  const lists = [
    ['allowedDomains', (rule: string) => compileDomainRules([rule]), InvalidDomainRuleError],
    ['allowedIpRanges', (rule: string) => compileIpRules([rule]), InvalidIpRuleError],
  ] as const;
  for (const [list, compile, InvalidRule] of lists) {
    const rules = value[list];
    if (!Array.isArray(rules)) continue;
    rules.forEach((rule, index) => {
      if (!isWritten(rule)) return;
      try {
        compile(rule);
      } catch (error) {
        if (error instanceof InvalidRule) report(`networkAccess.${list}.${index}`, `is an ${error.message}`);
        else throw error;
      }
    });
  }
}

/** Syntax only (see checkHandlerCode); a syntax error points at its line inside the code. */
export function checkHandler(handler: Record<string, unknown>, report: Report): void {
  for (const problem of checkHandlerCode(handler, { skip: hasPlaceholder })) report(problem.field, problem.message, problem.codeLine === undefined ? {} : { codeLine: problem.codeLine });
}
