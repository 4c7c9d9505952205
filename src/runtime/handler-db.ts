import { AppError, badRequest } from '../lib/errors.ts';
import type { Logger } from '../lib/logger.ts';
import { isId } from '../lib/ids.ts';
import type { CompiledRecordSchema } from '../model/record-schema.ts';
import { InvalidFilterError } from '../store/types.ts';
import type { HandlerDb } from '../sandbox/handler-types.ts';
import { flattenRecord, type RecordsService } from '../services/records.ts';

/**
 * What a handler's `db` can do: read and write the records of its own endpoint's resourcePath,
 * nothing else. Records written here get the endpoint's retention like POST. Handlers are admin
 * code, so their writes are not validated against the schema; they must be JSON objects whose
 * top-level keys are plain field names, and whose keys follow the record rule: inside the
 * schema's `json` fields any key is data, elsewhere keys starting with `$`, `__proto__`,
 * `constructor` and `prototype` are refused (CompiledRecordSchema.keyProblems).
 */
const MAX_FIND = 1000;
const RESERVED = new Set(['_id', 'id', 'createdAt', 'updatedAt', 'expiresAt', '__proto__', 'constructor', 'prototype']);
const MAX_DEPTH = 32;

export interface HandlerDbScope {
  endpointId: string;
  resourcePath: string;
  retentionDays: number | null;
  schema: Pick<CompiledRecordSchema, 'keyProblems'>;
}

function recordData(data: unknown, scope: HandlerDbScope): Record<string, unknown> {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw badRequest('db: data must be an object');
  for (const key of Object.keys(data)) {
    if (RESERVED.has(key)) throw badRequest(`db: "${key}" cannot be a field name`);
  }
  if (depthOf(data, 0) > MAX_DEPTH) throw badRequest('db: data is nested too deeply');
  const [problem] = scope.schema.keyProblems(data as Record<string, unknown>);
  if (problem) throw badRequest(`db: "${problem.field}" cannot be a key outside json fields`, [problem]);
  return data as Record<string, unknown>;
}

/** How deep a value nests, stopping once it is past MAX_DEPTH. */
function depthOf(value: unknown, depth: number): number {
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return depth;
  let deepest = depth;
  for (const inner of Object.values(value)) deepest = Math.max(deepest, depthOf(inner, depth + 1));
  return deepest;
}

/**
 * Bad filters reach the handler as 400-style errors it can catch and read. Any other failure
 * reaches it only as "db.<call> failed" (the host's details stay out of user code): logged here.
 */
async function clientErrors<T>(call: string, scope: HandlerDbScope, logger: Pick<Logger, 'error'> | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof InvalidFilterError) throw badRequest(`db: ${error.message}`);
    if (!(error instanceof AppError && error.status < 500)) logger?.error(`handler db.${call} failed on ${scope.resourcePath}`, { error });
    throw error;
  }
}

export function handlerDb(records: RecordsService, scope: HandlerDbScope, logger?: Pick<Logger, 'error'>): HandlerDb {
  const db = scopedDb(records, scope);
  return {
    findOne: (filter) => clientErrors('findOne', scope, logger, () => db.findOne(filter)),
    find: (filter, options) => clientErrors('find', scope, logger, () => db.find(filter, options)),
    create: (data) => clientErrors('create', scope, logger, () => db.create(data)),
    update: (id, data) => clientErrors('update', scope, logger, () => db.update(id, data)),
    delete: (id) => clientErrors('delete', scope, logger, () => db.delete(id)),
  };
}

function scopedDb(records: RecordsService, scope: HandlerDbScope): HandlerDb {
  const { resourcePath } = scope;
  return {
    async findOne(filter) {
      const [record] = await records.find(resourcePath, filter ?? {}, { limit: 1 });
      return record ? flattenRecord(record) : null;
    },
    async find(filter, options = {}) {
      const limit = Math.min(Math.max(1, options.limit ?? 100), MAX_FIND);
      const found = await records.find(resourcePath, filter ?? {}, { limit, skip: Math.max(0, options.skip ?? 0), ...(options.sort ? { sort: options.sort } : {}) });
      return found.map(flattenRecord);
    },
    async create(data) {
      return flattenRecord(await records.create({ endpointId: scope.endpointId, resourcePath, data: recordData(data, scope), retentionDays: scope.retentionDays }));
    },
    async update(id, data) {
      if (!isId(id)) return null;
      const existing = await records.get(resourcePath, id);
      if (!existing) return null;
      const updated = await records.replace(resourcePath, id, { ...existing.data, ...recordData(data, scope) }, scope.endpointId);
      return updated ? flattenRecord(updated) : null;
    },
    async delete(id) {
      return isId(id) && (await records.delete(resourcePath, id, scope.endpointId)) !== null;
    },
  };
}
