// Import: a bundle (definitions, and optionally records and settings) into the store, `merge`
// (add and update) or `replace` (the store becomes the bundle). Two ways in, one way through:
//
// | input                        | read                                   | records                       |
// |------------------------------|----------------------------------------|-------------------------------|
// | a bundle (JSON or YAML body) | whole, within BODY_LIMIT               | checked together, then staged |
// | JSON Lines (export-stream.ts)| line by line, any size                 | checked and staged per line   |
//
// Either way definitions and settings are planned (every check of apply) before any record is
// read, records are staged batch by batch (record-stage.ts) while nothing visible changes, and
// only once the whole input has arrived — the end line of JSON Lines — are settings and
// definitions applied (withRestore puts them back if a step fails) and the stage moved into the
// records in one step (Store.moveStaged). A bad line, a dropped connection or a failed step
// deletes the stage and leaves the records as they were.
import { AppError, badRequest } from '../lib/errors.ts';
import type { Line } from '../lib/json-lines.ts';
import type { Actor } from '../model/actor.ts';
import { DEFAULT_SETTINGS } from '../services/settings.ts';
import { applyChanges, counts, exclusive, planBundle, refuseEmpty, throwProblems, withRestore, type ApplyResult, type Plan } from './apply.ts';
import type { Bundle } from './bundle.ts';
import { checkBundleShape } from './bundle-shape.ts';
import { canonicalPath, checkData, checkRecord, recordOwners, type OwnerOf } from './data.ts';
import { summarize } from './diff.ts';
import { JSONL_FORMAT, JSONL_VERSION } from './export-stream.ts';
import { bundleOf, endpointKind, KINDS, specsOf, type KindName } from './kinds/index.ts';
import { rememberPlaceholders } from './placeholder-memory.ts';
import { RecordStage } from './record-stage.ts';
import type { ProjectServices } from './services.ts';

export interface ImportResult extends ApplyResult {
  mode: 'merge' | 'replace';
  /** Records written, when the bundle has `data` (JSON Lines: record lines, or `"data": true` in the header). */
  records: number | null;
  settings: boolean;
}

/** Records staged so far and bytes of the body read: reported after each staged batch and at the end. */
export interface ImportProgress {
  records: number;
  bytes: number;
}

export interface ImportOptions {
  mode: 'merge' | 'replace';
  /** Kinds whose list the sent bundle left out: `replace` leaves their definitions as they are. */
  leftAlone?: ReadonlySet<KindName> | undefined;
  actor: Actor;
  onProgress?: (progress: ImportProgress) => void;
}

/** Definitions and settings lines together (JSON Lines) are at most this big; records are unbounded. */
export const DEFINITIONS_LIMIT_BYTES = 64 * 1024 * 1024;
const MAX_DEPTH = 32;
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * A whole bundle: `merge` applies without prune, `replace` with prune. Settings, when present,
 * are applied first (merge: the given ones; replace: the given ones over the defaults). Records,
 * when present, are checked together (every problem listed), staged, and moved in last
 * (replace: they become the only records).
 */
export async function importBundle(bundle: Bundle, options: ImportOptions, services: ProjectServices): Promise<ImportResult> {
  const prune = options.mode === 'replace';
  if (prune) refuseEmpty(bundle, 'replace');
  return exclusive(services, async () => {
    const plan = await planBundle(services, bundle, { prune, leftAlone: options.leftAlone });
    if (!bundle.data) return commit(services, bundle, plan, null, options);
    const checked = checkData(bundle.data, await ownersFor(services, plan, prune));
    throwProblems(checked.problems.map((p) => ({ path: p.field, message: p.message })));
    await RecordStage.sweepStale(services.store);
    const stage = new RecordStage(services.store, options.mode);
    try {
      for (const row of checked.rows) await stage.add(row, `data.${row.resourcePath}`);
      return await commit(services, bundle, plan, stage, options);
    } finally {
      await stage.discard();
    }
  });
}

interface ParsedLine {
  number: number;
  bytes: number;
  kind: string;
  value: Record<string, unknown>;
}

/**
 * JSON Lines (the shape export-stream.ts writes): the header, definitions and settings, then
 * records, then the end line. Definitions are planned when the first record (or the end) comes;
 * records are checked as they come, and any problem is a 400 naming its line. Without the end
 * line the body was cut off: nothing is imported.
 */
export async function importJsonLines(lines: AsyncIterable<Line>, options: ImportOptions, services: ProjectServices): Promise<ImportResult> {
  const reader = lines[Symbol.asyncIterator]();
  const next = async (): Promise<ParsedLine | null> => {
    const result = await reader.next();
    return result.done ? null : parseLine(result.value);
  };
  try {
    const header = await next();
    if (!header || header.kind !== 'header') throw lineError(header?.number ?? 1, `must be the header {"kind":"header","format":"${JSONL_FORMAT}","version":${JSONL_VERSION}}`);
    if (header.value.format !== JSONL_FORMAT || header.value.version !== JSONL_VERSION) {
      throw lineError(header.number, `is a header for ${JSON.stringify(header.value.format)} version ${JSON.stringify(header.value.version)}; this server reads "${JSONL_FORMAT}" version ${JSONL_VERSION}`);
    }
    const dataFlag = header.value.data;
    if (dataFlag !== undefined && typeof dataFlag !== 'boolean') throw lineError(header.number, 'data must be true or false');

    const definitions = bundleOf() as unknown as Record<string, unknown[]>;
    let settings: Record<string, unknown> | undefined;
    let line = await next();
    for (; line && line.kind !== 'record' && line.kind !== 'end'; line = await next()) {
      if (line.bytes - header.bytes > DEFINITIONS_LIMIT_BYTES) throw new AppError(413, `Definitions and settings are larger than the limit of ${DEFINITIONS_LIMIT_BYTES} bytes (line ${line.number})`);
      inspect(line.value, 0, `line ${line.number}`);
      if (line.kind === 'settings') {
        if (settings) throw lineError(line.number, 'repeats the settings');
        settings = objectField(line, 'settings');
      } else {
        const kind = KINDS.find((candidate) => candidate.kind === line?.kind);
        if (!kind) throw lineError(line.number, `has the unknown kind ${JSON.stringify(line.kind)} (expected header, ${KINDS.map((k) => k.kind).join(', ')}, settings, record or end)`);
        (definitions[kind.bundleKey] as unknown[]).push(objectField(line, 'spec'));
      }
    }
    const bundle = checkBundleShape({ ...definitions, ...(settings ? { settings } : {}) });
    const prune = options.mode === 'replace';
    if (prune) refuseEmpty(bundle, 'replace');

    return await exclusive(services, async () => {
      const plan = await planBundle(services, bundle, { prune });
      const stage = new RecordStage(services.store, options.mode);
      try {
        let withData = dataFlag === true;
        if (line?.kind === 'record') {
          if (dataFlag === false) throw lineError(line.number, 'is a record, but the header says "data": false');
          withData = true;
          await RecordStage.sweepStale(services.store);
          const ownerOf = await ownersFor(services, plan, prune);
          const now = new Date();
          for (; line?.kind === 'record'; line = await next()) {
            if (await stage.add(recordOf(line, ownerOf, now), `line ${line.number}`)) options.onProgress?.({ records: stage.count, bytes: line.bytes });
          }
        }
        if (!line) throw badRequest('The body ended without its end line {"kind":"end"}: it was cut off, and nothing was imported');
        if (line.kind !== 'end') throw lineError(line.number, 'is a definition or settings after the records; they must come first');
        const declared = line.value.records;
        if (declared !== undefined && declared !== stage.count) throw lineError(line.number, `says ${JSON.stringify(declared)} records, but ${stage.count} came before it`);
        const after = await reader.next();
        if (!after.done) throw lineError(after.value.number, 'follows the end line');
        options.onProgress?.({ records: stage.count, bytes: line.bytes });
        return await commit(services, bundle, plan, withData ? stage : null, options);
      } finally {
        await stage.discard();
      }
    });
  } finally {
    await reader.return?.(undefined);
  }
}

/**
 * Settings and definitions applied (put back if a step fails), then the records moved in with
 * their totals: the last step, so once it has happened nothing is undone.
 */
async function commit(services: ProjectServices, bundle: Bundle, plan: Plan, stage: RecordStage | null, options: ImportOptions): Promise<ImportResult> {
  const prune = options.mode === 'replace';
  const settings = plan.desired.settings !== undefined;
  const { changes, records } = await withRestore(services, { settings }, options.actor, async () => {
    if (plan.desired.settings) await services.settings.update(prune ? { ...DEFAULT_SETTINGS, ...plan.desired.settings } : plan.desired.settings, options.actor);
    const applied = await applyChanges(plan.changes, plan.desired, services, { dryRun: false, actor: options.actor });
    await rememberPlaceholders(services.store, bundle, plan.desired);
    // Paths that will hold expiring records count their totals from then on (see RecordsService.list):
    // marked before the move, so no stop between the two leaves them on a counter that expiry
    // makes stale (counters are not recomputed at start on the embedded store).
    if (stage) await services.records.markExpiring(stage.expiring);
    // The records and their totals, in one step (see RecordStage.commit).
    const moved = stage ? await stage.commit(options.mode, await endpointKind.ids(services)) : null;
    return { changes: applied, records: moved };
  });
  const summary = summarize(changes);
  const extra = [records !== null ? `${records} records` : '', settings ? 'settings' : ''].filter(Boolean);
  await services.audit.change(options.actor, { action: 'project_imported', message: `Project imported (${options.mode}): ${counts(summary)}${extra.length ? `; ${extra.join(', ')}` : ''}`, source: 'project' });
  return { mode: options.mode, changes, summary, applied: true, records, settings };
}

/** Owners among the endpoints that will exist: the bundle's, and without prune the store's too. */
async function ownersFor(services: ProjectServices, plan: Plan, prune: boolean): Promise<OwnerOf> {
  const desired = specsOf(plan.desired, endpointKind) as Array<{ method: string; path: string }>;
  const kept = prune ? [] : (await services.endpoints.all()).filter((endpoint) => !endpoint.isSystem);
  return recordOwners([...desired, ...kept]);
}

function recordOf(line: ParsedLine, ownerOf: OwnerOf, now: Date) {
  const path = line.value.path;
  if (typeof path !== 'string' || path.trim() === '') throw lineError(line.number, 'path must be a collection path such as /api/items');
  const resourcePath = canonicalPath(path);
  if (resourcePath === null) throw lineError(line.number, 'path is not a valid path (a malformed %-escape)');
  const ownerKey = ownerOf(resourcePath);
  if (ownerKey === null) throw lineError(line.number, `path: no endpoint in the bundle or the store serves ${resourcePath}`);
  const row = checkRecord(objectField(line, 'record'), `line ${line.number}: record`, resourcePath, now);
  if ('message' in row) throw badRequest(`Invalid bundle: ${row.field} ${row.message}`, [row]);
  return { ...row, ownerKey };
}

function parseLine(line: Line): ParsedLine {
  let value: unknown;
  try {
    value = JSON.parse(line.text);
  } catch (error) {
    throw lineError(line.number, `is not valid JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw lineError(line.number, 'must be a JSON object');
  const kind = (value as { kind?: unknown }).kind;
  if (typeof kind !== 'string') throw lineError(line.number, 'needs a "kind" (header, a definition kind, settings, record or end)');
  return { number: line.number, bytes: line.bytes, kind, value: value as Record<string, unknown> };
}

function objectField(line: ParsedLine, field: string): Record<string, unknown> {
  const value = line.value[field];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw lineError(line.number, `${field} must be an object`);
  return value as Record<string, unknown>;
}

function lineError(number: number, message: string): AppError {
  return badRequest(`Invalid bundle: line ${number} ${message}`, [{ field: `line ${number}`, message }]);
}

/** The checks every management body gets (a definition is later merged into other objects). */
function inspect(value: unknown, depth: number, at: string): void {
  if (typeof value !== 'object' || value === null) return;
  if (depth > MAX_DEPTH) throw badRequest(`Invalid bundle: ${at} is nested more than ${MAX_DEPTH} levels deep`);
  for (const [key, inner] of Object.entries(value)) {
    if (!Array.isArray(value) && FORBIDDEN_KEYS.has(key)) throw badRequest(`Invalid bundle: ${at} contains the forbidden key "${key}"`, [{ field: at, message: `contains the forbidden key "${key}"` }]);
    inspect(inner, depth + 1, at);
  }
}
