import { StoreError, type CollectionSpec, type Doc, type JsonView } from '../types.ts';

/**
 * How one collection's documents sit in its table. By default a row is `(id, doc)`, `doc` the
 * JSON text of the whole document. Fields a spec lists under `columns` get columns of their own
 * instead (and `doc` holds the rest): text columns for short scalars that queries filter and
 * sort on, JSON columns for an object whose members are queried as `field.member`. Indexes and
 * filters then read real columns rather than parsing each document, and a JSON column's text
 * can be sent to a client without a parse/serialize round trip (findJson in sqlite-store.ts).
 */
export type Row = Record<string, unknown>;
export type SqlValue = string | number | null;

export interface Layout {
  readonly table: string;
  /** Column definitions after `id TEXT PRIMARY KEY, doc TEXT NOT NULL`. */
  readonly columnDefinitions: string[];
  /** Column names after id and doc, in insert order. */
  readonly columns: readonly string[];
  /** The SQL expression that reads a field (a dotted path) of a document. */
  fieldExpr(field: string): string;
  /** The field's type in json_type's names ('text', 'integer', 'real', 'true', 'false', 'null', 'array', 'object'). */
  typeExpr(field: string): string;
  /** `json_each(...)` arguments over an array field, or null when the field cannot hold one. */
  arraySource(field: string): string | null;
  /** The values to store: id, doc, then one per column. */
  toRow(doc: Doc): SqlValue[];
  /** Reads a row selected with `selectList` back into a document. */
  fromRow(row: Row): Doc;
  /** The select list that fromRow reads. */
  readonly selectList: string;
  /** INSERT of one row, its values as toRow gives them. */
  readonly insertSql: string;
  /** Whether findJson can build `view` from columns alone (no document parse). */
  servesView(view: JsonView): boolean;
}

const quote = (name: string): string => `"${name}"`;

export function layoutOf(spec: CollectionSpec): Layout {
  const text = spec.columns?.text ?? [];
  const json = spec.columns?.json ?? [];
  const columns = [...text, ...json];
  const table = quote(spec.name);
  const insertColumns = ['id', 'doc', ...columns.map(quote)];
  const insertSql = `INSERT INTO ${table} (${insertColumns.join(', ')}) VALUES (${insertColumns.map(() => '?').join(', ')})`;
  if (columns.length === 0) return documentLayout(table, insertSql);
  const textSet = new Set(text);
  const jsonSet = new Set(json);
  const served = new WeakMap<JsonView, boolean>();

  const split = (field: string): { head: string; rest: string } => {
    const dot = field.indexOf('.');
    return dot === -1 ? { head: field, rest: '' } : { head: field.slice(0, dot), rest: field.slice(dot + 1) };
  };

  return {
    table,
    columns,
    columnDefinitions: [...text.map((c) => `${quote(c)} TEXT`), ...json.map((c) => `${quote(c)} TEXT`)],
    selectList: ['id', 'doc', ...columns.map(quote)].join(', '),
    insertSql,
    fieldExpr(field) {
      if (field === '_id') return 'id';
      const { head, rest } = split(field);
      if (textSet.has(head)) return rest ? 'NULL' : quote(head); // a text column has no members
      if (jsonSet.has(head)) return rest ? `json_extract(${quote(head)}, '$.${rest}')` : quote(head);
      return `json_extract(doc, '$.${field}')`;
    },
    typeExpr(field) {
      if (field === '_id') return 'typeof(id)';
      const { head, rest } = split(field);
      if (textSet.has(head)) return rest ? "'null'" : `typeof(${quote(head)})`;
      if (jsonSet.has(head)) return rest ? `json_type(${quote(head)}, '$.${rest}')` : `json_type(${quote(head)})`;
      return `json_type(doc, '$.${field}')`;
    },
    arraySource(field) {
      const { head, rest } = split(field);
      if (textSet.has(head)) return null;
      if (jsonSet.has(head)) return rest ? `${quote(head)}, '$.${rest}'` : null;
      return `doc, '$.${field}'`;
    },
    toRow(doc) {
      const rest = Object.fromEntries(Object.entries(doc).filter(([key]) => key !== '_id' && !textSet.has(key) && !jsonSet.has(key)));
      // A column is NULL for a null field and for a missing one; `doc` remembers which it was.
      for (const column of columns) if (doc[column] === null) rest[column] = null;
      const values: SqlValue[] = [doc._id, JSON.stringify(rest)];
      for (const column of text) {
        const value = doc[column];
        if (value !== undefined && value !== null && typeof value !== 'string') {
          throw new StoreError('internal', `${spec.name}.${column} is kept in a text column and must be a string, a date or null`);
        }
        values.push((value as string | undefined) ?? null);
      }
      for (const column of json) {
        const value = doc[column];
        if (value !== undefined && value !== null && (typeof value !== 'object' || Array.isArray(value))) {
          throw new StoreError('internal', `${spec.name}.${column} is kept in a JSON column and must be an object or null`);
        }
        values.push(value === undefined || value === null ? null : JSON.stringify(value));
      }
      return values;
    },
    fromRow(row) {
      const rest = row.doc as string;
      // Spread syntax defines properties, so no key can reach a prototype.
      const doc: Doc = rest === '{}' ? { _id: row.id as string } : { _id: row.id as string, ...(JSON.parse(rest) as Record<string, unknown>) };
      for (const column of text) if (row[column] !== null && row[column] !== undefined) doc[column] = row[column];
      for (const column of json) if (row[column] !== null && row[column] !== undefined) doc[column] = JSON.parse(row[column] as string);
      return doc;
    },
    servesView(view) {
      // Asked on every read of a view (GET by id among them), for a handful of constant views.
      let serves = served.get(view);
      if (serves === undefined) {
        const shown = [...view.tail, ...(view.fields ?? []), ...(spec.ttl ? ['expiresAt'] : [])];
        serves = jsonSet.has(view.spread) && shown.every((field) => textSet.has(field));
        served.set(view, serves);
      }
      return serves;
    },
  };
}

/** The default: the whole document (with its _id) as JSON text in `doc`. */
function documentLayout(table: string, insertSql: string): Layout {
  return {
    table,
    insertSql,
    columns: [],
    columnDefinitions: [],
    selectList: 'doc',
    fieldExpr: (field) => (field === '_id' ? 'id' : `json_extract(doc, '$.${field}')`),
    typeExpr: (field) => (field === '_id' ? 'typeof(id)' : `json_type(doc, '$.${field}')`),
    arraySource: (field) => (field === '_id' ? null : `doc, '$.${field}'`),
    toRow: (doc) => [doc._id, JSON.stringify(doc)],
    fromRow: (row) => JSON.parse(row.doc as string) as Doc,
    servesView: () => false,
  };
}
