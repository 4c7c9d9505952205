import { checkRange, definedOptions, SIZE_OPTION, type FieldDef, type FieldType } from './field-type.ts';

export interface StringFieldDef extends FieldDef {
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  enum?: string[];
}

/**
 * Strings without maxLength are still capped, so a record cannot carry an unbounded value.
 * Lengths count Unicode code points (ajv's rule), not UTF-16 units.
 */
export const DEFAULT_MAX_STRING_LENGTH = 1_000_000;

export const stringType: FieldType<StringFieldDef> = {
  name: 'string',
  expected: 'a string',
  options: {
    properties: {
      minLength: SIZE_OPTION,
      maxLength: SIZE_OPTION,
      pattern: { type: 'string', minLength: 1, maxLength: 1000 },
      enum: { type: 'array', minItems: 1, maxItems: 1000, uniqueItems: true, items: { type: 'string' } },
    },
  },
  check(def, check) {
    checkRange(def, check, 'minLength', 'maxLength');
    if (def.pattern !== undefined) {
      // ajv compiles patterns with the u flag; check with the same flag so save and use agree.
      try {
        new RegExp(def.pattern, 'u');
      } catch {
        check.problem('pattern', 'must be a valid regular expression');
      }
    }
  },
  toJsonSchema: (def) => ({
    type: 'string',
    maxLength: def.maxLength ?? DEFAULT_MAX_STRING_LENGTH,
    ...definedOptions(def, ['minLength', 'pattern', 'enum']),
  }),
  exampleValue(def) {
    if (def.enum?.[0] !== undefined) return def.enum[0];
    const min = def.minLength ?? 0;
    return 'text'.repeat(Math.ceil(Math.max(min, 1) / 4)).slice(0, Math.max(min, Math.min(4, def.maxLength ?? 4)));
  },
};
