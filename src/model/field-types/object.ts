import type { EndpointSchema, FieldDef, FieldType, JsonSchema } from './field-type.ts';

export interface ObjectFieldDef extends FieldDef {
  /** When given, the value is validated against these fields and unknown keys are refused. */
  children?: EndpointSchema;
}

/** Also the shape of a whole record: a record is an object whose children are the endpoint's schema. */
export const objectType: FieldType<ObjectFieldDef> = {
  name: 'object',
  expected: 'an object',
  options: { properties: { children: { type: 'object' } } },
  check(def, check) {
    if (def.children !== undefined) check.checkFields('children', def.children);
  },
  toJsonSchema(def, compileChild) {
    if (!def.children) return { type: 'object' };
    const properties: Record<string, JsonSchema> = {};
    for (const [name, child] of Object.entries(def.children)) properties[name] = compileChild(child);
    const required = Object.keys(def.children).filter((name) => def.children?.[name]?.required === true);
    return { type: 'object', properties, additionalProperties: false, ...(required.length ? { required } : {}) };
  },
  openApi(def, ctx) {
    if (!def.children) return { type: 'object', additionalProperties: true };
    const properties: Record<string, JsonSchema> = {};
    for (const [name, child] of Object.entries(def.children)) properties[name] = ctx.child(child);
    const required = Object.keys(def.children).filter((name) => def.children?.[name]?.required === true);
    return { type: 'object', properties, additionalProperties: false, ...(required.length ? { required } : {}) };
  },
  exampleValue(def, exampleChild) {
    const out: Record<string, unknown> = {};
    for (const [name, child] of Object.entries(def.children ?? {})) out[name] = exampleChild(child);
    return out;
  },
  children: (def) => def.children,
};
