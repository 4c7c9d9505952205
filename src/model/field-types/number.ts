import { checkRange, definedOptions, ORDERED_OPERATORS, type FieldDef, type FieldFilter, type FieldType } from './field-type.ts';

export interface NumberFieldDef extends FieldDef {
  minimum?: number;
  maximum?: number;
  integer?: boolean;
}

/** A number as JSON writes it: `Number()` alone also reads `0x10`, `0b11`, ` 3 ` and `` as numbers. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

const NUMBER_FILTER: FieldFilter = {
  operators: ORDERED_OPERATORS,
  read: (raw) => (JSON_NUMBER.test(raw) && Number.isFinite(Number(raw)) ? Number(raw) : { problem: 'a number' }),
};

/** Finite numbers only: ajv's strictNumbers refuses NaN and Infinity handed in from code. */
export const numberType: FieldType<NumberFieldDef> = {
  name: 'number',
  expected: 'a number',
  options: {
    properties: {
      minimum: { type: 'number' },
      maximum: { type: 'number' },
      integer: { type: 'boolean' },
    },
  },
  check(def, check) {
    checkRange(def, check, 'minimum', 'maximum');
  },
  toJsonSchema: (def) => ({ type: def.integer ? 'integer' : 'number', ...definedOptions(def, ['minimum', 'maximum']) }),
  openApi: (def) => ({ type: def.integer ? 'integer' : 'number', ...definedOptions(def, ['minimum', 'maximum']) }),
  exampleValue(def) {
    const low = def.minimum ?? (def.maximum !== undefined && def.maximum < 0 ? def.maximum : 0);
    return def.integer ? Math.ceil(low) : low;
  },
  filter: () => NUMBER_FILTER,
  indexedAs: 'number',
};
