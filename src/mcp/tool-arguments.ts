// A tools/call's arguments, checked against the tool's own inputSchema before the endpoint is
// called: what the schema rules out (an id that is not 24 hex digits, an unknown argument, a body
// missing a required field) is invalid params (-32602) naming the argument, and the endpoint is
// neither called nor counted. Arguments the schema admits become the engine's invoke request.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
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

/** The call's arguments as an invoke request; arguments the input schema rules out are invalid params. */
export function readArguments(tool: McpTool, args: Record<string, unknown>): ToolRequest {
  const validate = validatorOf(tool);
  if (!validate(args)) {
    const details: ErrorDetail[] = (validate.errors ?? []).slice(0, MAX_DETAILS).map((error) => describeError(error, '', (parent) => (parent === '' ? 'is not an argument of this tool' : 'is not an allowed field')));
    const first = details[0];
    const problem = !first ? 'invalid' : first.message === 'is not an argument of this tool' ? `unknown argument "${first.field.slice(0, 64)}"` : `${first.field} ${first.message}`;
    throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for ${tool.name}: ${problem}`, { details });
  }
  const out: ToolRequest = {};
  // The schema made params an object of strings and id a string.
  if (args.params !== undefined) out.params = args.params as Record<string, string>;
  if (typeof args.id === 'string') out.recordId = args.id;
  // The engine reads query values as the strings an HTTP query would carry.
  if (args.query !== undefined) out.query = Object.fromEntries(Object.entries(args.query as object).map(([k, v]) => [k, String(v)]));
  if (args.body !== undefined) out.body = args.body;
  return out;
}
