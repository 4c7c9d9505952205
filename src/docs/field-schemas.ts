// OpenAPI schemas of records, built from an endpoint's field schema through each field type's
// own describer (`openApi` in src/model/field-types/*). What this file adds is common to every
// type: the field's description, its default, and which fields a request must send.
import { fieldTypeOf, type EndpointSchema, type FieldDef, type JsonSchema, type OpenApiContext } from '../model/field-types/index.ts';

const ID = { type: 'string', pattern: '^[0-9a-f]{24}$', example: '6650f0c2a1b2c3d4e5f60718' };
const STAMP = { type: 'string', format: 'date-time' };

export function fieldSchema(def: FieldDef, mode: OpenApiContext['mode'], populated: OpenApiContext['populated']): JsonSchema {
  const type = fieldTypeOf(def.type);
  // Definitions are validated at save time; an unknown type can only be a stale stored one.
  if (!type) return {};
  const ctx: OpenApiContext = { mode, populated, child: (child) => fieldSchema(child, mode, populated) };
  const schema = type.openApi(def, ctx);
  const description = [def.description, schema.description, indexNote(def)].filter((text) => typeof text === 'string' && text !== '').join('; ');
  return {
    ...schema,
    ...(description ? { description } : {}),
    ...(def.defaultValue !== undefined ? { default: def.defaultValue } : {}),
    ...(def.unique === true ? { 'x-dyn-unique': true, 'x-dyn-indexed': true } : def.indexed === true ? { 'x-dyn-indexed': true } : {}),
  };
}

/** What `indexed` / `unique` promise a client, in words (the OpenAPI extensions say it to tools). */
export function indexNote(def: FieldDef): string | undefined {
  if (def.unique === true) return 'unique: no two records of this path hold the same value (a write repeating one is a 409); indexed';
  if (def.indexed === true) return 'indexed: filters and sorts on it read an index';
  return undefined;
}

function properties(fields: EndpointSchema, mode: OpenApiContext['mode'], populated: OpenApiContext['populated']): Record<string, JsonSchema> {
  return Object.fromEntries(Object.entries(fields).map(([name, def]) => [name, fieldSchema(def, mode, populated)]));
}

/**
 * A request body. `create` (POST) needs the required fields a default does not fill; `replace`
 * (PUT, which applies no defaults) every required field; `patch` none (the body is merged into
 * the stored record). Unknown fields are refused.
 */
export function inputSchema(fields: EndpointSchema, kind: 'create' | 'replace' | 'patch'): JsonSchema {
  const required = kind === 'patch' ? [] : Object.entries(fields).filter(([, def]) => def.required === true && (kind === 'replace' || def.defaultValue === undefined)).map(([name]) => name);
  return { type: 'object', properties: properties(fields, 'input', () => undefined), additionalProperties: false, ...(required.length ? { required } : {}) };
}

/**
 * A stored record as responses show it: `_id`, the fields, the timestamps. Records written under
 * an older schema may hold other fields (schema changes do not migrate data).
 */
export function recordSchema(fields: EndpointSchema, populated: OpenApiContext['populated']): JsonSchema {
  const required = Object.entries(fields).filter(([, def]) => def.required === true).map(([name]) => name);
  return {
    type: 'object',
    properties: {
      _id: ID,
      ...properties(fields, 'output', populated),
      createdAt: STAMP,
      updatedAt: STAMP,
      expiresAt: { ...STAMP, description: 'set when the endpoint keeps records for a limited number of days' },
    },
    required: ['_id', ...required, 'createdAt', 'updatedAt'],
  };
}

/** A reference expanded by `?populate`: `{id, ...fields of the linked record}` (one level deep). */
export function populatedSchema(fields: EndpointSchema): JsonSchema {
  return { type: 'object', properties: { id: ID, ...properties(fields, 'input', () => undefined) }, required: ['id'] };
}

export const RECORD_ID_SCHEMA: JsonSchema = ID;
