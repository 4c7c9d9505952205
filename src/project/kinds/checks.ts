// Checks shared by kinds: rules beyond JSON Schema that need no database. Definitions are of
// unknown shape here (a file may hold anything), so each check tests the types of what it
// reads; JSON Schema has already reported wrong types by then.
import { compileDomainRules, InvalidDomainRuleError } from '../../lib/domain-rules.ts';
import { AppError } from '../../lib/errors.ts';
import { compileIpRules, InvalidIpRuleError } from '../../lib/ip-rules.ts';
import { InvalidPathError, normalizePath, parsePathPattern } from '../../lib/paths.ts';
import { compileRecordSchema, validateEndpointSchema } from '../../model/record-schema.ts';
import { shadowedRoute } from '../../model/reserved-paths.ts';
import { compileHandler, HandlerCompileError } from '../../sandbox/handler-runner.ts';
import { hasPlaceholder } from '../placeholders.ts';
import { isPlainObject, type Report } from './types.ts';

/** A string that is really there: not a placeholder, whose value is only known at apply time. */
export const isWritten = (value: unknown): value is string => typeof value === 'string' && !hasPlaceholder(value);

export function checkPath(path: string, report: Report): void {
  try {
    const pattern = parsePathPattern(path);
    const clash = shadowedRoute(pattern);
    if (clash) report('path', `would shadow ${clash}, which the service serves itself`);
  } catch (error) {
    if (error instanceof InvalidPathError) report('path', `is not a valid path: ${error.message}`);
    else throw error;
  }
}

/** The field rules of the API (validateEndpointSchema), then references: a collection path each. */
export function checkSchema(schema: unknown, report: Report): void {
  let valid;
  try {
    valid = validateEndpointSchema(schema);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    for (const detail of error.details ?? [{ field: 'schema', message: error.message }]) report(detail.field, detail.message);
    return;
  }
  for (const reference of compileRecordSchema(valid).referenceFields) {
    if (hasPlaceholder(reference.ref)) continue;
    if (reference.ref !== normalizePath(reference.ref) || reference.ref.includes(':')) {
      const at = reference.many ? `schema.${reference.field}.items.ref` : `schema.${reference.field}.ref`;
      report(at, 'must be a normalized collection path without :parameters, such as /api/shop/categories');
    }
  }
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

/** Syntax only: the code is compiled in a throw-away isolate, never run. */
export function checkHandler(handler: Record<string, unknown>, report: Report): void {
  const code = handler.code;
  if (typeof code !== 'string' || hasPlaceholder(code)) return;
  if (handler.enabled !== true && code.trim() === '') return;
  try {
    compileHandler(code, { memoryMb: 16, timeoutMs: 1000 }).dispose();
  } catch (error) {
    if (error instanceof HandlerCompileError) report('handler.code', `does not compile: ${error.message}`, error.line === undefined ? {} : { codeLine: error.line });
    else throw error;
  }
}
