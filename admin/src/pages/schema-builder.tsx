// The schema builder of the endpoint editor: add, remove and reorder fields, nest `object`
// children, give an `array` its item type, and pick a reference target by endpoint name. The
// value is the API's schema array; positions become `order` when saved.
import type { Detail } from '../api.ts';
import { messagesFor } from '../ui.tsx';

export interface SchemaField {
  name: string;
  type: string;
  required?: boolean;
  order?: number;
  description?: string;
  defaultValue?: unknown;
  children?: SchemaField[];
  items?: Partial<SchemaField>;
  refEndpointId?: string | null;
  ref?: string;
  [option: string]: unknown;
}

export interface RefTarget {
  _id: string;
  name: string;
  method: string;
  path: string;
}

export const FIELD_TYPES = ['string', 'number', 'boolean', 'datetime', 'reference', 'object', 'array', 'json'];

/** The options each type takes, beyond name/type/required/description/defaultValue. */
const OPTIONS: Record<string, Array<{ key: string; label: string; kind: 'number' | 'text' | 'list' | 'bool' }>> = {
  string: [
    { key: 'minLength', label: 'Min length', kind: 'number' },
    { key: 'maxLength', label: 'Max length', kind: 'number' },
    { key: 'pattern', label: 'Pattern (RE2)', kind: 'text' },
    { key: 'enum', label: 'Allowed values (comma-separated)', kind: 'list' },
  ],
  number: [
    { key: 'minimum', label: 'Minimum', kind: 'number' },
    { key: 'maximum', label: 'Maximum', kind: 'number' },
    { key: 'integer', label: 'Integer', kind: 'bool' },
  ],
  array: [
    { key: 'minItems', label: 'Min items', kind: 'number' },
    { key: 'maxItems', label: 'Max items', kind: 'number' },
  ],
};

/** Top-level fields of these types can be indexed (`indexed`, `unique`): the server refuses the rest. */
const INDEXABLE_TYPES = ['string', 'number', 'boolean', 'datetime', 'reference'];

/** The schema as the API takes it: order from position; a changed reference sends only its id. */
export function schemaForSave(fields: SchemaField[]): SchemaField[] {
  return fields.map((field, index) => {
    const out: SchemaField = { ...field, order: index };
    if (out.refEndpointId) delete out.ref;
    if (out.type !== 'object') delete out.children;
    else if (out.children) out.children = schemaForSave(out.children);
    if (out.type === 'array' && out.refEndpointId) delete out.items;
    if (out.items && typeof out.items === 'object') {
      const items = { ...out.items };
      if (items.refEndpointId) delete items.ref;
      out.items = items;
    }
    if (out.type !== 'reference' && out.type !== 'array') delete out.refEndpointId;
    return out;
  });
}

interface Props {
  fields: SchemaField[];
  onChange: (fields: SchemaField[]) => void;
  targets: RefTarget[];
  details: Detail[];
  /** The detail path of this level (`schema`, `schema.size.children`). */
  path: string;
  readOnly?: boolean;
}

function TargetSelect(props: { value: string | null | undefined; targets: RefTarget[]; onChange: (id: string | null) => void; label: string; disabled?: boolean }) {
  return (
    <select aria-label={props.label} value={props.value ?? ''} disabled={props.disabled} onChange={(e) => props.onChange(e.currentTarget.value || null)}>
      <option value="">— pick the target —</option>
      {props.targets.map((t) => (
        <option value={t._id}>
          {t.name} ({t.method} {t.path})
        </option>
      ))}
    </select>
  );
}

function parseDefault(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function SchemaBuilder(props: Props) {
  const { fields, onChange, readOnly } = props;
  const update = (index: number, patch: Partial<SchemaField>) => {
    const next = fields.map((f, i) => (i === index ? { ...f, ...patch } : f));
    for (const [key, value] of Object.entries(patch)) if (value === undefined) delete (next[index] as Record<string, unknown>)[key];
    onChange(next);
  };
  const move = (index: number, by: number) => {
    const next = [...fields];
    const [field] = next.splice(index, 1);
    next.splice(index + by, 0, field!);
    onChange(next);
  };
  const add = () => onChange([...fields, { name: '', type: 'string', required: false }]);
  const remove = (index: number) => onChange(fields.filter((_, i) => i !== index));

  return (
    <div>
      {fields.map((field, index) => {
        const where = field.name ? `${props.path}.${field.name}` : `${props.path}.${index}`;
        const messages = [...messagesFor(props.details, where), ...messagesFor(props.details, `${props.path}.${index}`)];
        const label = field.name || `field ${index + 1}`;
        return (
          <div class="schema-field" data-field={field.name}>
            <div class="row">
              <input type="text" aria-label={`Name of ${label}`} placeholder="name" value={field.name} disabled={readOnly} onInput={(e) => update(index, { name: e.currentTarget.value })} />
              <select aria-label={`Type of ${label}`} value={field.type} disabled={readOnly} onChange={(e) => update(index, { type: e.currentTarget.value, ...(e.currentTarget.value === 'object' ? { children: field.children ?? [] } : {}) })}>
                {FIELD_TYPES.map((t) => (
                  <option value={t}>{t}</option>
                ))}
              </select>
              <label class="check">
                <input type="checkbox" checked={!!field.required} disabled={readOnly} onChange={(e) => update(index, { required: e.currentTarget.checked })} /> required
              </label>
              {!readOnly && (
                <span class="row" style={{ marginLeft: 'auto', gap: '4px' }}>
                  <button type="button" aria-label={`Move ${label} up`} disabled={index === 0} onClick={() => move(index, -1)}>
                    ↑
                  </button>
                  <button type="button" aria-label={`Move ${label} down`} disabled={index === fields.length - 1} onClick={() => move(index, 1)}>
                    ↓
                  </button>
                  <button type="button" class="danger" aria-label={`Remove ${label}`} onClick={() => remove(index)}>
                    ✕
                  </button>
                </span>
              )}
            </div>
            <div class="row small" style={{ marginTop: '6px' }}>
              {(field.type === 'reference' || field.type === 'array') && (
                <span class="row">
                  {field.type === 'reference' ? 'Target' : 'Array of references to'}
                  <TargetSelect label={`Reference target of ${label}`} value={field.refEndpointId} targets={props.targets} disabled={readOnly} onChange={(id) => update(index, { refEndpointId: id ?? undefined })} />
                </span>
              )}
              {field.type === 'array' && !field.refEndpointId && (
                <span class="row">
                  items
                  <select aria-label={`Item type of ${label}`} value={field.items?.type ?? ''} disabled={readOnly} onChange={(e) => update(index, { items: e.currentTarget.value ? { type: e.currentTarget.value } : undefined })}>
                    <option value="">any</option>
                    {FIELD_TYPES.filter((t) => t !== 'reference' && t !== 'array').map((t) => (
                      <option value={t}>{t}</option>
                    ))}
                  </select>
                </span>
              )}
              {props.path === 'schema' && INDEXABLE_TYPES.includes(field.type) && (
                <>
                  <label class="check" title="Filters and sorts on this field use an index (built over existing records when saved)">
                    <input type="checkbox" checked={!!field.indexed || !!field.unique} disabled={readOnly || !!field.unique} onChange={(e) => update(index, { indexed: e.currentTarget.checked || undefined })} /> indexed
                  </label>
                  <label class="check" title="No two records of this path may hold the same value (implies indexed)">
                    <input type="checkbox" checked={!!field.unique} disabled={readOnly} onChange={(e) => update(index, { unique: e.currentTarget.checked || undefined })} /> unique
                  </label>
                </>
              )}
              {(OPTIONS[field.type] ?? []).map((option) => (
                <label class="check">
                  {option.label}
                  {option.kind === 'bool' ? (
                    <input type="checkbox" checked={!!field[option.key]} disabled={readOnly} onChange={(e) => update(index, { [option.key]: e.currentTarget.checked || undefined })} />
                  ) : (
                    <input
                      type="text"
                      inputMode={option.kind === 'number' ? 'decimal' : 'text'}
                      style={{ width: option.kind === 'number' ? '80px' : '160px' }}
                      disabled={readOnly}
                      value={option.kind === 'list' ? ((field[option.key] as string[] | undefined) ?? []).join(', ') : ((field[option.key] as string | number | undefined) ?? '')}
                      onChange={(e) => {
                        const raw = e.currentTarget.value;
                        const value = raw === '' ? undefined : option.kind === 'number' ? Number(raw) : option.kind === 'list' ? raw.split(',').map((s) => s.trim()).filter(Boolean) : raw;
                        update(index, { [option.key]: value });
                      }}
                    />
                  )}
                </label>
              ))}
              <label class="check">
                Default
                <input
                  type="text"
                  class="mono"
                  style={{ width: '110px' }}
                  placeholder="JSON"
                  disabled={readOnly}
                  value={field.defaultValue === undefined ? '' : JSON.stringify(field.defaultValue)}
                  onChange={(e) => update(index, { defaultValue: parseDefault(e.currentTarget.value) })}
                />
              </label>
              <input type="text" placeholder="description" aria-label={`Description of ${label}`} style={{ flex: '1', minWidth: '120px' }} disabled={readOnly} value={field.description ?? ''} onInput={(e) => update(index, { description: e.currentTarget.value || undefined })} />
            </div>
            {messages.map((m) => (
              <div class="field-error">{m}</div>
            ))}
            {field.type === 'object' && (
              <div class="children">
                <div class="small muted">Children of {label}</div>
                <SchemaBuilder {...props} fields={field.children ?? []} onChange={(children) => update(index, { children })} path={`${where}.children`} />
              </div>
            )}
          </div>
        );
      })}
      {!readOnly && (
        <button type="button" onClick={add}>
          + Add field
        </button>
      )}
    </div>
  );
}
