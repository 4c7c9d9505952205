import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { newIds } from '../../lib/ids.ts';
import { collectionSpec } from '../collections.ts';
import type { AppendRows } from './append-rows.ts';
import { layoutOf, type SqlValue } from './layout.ts';

/**
 * Rows per INSERT statement, largest first: a batch is inserted with as few statements as these
 * sizes allow (a thousand rows take 13), since each statement run crosses from JavaScript to
 * SQLite and back, which costs more than SQLite's work for a row.
 */
const ROWS_PER_STATEMENT = [128, 32, 8, 1];

/**
 * Inserts encoded rows (append-rows.ts) on `db`, in whatever transaction is open there: the
 * append worker's, or the request connection's when a batch is written without the worker
 * (Store.appendFlat's `inline`). Rows without an id of their own get new ones.
 */
export function rowInserter(db: DatabaseSync): (rows: AppendRows) => void {
  const statements = new Map<string, StatementSync>();

  /** The INSERT of `count` rows into the collection's table. */
  const insertOf = (collection: string, count: number): StatementSync => {
    const key = `${collection}:${count}`;
    let statement = statements.get(key);
    if (!statement) {
      const { insertSql } = layoutOf(collectionSpec(collection));
      const at = insertSql.lastIndexOf(' VALUES ') + ' VALUES '.length;
      const row = insertSql.slice(at);
      statement = db.prepare(insertSql.slice(0, at) + new Array<string>(count).fill(row).join(', '));
      statements.set(key, statement);
    }
    return statement;
  };

  return ({ collection, width, values, ids }) => {
    const total = values.length / width;
    const fresh = newIds(total);
    let row = 0;
    for (const size of ROWS_PER_STATEMENT) {
      while (total - row >= size) {
        const args = new Array<SqlValue>(size * (width + 1));
        let at = 0;
        for (let end = row + size; row < end; row++) {
          args[at++] = ids?.[row] ?? (fresh[row] as string);
          for (let v = row * width, last = v + width; v < last; v++) args[at++] = values[v] as SqlValue;
        }
        insertOf(collection, size).run(...args);
      }
    }
  };
}
