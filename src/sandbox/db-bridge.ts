/**
 * The host half of `db` inside a handler: one isolated-vm Reference to a dispatcher, opened per run and
 * closed when the run ends. Arguments arrive as a JSON string and results leave as a JSON string, so
 * nothing but plain data crosses the boundary in either direction. A call the handler starts after its
 * run has returned (from an un-awaited promise chain) is refused; one already under way completes.
 *
 * Errors: a client error (AppError 4xx, e.g. a validation failure) reaches the handler with its message
 * and status so the handler can react to it; anything else becomes a generic message, because its text
 * may describe the host (the engine's HandlerDb logs its own failures).
 */
import ivm from 'isolated-vm';
import { AppError } from '../lib/errors.ts';
import type { HandlerDb, HandlerFindOptions } from './handler-types.ts';

/** What the dispatcher answers; the prelude turns a failure into a thrown Error inside the sandbox. */
export type DbReply = { ok: true; value: string } | { ok: false; message: string; status?: number };
export type DbDispatcher = (operation: unknown, argsJson: unknown) => Promise<DbReply>;

export interface DbBridge {
  readonly reference: ivm.Reference<DbDispatcher>;
  /** Calls under way right now. */
  inFlight(): number;
  /** Resolves once no call is under way. */
  settled(): Promise<void>;
  release(): void;
}

type Operation = (db: HandlerDb, args: unknown[]) => Promise<unknown>;

const operations: Record<string, Operation> = {
  findOne: (db, [filter]) => db.findOne(record(filter ?? {}, 'db.findOne(filter): filter')),
  find: (db, [filter, options]) => db.find(record(filter ?? {}, 'db.find(filter, options): filter'), findOptions(options)),
  create: (db, [data]) => db.create(record(data, 'db.create(data): data')),
  update: (db, [id, data]) => db.update(text(id, 'db.update(id, data): id'), record(data, 'db.update(id, data): data')),
  delete: (db, [id]) => db.delete(text(id, 'db.delete(id): id')),
};

export function openDbBridge(db: HandlerDb): DbBridge {
  // Releasing our handle does not invalidate the copy the sandbox holds, hence the flag.
  let open = true;
  let inFlight = 0;
  let waiters: Array<() => void> = [];
  const dispatch: DbDispatcher = async (operation, argsJson) => {
    const name = typeof operation === 'string' && Object.hasOwn(operations, operation) ? operation : undefined;
    if (!open) return { ok: false, message: 'db is no longer available: the handler run has finished' };
    inFlight++;
    try {
      const args: unknown = typeof argsJson === 'string' ? JSON.parse(argsJson) : undefined;
      if (name === undefined || !Array.isArray(args)) throw new AppError(400, `db.${String(operation)} is not a function`);
      const value = await operations[name]!(db, args);
      return { ok: true, value: JSON.stringify(value ?? null) };
    } catch (error) {
      if (error instanceof AppError && error.status < 500) return { ok: false, message: error.message, status: error.status };
      return { ok: false, message: `db.${name ?? 'call'} failed` };
    } finally {
      if (--inFlight === 0) {
        const done = waiters;
        waiters = [];
        for (const wake of done) wake();
      }
    }
  };
  const reference = new ivm.Reference(dispatch);
  return {
    reference,
    inFlight: () => inFlight,
    settled: () => (inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
    release: () => {
      open = false;
      reference.release();
    },
  };
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  throw new AppError(400, `${what} must be an object`);
}

function text(value: unknown, what: string): string {
  if (typeof value === 'string' && value !== '') return value;
  throw new AppError(400, `${what} must be a non-empty string`);
}

function findOptions(value: unknown): HandlerFindOptions | undefined {
  if (value === undefined || value === null) return undefined;
  const { limit, skip, sort } = record(value, 'db.find(filter, options): options');
  const options: HandlerFindOptions = {};
  if (limit !== undefined) options.limit = count(limit, 'limit');
  if (skip !== undefined) options.skip = count(skip, 'skip');
  if (sort !== undefined) {
    options.sort = {};
    for (const [field, direction] of Object.entries(record(sort, 'db.find(filter, options): options.sort'))) {
      if (direction !== 1 && direction !== -1) throw new AppError(400, `db.find(filter, options): options.sort.${field} must be 1 or -1`);
      options.sort[field] = direction;
    }
  }
  return options;
}

function count(value: unknown, what: string): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  throw new AppError(400, `db.find(filter, options): options.${what} must be a non-negative integer`);
}
