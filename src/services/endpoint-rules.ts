// The rules an endpoint definition must satisfy beyond its JSON shape, in one place for the two
// places that check them: the endpoints service (every save through the API or a project apply)
// and the project checks (files and bundles, offline, before anything is applied). Each rule
// reports problems as `{field, message}` — the same words in both — plus a `summary`, the one-line
// error the API answers with when the rule refuses a save.
//
// | rule                | field(s)                                  | message                                                       |
// |---------------------|-------------------------------------------|---------------------------------------------------------------|
// | path parses         | path                                      | is not a valid path: …                                        |
// | path not reserved   | path                                      | would shadow /api/x, which the service serves itself          |
// | field definitions   | schema.<field>…                           | the field-type registry's own (validateEndpointSchema)        |
// | reference targets   | schema.<field>.ref / .items.ref           | must be a normalized collection path without :parameters, …  |
// | indexes on a path   | schema.<field>.indexed / .unique          | cannot be set on a path with :parameters …                    |
// | group access        | accessType, or the list of groups         | … must name at least one user group …                         |
// | handler compiles    | handler.code                              | does not compile: …                                           |
//
// What needs the store stays with the service: (path, method) uniqueness and versioned aliases,
// user groups and endpoint groups that must exist. Network rules are the model's (network-access.ts).
import { AppError, badRequest } from '../lib/errors.ts';
import { InvalidPathError, normalizePath, parsePathPattern, type PathPattern } from '../lib/paths.ts';
import { indexedFields } from '../model/indexed-fields.ts';
import { compileRecordSchema, validateEndpointSchema, type EndpointSchema } from '../model/record-schema.ts';
import { shadowedRoute } from '../model/reserved-paths.ts';
import { compileHandler, HandlerCompileError } from '../sandbox/handler-runner.ts';

export interface RuleProblem {
  field: string;
  message: string;
  /** The API's error line when this problem refuses a save. */
  summary: string;
  /** For handler code: the line inside the code. */
  codeLine?: number;
}

/** Values a rule leaves alone (a project's `${env:…}` placeholders, known only at apply time). */
export type Skip = (value: string) => boolean;
const never: Skip = () => false;

/** The path parsed, or a problem; a path shadowing the service's own routes is a problem unless `system`. */
export function checkEndpointPath(path: string, options: { system?: boolean } = {}): { pattern?: PathPattern; problems: RuleProblem[] } {
  let pattern: PathPattern;
  try {
    pattern = parsePathPattern(path);
  } catch (error) {
    if (!(error instanceof InvalidPathError)) throw error;
    return { problems: [{ field: 'path', message: `is not a valid path: ${error.message}`, summary: `Invalid path: ${error.message}` }] };
  }
  const clash = options.system ? undefined : shadowedRoute(pattern);
  if (!clash) return { pattern, problems: [] };
  const message = `would shadow ${clash}, which the service serves itself`;
  return { pattern, problems: [{ field: 'path', message, summary: `Invalid path: ${pattern.path} ${message}` }] };
}

/**
 * The field definitions (the field-type registry's rules, defaultValues included), then each
 * reference field's target: a collection path, normalized, without parameters. Given the
 * definition's path: indexed fields need a path without parameters (an index covers the records
 * of one path; a parameter makes a path per value).
 */
export function checkEndpointSchema(schema: unknown, options: { skip?: Skip; path?: PathPattern } = {}): { schema?: EndpointSchema; problems: RuleProblem[] } {
  let valid: EndpointSchema;
  try {
    valid = validateEndpointSchema(schema);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const details = error.details ?? [{ field: 'schema', message: error.message }];
    return { problems: details.map((detail) => ({ ...detail, summary: error.message })) };
  }
  const skip = options.skip ?? never;
  const problems: RuleProblem[] = [];
  for (const reference of compileRecordSchema(valid).referenceFields) {
    if (skip(reference.ref)) continue;
    if (reference.ref !== normalizePath(reference.ref) || reference.ref.includes(':')) {
      const field = reference.many ? `schema.${reference.field}.items.ref` : `schema.${reference.field}.ref`;
      const message = 'must be a normalized collection path without :parameters, such as /api/shop/categories';
      problems.push({ field, message, summary: `Invalid schema: ${field} ${message}` });
    }
  }
  if (options.path && options.path.paramNames.length > 0) {
    for (const { field, unique } of indexedFields(valid)) {
      const at = `schema.${field}.${unique ? 'unique' : 'indexed'}`;
      const message = `cannot be set on a path with :parameters (${options.path.path}): indexes are kept per literal path`;
      problems.push({ field: at, message, summary: `Invalid schema: ${at} ${message}` });
    }
  }
  return { schema: valid, problems };
}

/**
 * accessType `group` needs at least one user group. `groups` is the list as given (ids for the
 * API, names in a project), `field` its name, `noun` what it holds; a list not given at all is
 * reported at accessType.
 */
export function checkGroupAccess(accessType: unknown, groups: unknown, field: string, noun: 'id' | 'name'): RuleProblem[] {
  if (accessType !== 'group' || (Array.isArray(groups) && groups.length > 0)) return [];
  const summary = `Invalid endpoint: accessType "group" needs at least one ${noun} in ${field}`;
  if (groups === undefined) return [{ field: 'accessType', message: `is group, so ${field} must name at least one user group`, summary }];
  return [{ field, message: 'must name at least one user group when accessType is group', summary }];
}

/** Syntax only: the code is compiled in a throw-away isolate (released at once), never run. Empty disabled code is fine. */
export function checkHandlerCode(handler: { enabled?: unknown; code?: unknown }, options: { skip?: Skip } = {}): RuleProblem[] {
  const code = handler.code;
  if (typeof code !== 'string' || (options.skip ?? never)(code)) return [];
  if (handler.enabled !== true && code.trim() === '') return [];
  try {
    compileHandler(code, { memoryMb: 16, timeoutMs: 1000 }).dispose();
    return [];
  } catch (error) {
    if (!(error instanceof HandlerCompileError)) throw error;
    return [{ field: 'handler.code', message: `does not compile: ${error.message}`, summary: `Invalid handler: ${error.message}`, ...(error.line === undefined ? {} : { codeLine: error.line }) }];
  }
}

/** For the service: the first problem refuses the save (400), with every problem in details. */
export function refuse(problems: readonly RuleProblem[]): void {
  const [first] = problems;
  if (first) throw badRequest(first.summary, problems.map(({ field, message }) => ({ field, message })));
}
