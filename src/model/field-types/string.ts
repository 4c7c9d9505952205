import { compilePattern, PatternSyntaxError } from '../../lib/safe-pattern.ts';
import { checkRange, definedOptions, SIZE_OPTION, TEXT_FILTER, type FieldDef, type FieldType } from './field-type.ts';

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
      // Checked with the engine that will run it (RE2: see lib/safe-pattern.ts).
      try {
        compilePattern(def.pattern);
      } catch (error) {
        if (!(error instanceof PatternSyntaxError)) throw error;
        check.problem('pattern', `must be a regular expression in RE2 syntax (no lookaround or backreferences): ${error.message}`);
      }
    }
  },
  toJsonSchema: (def) => ({
    type: 'string',
    maxLength: def.maxLength ?? DEFAULT_MAX_STRING_LENGTH,
    ...definedOptions(def, ['minLength', 'pattern', 'enum']),
  }),
  openApi: (def) => ({ type: 'string', maxLength: def.maxLength ?? DEFAULT_MAX_STRING_LENGTH, ...definedOptions(def, ['minLength', 'pattern', 'enum']) }),
  exampleValue(def) {
    if (def.enum?.[0] !== undefined) return def.enum[0];
    const min = def.minLength ?? 0;
    return 'text'.repeat(Math.ceil(Math.max(min, 1) / 4)).slice(0, Math.max(min, Math.min(4, def.maxLength ?? 4)));
  },
  filter: () => TEXT_FILTER,
  indexedAs: 'text',
  searchable: true,
};
