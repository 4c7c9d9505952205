import { Ajv, type ErrorObject, type JSONSchemaType, type Schema } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { badRequest, type ErrorDetail } from '../lib/errors.ts';

/**
 * Request bodies are validated by JSON Schemas compiled once at startup. Every failure is
 * collected with its field path; the first one becomes the error message.
 */
const addFormats = addFormatsModule as unknown as (ajv: Ajv, formats?: string[]) => Ajv;
const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: false, coerceTypes: false });
addFormats(ajv, ['email', 'date-time', 'uri']);

export type Validator<T> = (input: unknown) => T;

export function compileValidator<T>(schema: Schema | JSONSchemaType<T>, what = 'request body'): Validator<T> {
  const validate = ajv.compile<T>(schema);
  return (input: unknown): T => {
    if (validate(input)) return input;
    const details = readable(validate.errors ?? []);
    const first = details[0];
    throw badRequest(first ? `Invalid ${what}: ${first.field ? `${first.field} ` : ''}${first.message}` : `Invalid ${what}`, details);
  };
}

/**
 * Ajv's errors as details a person reads: an `if`/`then` schema's own line ("must match \"then\"
 * schema") says nothing the errors inside it do not; a name that is empty is not also called blank.
 */
function readable(errors: readonly ErrorObject[]): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const error of errors) {
    if (error.keyword === 'if') continue;
    const detail = describeError(error);
    if (!details.some((other) => other.field === detail.field && other.message === detail.message)) details.push(detail);
  }
  // A value that may also be null (`anyOf: [value, null]`): the value's own problem is the one
  // to show, without "must be null" and "must match a schema in anyOf" beside it.
  const noise = (detail: ErrorDetail) => detail.message === 'must be null' || detail.message === 'must match a schema in anyOf';
  return details.filter((detail) => !noise(detail) || !details.some((other) => other.field === detail.field && !noise(other)));
}

function describeError(error: ErrorObject): ErrorDetail {
  const base = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') {
    const field = [base, String(params.missingProperty)].filter(Boolean).join('.');
    return { field, message: 'is required' };
  }
  if (error.keyword === 'additionalProperties') {
    const field = [base, String(params.additionalProperty)].filter(Boolean).join('.');
    return { field, message: 'is not an allowed field' };
  }
  // `minLength: 1` with `pattern: '\\S'` is how a name that must say something is written.
  if ((error.keyword === 'minLength' && params.limit === 1) || (error.keyword === 'pattern' && params.pattern === '\\S')) return { field: base, message: 'must not be empty or blank' };
  return { field: base, message: error.message ?? 'is invalid' };
}
