/**
 * The host half of `db` inside a handler, opened per run. The prelude sends each call as
 * `(id, operation, argsJson)` without waiting; the host does the work and hands the reply back through
 * the prelude's `deliver`, whose `apply` carries isolated-vm's `timeout`. The handler code a reply
 * resumes runs inside that apply, so a continuation that loops is stopped like any other code of the
 * run. Only plain data crosses the boundary in either direction.
 *
 * Time, against one deadline that moves once:
 *
 * | phase                           | deadline               | a new call                  | a reply
 * |---------------------------------|------------------------|-----------------------------|----------------------------------
 * | the run is under way            | the run's own          | done if before the deadline | delivered with the time left; a
 * |                                 |                        |                             | timeout fails the run (`onTimeout`)
 * | the run has answered (`finish`) | the answer + timeoutMs | never done, never answered  | delivered with the time left; if
 * |                                 |                        |                             | isolated-vm cannot stop it, `retire`
 * | past the deadline               |                        | dropped                     | dropped: nothing waits for it
 *
 * A call the handler did not await is the only way its code runs after the run has answered; what it
 * resumes is held to the late deadline. Calls started after the answer are never answered (rather than
 * refused) so that late code cannot bounce calls off the host until the deadline.
 *
 * Errors: a client error (AppError 4xx, e.g. a validation failure or a unique clash) reaches the handler
 * with its message and status so the handler can react to it (uncaught, a unique clash answers 409:
 * see handler-runner's readEnvelope); anything else becomes a generic message, because its text may
 * describe the host (the engine's HandlerDb logs its own failures).
 */
import ivm from 'isolated-vm';
import { AppError } from '../lib/errors.ts';
import { isTimedOut } from './handler-errors.ts';
import type { DbReply } from './handler-prelude.ts';
import { MAX_PENDING_DB_CALLS, type HandlerDb, type HandlerFindOptions } from './handler-types.ts';

export type DbDispatcher = (id: unknown, operation: unknown, argsJson: unknown) => void;
export type DbDeliver = (id: number, reply: DbReply) => void;

export interface DbBridgeOptions {
  /** When the run's time is up (performance.now() clock). */
  deadline: number;
  /** The handler time limit; late code gets as much from the run's answer. */
  timeoutMs: number;
  /** A reply's delivery was stopped by the time limit while the run was under way. */
  onTimeout(error: unknown): void;
  /** Late code was not stopped by isolated-vm's timeout: the only remedy left is disposing the isolate. */
  retire(): void;
  /** The run has answered and no call or delivery of it is under way any more: its isolate is quiet. */
  onReleased?(): void;
}

export interface DbBridge {
  readonly reference: ivm.Reference<DbDispatcher>;
  /** The prelude's `deliver`, once the context has it; the bridge releases it. */
  connect(deliver: ivm.Reference<DbDeliver>): void;
  /** The run has answered: see the table above. Releases the bridge once no call or delivery is under way. */
  finish(): void;
}

/** How long a late delivery may run past its timeout before the isolate is disposed instead. */
const RETIRE_GRACE_MS = 50;

type Operation = (db: HandlerDb, args: unknown[]) => Promise<unknown>;

const operations: Record<string, Operation> = {
  findOne: (db, [filter]) => db.findOne(record(filter ?? {}, 'db.findOne(filter): filter')),
  find: (db, [filter, options]) => db.find(record(filter ?? {}, 'db.find(filter, options): filter'), findOptions(options)),
  create: (db, [data]) => db.create(record(data, 'db.create(data): data')),
  update: (db, [id, data]) => db.update(text(id, 'db.update(id, data): id'), record(data, 'db.update(id, data): data')),
  delete: (db, [id]) => db.delete(text(id, 'db.delete(id): id')),
};

export function openDbBridge(db: HandlerDb, options: DbBridgeOptions): DbBridge {
  let deadline = options.deadline;
  let finished = false;
  let released = false;
  let deliver: ivm.Reference<DbDeliver> | undefined;
  // Calls being done plus replies being delivered: the references must outlive both.
  let busy = 0;
  let calls = 0;

  const release = (): void => {
    if (!finished || busy > 0 || released) return;
    released = true;
    for (const handle of [deliver, reference]) {
      try {
        handle?.release();
      } catch {
        // already released with its isolate
      }
    }
    options.onReleased?.();
  };

  const send = (id: number, reply: DbReply): void => {
    const left = Math.ceil(deadline - performance.now());
    if (left <= 0 || deliver === undefined) return;
    const late = finished;
    busy++;
    const guard = late ? setTimeout(options.retire, left + RETIRE_GRACE_MS).unref() : undefined;
    deliver
      .apply(undefined, [id, reply], { arguments: { copy: true }, timeout: left })
      .catch((error: unknown) => {
        // A disposed isolate (timeout or memory elsewhere) rejects too; that run reports its own failure.
        if (!late && isTimedOut(error)) options.onTimeout(error);
      })
      .finally(() => {
        clearTimeout(guard);
        busy--;
        release();
      });
  };

  const answer = async (id: number, operation: unknown, argsJson: unknown): Promise<void> => {
    calls++;
    busy++;
    let reply: DbReply;
    try {
      reply = await perform(db, operation, argsJson);
    } finally {
      calls--;
      busy--;
    }
    send(id, reply);
    release();
  };

  const dispatch: DbDispatcher = (id, operation, argsJson) => {
    if (finished || typeof id !== 'number' || performance.now() >= deadline) return;
    // The prelude enforces the cap before sending; this is the host's own check of the same bound.
    if (calls >= MAX_PENDING_DB_CALLS) {
      send(id, { ok: false, message: `db.${String(operation)} refused: ${MAX_PENDING_DB_CALLS} db calls of this run are already under way` });
      return;
    }
    void answer(id, operation, argsJson);
  };

  const reference = new ivm.Reference(dispatch);
  return {
    reference,
    connect: (port) => {
      deliver = port;
    },
    finish: () => {
      if (finished) return;
      finished = true;
      deadline = performance.now() + options.timeoutMs;
      release();
    },
  };
}

async function perform(db: HandlerDb, operation: unknown, argsJson: unknown): Promise<DbReply> {
  const name = typeof operation === 'string' && Object.hasOwn(operations, operation) ? operation : undefined;
  try {
    const args: unknown = typeof argsJson === 'string' ? JSON.parse(argsJson) : undefined;
    if (name === undefined || !Array.isArray(args)) throw new AppError(400, `db.${String(operation)} is not a function`);
    const value = await operations[name]!(db, args);
    return { ok: true, value: JSON.stringify(value ?? null) };
  } catch (error) {
    if (error instanceof AppError && error.status < 500) return { ok: false, message: error.message, status: error.status };
    return { ok: false, message: `db.${name ?? 'call'} failed` };
  }
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
