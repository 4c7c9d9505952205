// A tools/call's arguments, checked against the tool's own inputSchema before the endpoint is
// called: what the schema rules out (an id that is not 24 hex digits, an unknown argument, a body
// missing a required field, a handler's body that is not an object or an array) is a refusal
// naming the argument, and the endpoint is neither called nor counted (mcp-server.ts answers it
// as the negotiated protocol revision says). Arguments the schema admits become the engine's
// invoke request.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { ErrorDetail } from '../lib/errors.ts';
import { patternEngine } from '../lib/safe-pattern.ts';
import { describeError } from '../model/field-types/compile.ts';
import type { CompiledRecordSchema } from '../model/record-schema.ts';
import type { McpTool } from './tools.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

// Not strict: input schemas are OpenAPI schemas, with `example` and `x-dyn-*` annotations.
// Administrators' patterns (a string field's `pattern`) run on RE2, as on a direct call.
const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: false, ownProperties: true, logger: false, code: { regExp: patternEngine, optimize: false } });
addFormats(ajv);

/** At most this many details in the error's data (a body of 10,000 wrong items would list them all). */
const MAX_DETAILS = 20;

/**
 * Validators by definition revision: a tool's input schema follows from its definition alone
 * (method, path, handler, fields), and the route table keeps a definition's compiled schema
 * while its revision stands (route-table.ts compileEndpoint). A rebuilt table after another
 * definition changed so reuses every other tool's validator; an edited definition gets a new
 * one on its next call, and the old one goes with the old compiled schema.
 */
const byRevision = new WeakMap<CompiledRecordSchema, ValidateFunction>();

function validatorOf(tool: McpTool): ValidateFunction {
  let validate = byRevision.get(tool.endpoint.schema);
  if (!validate) {
    try {
      validate = ajv.compile(tool.inputSchema);
    } finally {
      // The validator is held here; ajv's own cache would keep every revision's schema forever.
      ajv.removeSchema(tool.inputSchema);
    }
    byRevision.set(tool.endpoint.schema, validate);
  }
  return validate;
}

export interface ToolRequest {
  params?: Record<string, string>;
  recordId?: string;
  query?: Record<string, string>;
  body?: unknown;
}

/** Why a call's arguments are refused: the first problem in words, and every problem. */
export interface ArgumentsRefusal {
  message: string;
  details: ErrorDetail[];
}

const NOT_AN_ARGUMENT = 'is not an argument of this tool';

/** The call's arguments as an invoke request, or why the input schema rules them out. */
export function readArguments(tool: McpTool, args: Record<string, unknown>): { request: ToolRequest } | { refused: ArgumentsRefusal } {
  const validate = validatorOf(tool);
  if (!validate(args)) {
    const details = (validate.errors ?? []).slice(0, MAX_DETAILS).map(detailOf);
    const first = details[0];
    const problem = !first ? 'invalid' : first.message === NOT_AN_ARGUMENT ? `unknown argument "${first.field.slice(0, 64)}"` : `${first.field} ${first.message}`;
    return { refused: { message: `Invalid arguments for ${tool.name}: ${problem}`, details } };
  }
  return { request: toolRequest(args) };
}

function detailOf(error: ErrorObject): ErrorDetail {
  const detail = describeError(error, '', (parent) => (parent === '' ? NOT_AN_ARGUMENT : 'is not an allowed field'));
  // A value of one of several types (a handler's body: object or array), which ajv words "must be object,array".
  const types: unknown = error.keyword === 'type' ? error.params.type : undefined;
  if (!Array.isArray(types)) return detail;
  return { field: detail.field, message: `must be ${types.map((type: string) => `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`).join(' or ')}` };
}

function toolRequest(args: Record<string, unknown>): ToolRequest {
  const out: ToolRequest = {};
  // The schema made params an object of strings and id a string.
  if (args.params !== undefined) out.params = args.params as Record<string, string>;
  if (typeof args.id === 'string') out.recordId = args.id;
  // The engine reads query values as the strings an HTTP query would carry.
  if (args.query !== undefined) out.query = Object.fromEntries(Object.entries(args.query as object).map(([k, v]) => [k, String(v)]));
  if (args.body !== undefined) out.body = args.body;
  return out;
}
