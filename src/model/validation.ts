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
    const details = (validate.errors ?? []).map(describeError);
    const first = details[0];
    throw badRequest(first ? `Invalid ${what}: ${first.field ? `${first.field} ` : ''}${first.message}` : `Invalid ${what}`, details);
  };
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
  return { field: base, message: error.message ?? 'is invalid' };
}
