import { setImmediate as nextTurn } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import { badRequest, conflict, forbidden, notFound } from '../lib/errors.ts';
import { isId } from '../lib/ids.ts';
import { parsePathPattern, pathShape, unversionedPaths, versionedPath, type PathPattern } from '../lib/paths.ts';
import type { EventBus } from '../events/bus.ts';
import type { Actor } from '../model/actor.ts';
import {
  ACCESS_TYPES,
  DEFAULT_NETWORK_ACCESS,
  HTTP_METHODS,
  NETWORK_ACCESS_SCHEMA,
  type AccessType,
  type EndpointDoc,
  type EndpointGroupDoc,
  type HttpMethod,
} from '../model/endpoint.ts';
import { indexedFields, unionIndexedFields, type IndexedField } from '../model/indexed-fields.ts';
import { assertValidNetworkAccess, type NetworkAccess } from '../model/network-access.ts';
import type { GroupDoc } from '../model/records.ts';
import { compileRecordSchema, type EndpointSchema, type FieldDef } from '../model/record-schema.ts';
import { hasReferences, mentionsEndpointIds, referenceTargets, schemaFromWire, schemaToWire, type ReferenceTargetOf } from '../model/schema-wire.ts';
import { compileValidator } from '../model/validation.ts';
import { DuplicateKeyError, type Filter, type Page, type Store } from '../store/types.ts';
import type { AuditLog } from './audit-log.ts';
import type { ChangeQueue } from './change-queue.ts';
import { mergeNetworkAccess } from './endpoint-groups.ts';
import { checkEndpointPath, checkEndpointSchema, checkGroupAccess, checkHandlerCode, type RuleProblem } from './endpoint-rules.ts';
import { collect, collectAsync, fieldProblemsError, validatedWithAll, type FieldProblems } from './field-problems.ts';
import { asksForIndexes, RecordIndexes } from './record-indexes.ts';
import { assertNoIdOnCreate, assertShownUnchanged, setShownFieldsAside } from './shown-fields.ts';
import type { RecordsService } from './records.ts';
import type { Revisions } from './revisions.ts';
import { SYSTEM_ENDPOINTS } from './system-endpoints.ts';

/**
 * Endpoint definitions: validation at save time (path, schema, network rules, handler code),
 * the system endpoints' protections, moving an endpoint's records with it when its path changes
 * (atomically, see saveWithRecords), and the `endpoints` revision that tells every instance to
 * rebuild its route table. Every change is audited here, for the actor given (the API caller, or
 * the project file sync).
 */
export interface EndpointInput {
  name: string;
  description?: string;
  slug?: string;
  path: string;
  method: HttpMethod;
  accessType: AccessType;
  allowedGroupIds?: string[];
  groupId?: string | null;
  /** The stored (map) form: the API's array form is converted by `storedInput` first. */
  schema: Record<string, unknown>;
  networkAccess?: Partial<NetworkAccess>;
  inheritGroupNetworkAccess?: boolean;
  enabled?: boolean;
  apiVersion?: string | null;
  retentionDays?: number | null;
  handler?: { enabled?: boolean; code?: string };
}

const properties = {
  name: { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' },
  description: { type: 'string', maxLength: 5000 },
  slug: { type: 'string', maxLength: 200, pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$' },
  path: { type: 'string', minLength: 1, maxLength: 200 },
  method: { enum: [...HTTP_METHODS] },
  accessType: { enum: [...ACCESS_TYPES] },
  allowedGroupIds: { type: 'array', maxItems: 100, uniqueItems: true, items: { type: 'string', maxLength: 24 } },
  groupId: { anyOf: [{ type: 'string', maxLength: 24 }, { type: 'null' }] },
  schema: { type: 'object' },
  networkAccess: NETWORK_ACCESS_SCHEMA,
  inheritGroupNetworkAccess: { type: 'boolean' },
  enabled: { type: 'boolean' },
  apiVersion: { anyOf: [{ type: 'string', pattern: '^v[0-9]{1,4}$' }, { type: 'null' }] },
  retentionDays: { anyOf: [{ type: 'integer', minimum: 1, maximum: 36_500 }, { type: 'null' }] },
  handler: {
    type: 'object',
    additionalProperties: false,
    properties: { enabled: { type: 'boolean' }, code: { type: 'string', maxLength: 100_000 } },
  },
};
const validateCreate = compileValidator<EndpointInput>({
  type: 'object',
  additionalProperties: false,
  required: ['name', 'path', 'method', 'accessType', 'schema'],
  properties,
});
const validateUpdate = compileValidator<Partial<EndpointInput>>({ type: 'object', additionalProperties: false, properties });

const CALL_WRITES_PER_TURN = 200;
/** Members a definition is shown with that are not input (shown-fields.ts): checked, and kept by the service. */
const SHOWN_NAMED = ['_id', 'isSystem'] as const;
const SHOWN_KEPT = ['callCount', 'createdAt', 'updatedAt'];

/** A definition as the management API shows it: the schema as the spec's array (schema-wire.ts). */
export function publicEndpoint(doc: EndpointDoc, targetOf: ReferenceTargetOf): Record<string, unknown> {
  const { revision: _revision, ...rest } = doc;
  return { ...rest, schema: schemaToWire(doc.schema as EndpointSchema, targetOf), createdAt: String(doc.createdAt), updatedAt: String(doc.updatedAt) };
}

/** The slug derived from a name when none is given. */
export function slugify(name: string): string {
  return (
    name
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 200) || 'endpoint'
  );
}

/**
 * Rule problems (endpoint-rules.ts) as collected field problems. A problem inside a field already
 * named (a reference whose id was not found is then also a reference without a target) and a
 * problem already listed are left out.
 */
function addRuleProblems(problems: FieldProblems, found: readonly RuleProblem[]): void {
  const named = problems.flatMap((problem) => problem.details);
  const shadowed = (field: string, message: string): boolean =>
    named.some((detail) => (detail.field === field && detail.message === message) || isInside(field, detail.field.replace(/\.refEndpointId$/, '')));
  for (const { field, message, summary } of found) if (!shadowed(field, message)) problems.push({ message: summary, details: [{ field, message }] });
}

function isInside(field: string, parent: string): boolean {
  return parent !== field && parent.startsWith('schema.') && field.startsWith(`${parent}.`);
}

/** The store-free rules, on the fields of an input that failed validation and are of the right type. */
function looseRuleProblems(input: unknown): RuleProblem[] {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return [];
  const given = input as Record<string, unknown>;
  const path = typeof given.path === 'string' ? checkEndpointPath(given.path) : { problems: [] };
  const schema = typeof given.schema === 'object' && given.schema !== null ? checkEndpointSchema(given.schema, path.pattern ? { path: path.pattern } : {}) : { problems: [], schema: {} };
  const handler = typeof given.handler === 'object' && given.handler !== null ? checkHandlerCode(given.handler as { enabled?: unknown; code?: unknown }) : [];
  return [
    ...path.problems,
    ...schema.problems,
    ...(schema.schema ? [] : fieldsAlone(given.schema).flatMap((alone) => alone.problems)),
    ...(typeof given.accessType === 'string' ? checkGroupAccess(given.accessType, given.allowedGroupIds, 'allowedGroupIds', 'id') : []),
    ...handler,
  ];
}

/**
 * When a schema as a whole is invalid, the checks of its top-level fields that are valid on their
 * own, so that a wrong reference is still reported beside the other fields' problems.
 */
function fieldsAlone(raw: unknown): Array<{ problems: RuleProblem[] }> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return [];
  return Object.entries(raw)
    .map(([name, def]) => checkEndpointSchema({ [name]: def }))
    .filter((alone) => alone.schema !== undefined);
}

export class EndpointsService {
  private readonly store: Store;
  private readonly revisions: Revisions;
  private readonly events: EventBus;
  private readonly records: RecordsService;
  private readonly audit: AuditLog;
  private readonly definitions: ChangeQueue;
  private systemIds: { revision: number; ids: ReadonlyMap<string, string> } | null = null;
  readonly indexes: RecordIndexes;

  constructor(deps: { store: Store; revisions: Revisions; events: EventBus; records: RecordsService; audit: AuditLog; definitions: ChangeQueue }) {
    this.store = deps.store;
    this.definitions = deps.definitions;
    this.indexes = new RecordIndexes(deps.store);
    this.revisions = deps.revisions;
    this.events = deps.events;
    this.records = deps.records;
    this.audit = deps.audit;
  }

  private get endpoints() {
    return this.store.collection<EndpointDoc>('endpoints');
  }

  list(query: { page: number; limit: number; search?: string; filter?: Filter }): Promise<Page<EndpointDoc>> {
    return this.endpoints.findPage(query.filter ?? {}, {
      page: query.page,
      limit: query.limit,
      sort: { path: 1, method: 1 },
      ...(query.search ? { search: { term: query.search, fields: ['name', 'path', 'description', 'slug'] } } : {}),
    });
  }

  all(): Promise<EndpointDoc[]> {
    return this.endpoints.find({}, { sort: { path: 1, method: 1 } });
  }

  /** The indexed fields of a path: the union over its definitions (model/indexed-fields.ts). */
  /**
   * Each path's indexed fields, over all its definitions, disabled ones too: the store's indexes
   * are (record-indexes.ts), so a unique field marked only on a disabled definition still gives 409s.
   */
  async indexesByPath(): Promise<Map<string, IndexedField[]>> {
    const byPath = new Map<string, IndexedField[][]>();
    for (const doc of await this.endpoints.find({})) {
      const fields = indexedFields(doc.schema as EndpointSchema);
      if (fields.length > 0) byPath.set(doc.path, [...(byPath.get(doc.path) ?? []), fields]);
    }
    return new Map([...byPath].map(([path, lists]) => [path, unionIndexedFields(lists)]));
  }

  async indexesOfPath(path: string): Promise<IndexedField[]> {
    const onPath = await this.endpoints.find({ path });
    return unionIndexedFields(onPath.map((doc) => indexedFields(doc.schema as EndpointSchema)));
  }

  async get(id: string): Promise<EndpointDoc> {
    const endpoint = isId(id) ? await this.endpoints.findById(id) : null;
    if (!endpoint) throw notFound('Endpoint not found');
    return endpoint;
  }

  /**
   * Definitions as the management API shows them. The other definitions are read only when a
   * schema has references (for their `refEndpointId`).
   */
  async present(docs: readonly EndpointDoc[]): Promise<Array<Record<string, unknown>>> {
    const targets = [...new Set(docs.filter((doc) => hasReferences(doc.schema as EndpointSchema)).flatMap((doc) => referencedPaths(doc.schema as EndpointSchema)))];
    // Only the definitions on the referenced paths are read (the path index), not every one.
    const targetOf = targets.length > 0 ? referenceTargets(await this.endpoints.find({ path: { $in: targets } })) : () => null;
    return docs.map((doc) => publicEndpoint(doc, targetOf));
  }

  /** The definition an event carries (for webhooks); not built when nobody would receive it. */
  private async eventView(event: 'endpoint.created' | 'endpoint.updated' | 'endpoint.deleted', doc: EndpointDoc): Promise<Record<string, unknown> | undefined> {
    return this.events.has(event) ? (await this.present([doc]))[0] : undefined;
  }

  /**
   * Definition saves one at a time in this process, together with group deletes (the shared
   * `definitions` queue). The (path, method) pair is a unique index, but the versioned-alias rule
   * (assertNoVersionClash) and the group checks are reads before the write: two saves racing
   * could both pass them. Across instances that race remains (README).
   */
  private oneAtATime<T>(save: () => Promise<T>): Promise<T> {
    return this.definitions.run(save);
  }

  create(input: unknown, actor: Actor): Promise<EndpointDoc> {
    return this.oneAtATime(() => this.createNow(input, actor));
  }

  update(id: string, input: unknown, actor: Actor): Promise<EndpointDoc> {
    return this.oneAtATime(() => this.updateNow(id, input, actor));
  }

  private async createNow(input: unknown, actor: Actor): Promise<EndpointDoc> {
    const { rest, shown } = setShownFieldsAside(input, SHOWN_NAMED, SHOWN_KEPT);
    assertNoIdOnCreate(shown);
    if (shown.isSystem !== undefined && shown.isSystem !== false) throw badRequest('Invalid request body: isSystem can only be false: system endpoints are the platform\'s own', [{ field: 'isSystem', message: 'can only be false' }]);
    const problems: FieldProblems = [];
    const valid = await this.validated(validateCreate, await this.storedInput(rest, problems), problems);
    const doc = await this.prepare(valid, null, problems);
    try {
      const created = await this.withIndexes(null, doc, () => this.endpoints.insertOne(doc));
      await this.revisions.bump('endpoints');
      await this.events.emitDurable('endpoint.created', { id: created._id, path: created.path, method: created.method, endpoint: await this.eventView('endpoint.created', created) });
      await this.audit.change(actor, { action: 'endpoint_created', message: `Endpoint ${created.method} ${created.path} created`, source: 'endpoints', statusCode: 201 });
      return created;
    } catch (error) {
      throw duplicate(error, doc.path, doc.method);
    }
  }

  private async updateNow(id: string, input: unknown, actor: Actor): Promise<EndpointDoc> {
    const { rest, shown } = setShownFieldsAside(input, SHOWN_NAMED, SHOWN_KEPT);
    const problems: FieldProblems = [];
    const valid = await this.validated(validateUpdate, await this.storedInput(rest, problems), problems);
    const current = await this.get(id);
    assertShownUnchanged(shown, current);
    // A path that does not parse is reported by prepare, with every other problem of the input.
    const newPath = valid.path === undefined ? undefined : checkEndpointPath(valid.path, { system: true }).pattern;
    if (current.isSystem) {
      const pathChanges = valid.path !== undefined && (newPath?.path ?? valid.path) !== current.path;
      const methodChanges = valid.method !== undefined && valid.method !== current.method;
      if (pathChanges || methodChanges) throw badRequest('A system endpoint cannot change its path or method');
      // Platform code serves these routes: only the descriptive fields mean anything. A field
      // sent back as it is (a client saving the object it read) changes nothing and passes.
      const now = definitionInput(current);
      const changes = (field: keyof EndpointInput): boolean =>
        field === 'networkAccess'
          ? !isDeepStrictEqual(mergeNetworkAccess(current.networkAccess, valid.networkAccess), current.networkAccess)
          : field === 'handler'
            ? !isDeepStrictEqual({ ...current.handler, ...valid.handler }, current.handler)
            : field === 'schema'
              ? // Compared as shown: the stored form keeps what a definition was saved with (`required: false` or not).
                !isDeepStrictEqual(schemaToWire(valid.schema as EndpointSchema, () => null), schemaToWire(current.schema as EndpointSchema, () => null))
              : !isDeepStrictEqual(valid[field], now[field]);
      const inert = (Object.keys(valid) as Array<keyof EndpointInput>).filter((field) => !['name', 'description', 'slug', 'groupId', 'path', 'method'].includes(field) && changes(field));
      if (inert.length > 0) throw badRequest(`A system endpoint is served by the platform: ${inert.join(', ')} cannot be changed (only name, description, slug and groupId)`);
    }
    if (newPath !== undefined) {
      const from = parsePathPattern(current.path);
      const to = newPath;
      const unmapped = to.paramNames.filter((name) => !from.paramNames.includes(name));
      if (to.path !== from.path && unmapped.length > 0 && (await this.records.countOwn(current._id)) > 0) {
        throw badRequest(`Invalid path: this endpoint's records cannot move to ${to.path}: they have no value for :${unmapped.join(', :')}`, [{ field: 'path', message: 'adds parameters its records have no value for' }]);
      }
      // Dropping a parameter would merge the records of every value into one path and lose which
      // value each had (no later move could split them again).
      const dropped = from.paramNames.filter((name) => !to.paramNames.includes(name));
      if (to.path !== from.path && dropped.length > 0 && (await this.records.countOwn(current._id)) > 0) {
        throw badRequest(`Invalid path: this endpoint's records cannot move to ${to.path}: they would lose their :${dropped.join(', :')} value, and the records of every value would be mixed`, [{ field: 'path', message: 'drops parameters its records have values for' }]);
      }
    }
    const merged = { ...definitionInput(current), ...valid } as EndpointInput;
    merged.networkAccess = mergeNetworkAccess(current.networkAccess, valid.networkAccess);
    merged.handler = { ...current.handler, ...(valid.handler ?? {}) };
    const next = await this.prepare(merged, current, problems);
    // The revision is counted up by $inc below ($set and $inc of one field conflict on MongoDB).
    const { createdAt: _created, callCount: _calls, revision: _revision, ...changes } = next;
    const set = { ...changes, updatedAt: new Date() };
    let updated: EndpointDoc | null;
    try {
      updated = await this.withIndexes(current, next, () =>
        next.path === current.path
          ? this.endpoints.updateOne({ _id: current._id }, { $set: set, $inc: { revision: 1 } })
          : this.saveWithRecords(current, set),
      );
    } catch (error) {
      throw duplicate(error, next.path, next.method);
    }
    if (!updated) throw notFound('Endpoint not found');
    await this.revisions.bump('endpoints');
    await this.events.emitDurable('endpoint.updated', { id: updated._id, path: updated.path, method: updated.method, previousPath: current.path, previousMethod: current.method, endpoint: await this.eventView('endpoint.updated', updated) });
    await this.audit.change(actor, { action: 'endpoint_updated', message: `Endpoint ${updated.method} ${updated.path} updated`, source: 'endpoints' });
    return updated;
  }

  delete(id: string, actor: Actor): Promise<EndpointDoc> {
    return this.oneAtATime(() => this.deleteNow(id, actor));
  }

  private async deleteNow(id: string, actor: Actor): Promise<EndpointDoc> {
    const current = await this.get(id);
    if (current.isSystem) throw forbidden('A system endpoint cannot be deleted');
    await this.withIndexes(current, null, () => this.endpoints.deleteOne({ _id: current._id }));
    await this.revisions.bump('endpoints');
    await this.events.emitDurable('endpoint.deleted', { id: current._id, path: current.path, method: current.method, endpoint: await this.eventView('endpoint.deleted', current) });
    await this.audit.change(actor, { action: 'endpoint_deleted', message: `Endpoint ${current.method} ${current.path} deleted`, source: 'endpoints' });
    return current;
  }

  /**
   * A definition change with the record indexes it implies (record-indexes.ts): indexes the
   * change adds are built first — a unique one that existing records contradict refuses the
   * change with a 409, before anything is saved — then, saved or not, the touched paths keep
   * exactly the indexes their definitions ask for. Changes that involve no indexed field cost
   * nothing here. Builds run on a worker thread (embedded store): the save waits, requests do not.
   */
  private async withIndexes<T>(before: EndpointDoc | null, after: Omit<EndpointDoc, '_id'> | null, save: () => Promise<T>): Promise<T> {
    if (!asksForIndexes(before) && !asksForIndexes(after)) return save();
    const paths = [...new Set([before?.path, after?.path].filter((path): path is string => typeof path === 'string'))];
    const onPaths = async () => this.endpoints.find({ path: { $in: paths } });
    const others = (await onPaths()).filter((doc) => doc._id !== before?._id);
    await this.indexes.prepare(paths, after ? [...others, after] : others);
    try {
      return await save();
    } finally {
      // Only drops are left to do here (prepare built what is wanted). One that fails leaves an
      // unused index, dropped at the next change of these paths or the next start: the change
      // itself stands (or failed) on its own.
      await this.indexes.settle(paths, await onPaths()).catch(() => undefined);
    }
  }

  /** At start: the record indexes of every path are what its definitions ask for. */
  async syncRecordIndexes(): Promise<void> {
    await this.indexes.syncAll(await this.all());
  }

  /**
   * Finishes path changes a crash interrupted (on MongoDB; see Store.applyBatch) and has every
   * instance rebuild its routes when there were any. `minAgeMs` leaves a batch that a live
   * instance may still be applying to it.
   */
  async finishInterruptedMoves(minAgeMs = 0): Promise<number> {
    const finished = await this.store.finishPendingBatches(minAgeMs);
    if (finished > 0) await this.revisions.bump('endpoints');
    return finished;
  }

  /** Seeds (and keeps current) the definitions describing the platform's own public routes. */
  async ensureSystemEndpoints(): Promise<void> {
    const now = new Date();
    let changed = false;
    for (const system of SYSTEM_ENDPOINTS) {
      const existing = await this.endpoints.findOne({ path: system.path, method: system.method });
      if (existing) {
        if (!existing.isSystem) {
          await this.endpoints.updateOne({ _id: existing._id }, { $set: { isSystem: true }, $inc: { revision: 1 } });
          changed = true;
        }
        continue;
      }
      try {
        await this.endpoints.insertOne({
          name: system.name,
          description: system.description,
          slug: slugify(system.name),
          path: system.path,
          method: system.method,
          accessType: 'public',
          allowedGroupIds: [],
          groupId: null,
          schema: system.schema,
          networkAccess: { ...DEFAULT_NETWORK_ACCESS },
          inheritGroupNetworkAccess: false,
          enabled: true,
          apiVersion: null,
          isSystem: true,
          retentionDays: null,
          handler: { enabled: false, code: '' },
          callCount: 0,
          revision: 1,
          createdAt: now,
          updatedAt: now,
        });
        changed = true;
      } catch (error) {
        if (!(error instanceof DuplicateKeyError)) throw error; // another instance seeded it
      }
    }
    if (changed) await this.revisions.bump('endpoints');
  }

  /**
   * `METHOD path` → id of each system definition (the platform routes it describes count their
   * calls under it), read again whenever the definitions' revision moves.
   */
  async systemEndpointIds(): Promise<ReadonlyMap<string, string>> {
    const revision = await this.revisions.current('endpoints');
    if (this.systemIds?.revision !== revision) {
      const docs = await this.endpoints.find({ isSystem: true });
      this.systemIds = { revision, ids: new Map(docs.map((doc) => [`${doc.method} ${doc.path}`, doc._id])) };
    }
    return this.systemIds.ids;
  }

  /**
   * Adds served calls to `callCount`, CALL_WRITES_PER_TURN definitions per store write: a tenant
   * with thousands of endpoints has thousands of them per flush, and a commit each (or one write
   * of them all, on the embedded store's synchronous connection) would hold up requests.
   */
  async addCalls(counts: ReadonlyMap<string, number>): Promise<void> {
    const entries = [...counts];
    for (let i = 0; i < entries.length; i += CALL_WRITES_PER_TURN) {
      if (i > 0) await nextTurn();
      await this.endpoints.incrementEach('callCount', new Map(entries.slice(i, i + CALL_WRITES_PER_TURN)));
    }
  }

  /**
   * The input with its schema in the stored (map) form: the API's array form converted, and
   * `refEndpointId`s turned into the target endpoint's path. An unknown id is a 400 naming the field.
   */
  private async storedInput(input: unknown, problems: FieldProblems): Promise<unknown> {
    if (typeof input !== 'object' || input === null || Array.isArray(input) || !Object.hasOwn(input, 'schema')) return input;
    const given = (input as { schema: unknown }).schema;
    if (typeof given !== 'object' || given === null) {
      throw badRequest('Invalid schema: schema must be an array of fields', [{ field: 'schema', message: 'must be an array of fields (or an object of field definitions)' }]);
    }
    const ids = mentionsEndpointIds(given) ? mentionedIds(given).filter(isId) : [];
    const paths = new Map(ids.length > 0 ? (await this.endpoints.find({ _id: { $in: ids } })).map((e) => [e._id, e.path]) : []);
    const converted = schemaFromWire(given, (id) => paths.get(id));
    for (const detail of converted.problems) problems.push({ message: `Invalid schema: ${detail.field} ${detail.message}`, details: [detail] });
    return { ...input, schema: converted.schema };
  }

  /**
   * The input validated. When it is not, one 400 lists its problems (after the conversion's,
   * given) together with every problem the store-free rules find in the fields it sent.
   */
  private validated<T>(validate: (input: unknown) => T, stored: unknown, problems: FieldProblems): Promise<T> {
    return validatedWithAll(() => validate(stored), stored, (_given, found) => {
      // A field the body's schema already refused is not reported again by the rules.
      const refused = new Set(found.flatMap((problem) => problem.details.map((detail) => detail.field)));
      addRuleProblems(found, looseRuleProblems(stored).filter((problem) => !refused.has(problem.field)));
    }, problems);
  }

  /**
   * Validates a whole definition and returns the document to store (without _id). The rules that
   * need no store are endpoint-rules.ts', shared with the project checks. Field problems are
   * collected, so one 400 lists every one in `details` (a wrong reference together with the
   * schema's other faults); its message is the first problem's.
   */
  private async prepare(input: EndpointInput, current: EndpointDoc | null, problems: FieldProblems): Promise<Omit<EndpointDoc, '_id'>> {
    const checkedPath = checkEndpointPath(input.path, { system: current?.isSystem === true });
    const parsed = checkedPath.pattern;
    if (parsed) await this.assertNoVersionClash(parsed.path, input.method, input.apiVersion ?? null, current?._id ?? null);
    // Only a new route is checked (definitions saved before this check keep saving), and only a
    // path without problems of its own (a reserved path is a 400 first).
    if (parsed && checkedPath.problems.length === 0 && (current === null || current.path !== parsed.path || current.method !== input.method)) await this.assertNoShapeClash(parsed, input.method, current?._id ?? null);
    addRuleProblems(problems, checkedPath.problems);
    const checkedSchema = checkEndpointSchema(input.schema, parsed ? { path: parsed } : {});
    addRuleProblems(problems, checkedSchema.problems);
    const schema = checkedSchema.schema;
    if (!schema) for (const alone of fieldsAlone(input.schema)) addRuleProblems(problems, alone.problems);
    const networkAccess = mergeNetworkAccess(DEFAULT_NETWORK_ACCESS, input.networkAccess);
    collect(problems, () => assertValidNetworkAccess(networkAccess));
    const allowedGroupIds = input.allowedGroupIds ?? [];
    addRuleProblems(problems, checkGroupAccess(input.accessType, allowedGroupIds, 'allowedGroupIds', 'id'));
    await collectAsync(problems, () => this.assertUserGroupsExist(allowedGroupIds));
    const groupId = input.groupId ?? null;
    if (groupId !== null && (!isId(groupId) || !(await this.store.collection<EndpointGroupDoc>('endpointgroups').findById(groupId)))) {
      problems.push({ message: `Invalid endpoint: unknown endpoint group ${groupId}`, details: [{ field: 'groupId', message: 'is not an endpoint group' }] });
    }
    const handler = { enabled: input.handler?.enabled ?? false, code: input.handler?.code ?? '' };
    addRuleProblems(problems, checkHandlerCode(handler));
    if (problems.length > 0 || !schema || !parsed) throw fieldProblemsError(problems, 'Invalid schema');
    // Served definitions compile their validators on first use; a save compiles it now, so a
    // schema the validator cannot take is refused here rather than on a write.
    compileRecordSchema(schema, { eager: true });
    const now = new Date();
    return {
      name: input.name.trim(),
      description: input.description ?? '',
      slug: input.slug ?? current?.slug ?? slugify(input.name),
      path: parsed.path,
      method: input.method,
      accessType: input.accessType,
      allowedGroupIds,
      groupId,
      schema,
      networkAccess,
      inheritGroupNetworkAccess: input.inheritGroupNetworkAccess ?? true,
      enabled: input.enabled ?? true,
      apiVersion: input.apiVersion ?? null,
      isSystem: current?.isSystem ?? false,
      retentionDays: input.retentionDays ?? null,
      handler,
      callCount: current?.callCount ?? 0,
      revision: (current?.revision ?? 0) + 1,
      createdAt: current?.createdAt ?? now,
      updatedAt: now,
    };
  }

  /**
   * A path may not equal another definition's versioned alias (or the reverse), whatever the
   * methods: the versioned definition's records are those of its plain path, so one URL would
   * answer from two sets of records (a record POSTed there could not be read back there).
   */
  private async assertNoVersionClash(path: string, method: HttpMethod, apiVersion: string | null, selfId: string | null): Promise<void> {
    const mine = [path, ...(apiVersion ? [versionedPath(path, apiVersion)] : [])];
    // Only definitions whose path is one of mine or whose alias could be are read (the
    // path index), so a save costs the same with 10 definitions or 10,000.
    const candidates = [...new Set([...mine.slice(1), ...mine.flatMap(unversionedPaths)])];
    const others = candidates.length === 0 ? [] : (await this.endpoints.find({ path: { $in: candidates } })).filter((e) => e._id !== selfId);
    for (const other of others) {
      const theirs = [other.path, ...(other.apiVersion ? [versionedPath(other.path, other.apiVersion)] : [])];
      // Another method may share the alias itself (both versioned forms of one path: the same records).
      const clash = mine.find((p, i) => theirs.some((q, j) => p === q && (other.method === method ? i > 0 || j > 0 : i > 0 !== j > 0)));
      if (!clash) continue;
      const served = `"${other.name}" (${other.method} ${other.path}${other.apiVersion ? `, ${other.apiVersion}` : ''})`;
      if (other.method === method) throw conflict(`${method} ${clash} is already served by ${served}`);
      throw conflict(`${method} ${clash}: ${clash} is already served by ${served}, with the records of another path; a definition there would answer one URL from two sets of records`);
    }
  }

  /**
   * 409 where this definition and another of its method would take each other's requests (see the
   * route table's precedence): the same path but for parameter names (`/t/:a/books` beside
   * `/t/:b/books`: one is never reached), or one's collection route taking every item route of the
   * other (`/t/books/:x` beside `/t/books`, whose `GET /t/books/<id>` would reach `/t/books/:x`).
   * Read through the path index from the path's literal start (up to its first parameter), so a
   * save reads the definitions under that prefix, not all of them.
   */
  private async assertNoShapeClash(pattern: PathPattern, method: HttpMethod, selfId: string | null): Promise<void> {
    const last = pattern.segments[pattern.segments.length - 1];
    const lastParam = last && 'param' in last ? last.param : null;
    const base = lastParam === null ? pattern.path : pattern.path.slice(0, pattern.path.lastIndexOf('/'));
    const firstParam = base.indexOf(':');
    const prefix = firstParam === -1 ? base : base.slice(0, firstParam);
    // Paths are ASCII without DEL (LITERAL in src/lib/paths.ts), so this bounds every path with the prefix.
    const others = await this.endpoints.find({ path: { $gte: prefix, $lt: `${prefix}\u007f` }, method });
    const mine = pathShape(pattern);
    for (const other of others) {
      // The same path is the (path, method) index's duplicate, reported as such.
      if (other._id === selfId || other.path === pattern.path) continue;
      const theirs = pathShape(parsePathPattern(other.path));
      const served = `"${other.name}" (${other.method} ${other.path})`;
      if (theirs === mine) throw conflict(`${method} ${pattern.path} matches the same requests as ${served}, which would answer them`);
      if (mine === `${theirs}/:`) throw conflict(`${method} ${pattern.path} would take every record route of ${served}: ${method} ${other.path}/<id> would reach it instead. Put a literal segment before :${lastParam} (e.g. ${base}/by-${lastParam}/:${lastParam}) or give ${served} a handler`);
      if (theirs === `${mine}/:`) throw conflict(`${method} ${pattern.path}: its record routes (${method} ${pattern.path}/<id>) would be taken by ${served}`);
    }
  }

  private async assertUserGroupsExist(ids: readonly string[]): Promise<void> {
    const wellFormed = ids.filter((id) => isId(id));
    const found = wellFormed.length ? await this.store.collection<GroupDoc>('groups').find({ _id: { $in: wellFormed } }) : [];
    const missing = ids.filter((id) => !found.some((g) => g._id === id));
    if (missing.length > 0) throw badRequest(`Invalid endpoint: unknown group id ${missing.join(', ')}`, [{ field: 'allowedGroupIds', message: `unknown group ${missing.join(', ')}` }]);
  }

  /**
   * A path change: the definition and its own records move in one store batch, so a crash at
   * any moment leaves the old path with all of them or the new path with all of them (see
   * Store.applyBatch). Records written through other endpoints on the old path stay; parameters
   * are carried over by name. The revision is set, not incremented: a replayed batch must land
   * the same.
   */
  private async saveWithRecords(current: EndpointDoc, set: Record<string, unknown>): Promise<EndpointDoc | null> {
    const from = parsePathPattern(current.path);
    const to = parsePathPattern(set.path as string);
    const move = await this.records.planMove(current._id, from, to);
    const anchor = { collection: 'endpoints', filter: { _id: current._id }, update: { $set: { ...set, revision: current.revision + 1 } } };
    if (!(await this.store.applyBatch({ writes: [anchor, ...move.writes], recounts: move.recounts }))) return null;
    this.events.emit('records.moved', { endpointId: current._id, from: current.path, to: to.path, count: move.writes.length });
    return this.endpoints.findById(current._id);
  }
}

/** The paths a stored schema's reference fields point to, at any level. */
function referencedPaths(schema: EndpointSchema): string[] {
  const found: string[] = [];
  const visit = (def: FieldDef | undefined): void => {
    if (def === undefined) return;
    if (typeof def.ref === 'string') found.push(def.ref);
    visit(def.items as FieldDef | undefined);
    if (typeof def.children === 'object' && def.children !== null) Object.values(def.children as EndpointSchema).forEach(visit);
  };
  Object.values(schema).forEach(visit);
  return found;
}

/** Every `refEndpointId` string in an input schema (either form), however deep: at most 64 levels. */
function mentionedIds(value: unknown, depth = 0, found: string[] = []): string[] {
  if (typeof value !== 'object' || value === null || depth > 64) return found;
  const ref = (value as { refEndpointId?: unknown }).refEndpointId;
  if (!Array.isArray(value) && Object.hasOwn(value, 'refEndpointId') && typeof ref === 'string') found.push(ref);
  for (const inner of Object.values(value)) mentionedIds(inner, depth + 1, found);
  return found;
}

function definitionInput(doc: EndpointDoc): EndpointInput {
  return {
    name: doc.name,
    description: doc.description,
    slug: doc.slug,
    path: doc.path,
    method: doc.method,
    accessType: doc.accessType,
    allowedGroupIds: doc.allowedGroupIds,
    groupId: doc.groupId,
    schema: doc.schema,
    networkAccess: doc.networkAccess,
    inheritGroupNetworkAccess: doc.inheritGroupNetworkAccess,
    enabled: doc.enabled,
    apiVersion: doc.apiVersion,
    retentionDays: doc.retentionDays,
    handler: doc.handler,
  };
}

function duplicate(error: unknown, path: string, method: string): unknown {
  if (!(error instanceof DuplicateKeyError)) return error;
  // A path change whose records would repeat a unique field's value among the records already there.
  if (error.collection === 'endpointdatas') {
    const field = (error.fields[0] ?? '').replace(/^data\./, '');
    return conflict(`This endpoint's records cannot move to ${path}: ${field} is unique there, and a moving record repeats the ${field} of another record (one already there or another moving record)`);
  }
  return conflict(`An endpoint for ${method} ${path} already exists`);
}
