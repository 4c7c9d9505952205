import { isId } from '../../lib/ids.ts';
import type { FieldDef, FieldFilter, FieldType } from './field-type.ts';

export interface ReferenceFieldDef extends FieldDef {
  /** The target endpoint's path, e.g. `/api/shop/categories`. */
  ref: string;
}

/** Also how `_id` is read in filters. */
export const RECORD_ID_FILTER: FieldFilter = { operators: ['eq', 'ne', 'in', 'nin', 'exists'], read: (raw) => (isId(raw) ? raw : { problem: 'a record id' }) };

const ENDPOINT_PATH = /^\/[^\s?#]*$/;

/**
 * The id of a record at another endpoint. Only the id's shape is checked here; whether the
 * record exists is the engine's job (it reads `referenceFields` from the compiled schema).
 */
export const referenceType: FieldType<ReferenceFieldDef> = {
  name: 'reference',
  expected: 'a record id (24 lowercase hex characters)',
  options: { properties: { ref: { type: 'string', minLength: 1, maxLength: 512 } }, required: ['ref'] },
  formats: { 'record-id': isId },
  check(def, check) {
    if (!ENDPOINT_PATH.test(def.ref)) check.problem('ref', 'must be an endpoint path starting with /');
  },
  toJsonSchema: () => ({ type: 'string', format: 'record-id' }),
  // An id naming its target (`x-dyn-ref`); in responses `?populate` may expand it to the target's record.
  openApi(def, ctx) {
    const id = { type: 'string', pattern: '^[0-9a-f]{24}$', description: `id of a record of ${def.ref}`, 'x-dyn-ref': def.ref };
    const populated = ctx.mode === 'output' ? ctx.populated(def.ref) : undefined;
    return populated ? { anyOf: [id, populated], 'x-dyn-ref': def.ref } : id;
  },
  exampleValue: () => '000000000000000000000000',
  reference: (def) => ({ ref: def.ref, many: false }),
  filter: () => RECORD_ID_FILTER,
  indexedAs: 'text',
};
