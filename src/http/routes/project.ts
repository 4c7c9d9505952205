import { PassThrough, Readable } from 'node:stream';
import { AppError, badRequest } from '../../lib/errors.ts';
import { readLines } from '../../lib/json-lines.ts';
import type { Logger } from '../../lib/logger.ts';
import { applyBundle, planBundle, refuseEmpty } from '../../project/apply.ts';
import type { Bundle } from '../../project/bundle.ts';
import { checkBundleShape, kindsLeftOut } from '../../project/bundle-shape.ts';
import type { KindName } from '../../project/kinds/index.ts';
import { summarize } from '../../project/diff.ts';
import { exportBundle } from '../../project/export.ts';
import { exportJsonDocument, exportJsonLines } from '../../project/export-stream.ts';
import { loadProject } from '../../project/files.ts';
import { importBundle, importJsonLines, type ImportProgress } from '../../project/import.ts';
import { errorResponse } from '../../runtime/error-response.ts';
import type { Services } from '../container.ts';
import { acceptsJsonLines, isJsonLinesRequest, JSON_LINES_TYPE, readBundleBody, toYaml } from '../bundle-body.ts';
import { allowLongRequest } from '../long-requests.ts';
import { requireActor, requireAny } from '../middleware/require-permission.ts';
import { readQuery } from '../query.ts';
import { ok } from '../respond.ts';
import type { DynContext } from '../state.ts';
import type { ApiRouter } from './router.ts';

/**
 * The project as a whole: export the store as a bundle, import one, plan and apply one (the
 * GitOps directory's format, see src/project/bundle.ts). Everything needs manage_api.
 *
 * Export and import with records stream (src/project/export-stream.ts, import.ts): an export is
 * written as it is read, an import in JSON Lines is read line by line whatever its size, and with
 * `Accept: application/x-ndjson` the import answers progress lines as it goes.
 */
export const PROJECT_IMPORT_PATH = '/api/project/import';
/** The routes that take a bundle in their body. */
export const PROJECT_BUNDLE_PATHS = ['/api/project/plan', '/api/project/apply', PROJECT_IMPORT_PATH];
/** YAML is built in memory: with records, it is refused beyond this many (JSON and JSON Lines stream). */
export const YAML_DATA_MAX_RECORDS = 50_000;
/** A streamed import whose client sends nothing for this long is cut off (nothing is imported). */
const IMPORT_IDLE_MS = 60_000;

export function projectRoutes(router: ApiRouter, services: Services): void {
  const manage = requireAny('manage_api');
  /** The bundle sent, and the kinds whose list it leaves out (left as they are, even by a prune or a replace). */
  const bundleOf = async (ctx: DynContext): Promise<{ bundle: Bundle; leftAlone: ReadonlySet<KindName> }> => {
    const input = await readBundleBody(ctx, services.config.bodyLimitBytes);
    const bundle = checkBundleShape(input);
    return { bundle, leftAlone: kindsLeftOut(input) };
  };

  router.get('/project/export', manage, async (ctx) => {
    const query = readQuery(ctx, ['data', 'settings', 'format']);
    const format = choice(query, 'format', ['yaml', 'json', 'jsonl'], 'yaml');
    const options = { data: flag(query, 'data'), settings: flag(query, 'settings') };
    if (format === 'jsonl') return streamBody(ctx, JSON_LINES_TYPE, exportJsonLines(services, options), services.logger);
    if (format === 'json' && options.data) return streamBody(ctx, 'application/json', exportJsonDocument(services, options), services.logger);
    if (format === 'yaml' && options.data) await refuseBigYaml(services);
    const bundle = await exportBundle(services, options);
    if (format === 'json') return ok(ctx, bundle);
    ctx.type = 'application/yaml';
    ctx.body = toYaml(bundle);
  });

  router.post('/project/plan', manage, async (ctx) => {
    const query = readQuery(ctx, ['prune']);
    const { bundle, leftAlone } = await bundleOf(ctx);
    const prune = flag(query, 'prune');
    // Apply refuses this prune: a plan of it would list deletions that can never happen.
    if (prune) refuseEmpty(definitionsOnly(bundle), 'plan with prune');
    const { changes } = await planBundle(services, definitionsOnly(bundle), { prune, leftAlone });
    ok(ctx, { changes, summary: summarize(changes) });
  });

  router.post('/project/apply', manage, async (ctx) => {
    const query = readQuery(ctx, ['prune', 'dryRun']);
    const { bundle, leftAlone } = await bundleOf(ctx);
    const result = await applyBundle(services, definitionsOnly(bundle), { prune: flag(query, 'prune'), leftAlone, dryRun: flag(query, 'dryRun'), actor: requireActor(ctx) });
    ok(ctx, result);
  });

  // JSON Lines of any size (read as it arrives: BODY_LIMIT bounds each line), or a bundle as JSON
  // or YAML within BODY_LIMIT. With `Accept: application/x-ndjson` the answer is progress lines
  // and then the result line, once the body has been checked up to its first records.
  router.post('/project/import', manage, async (ctx) => {
    const query = readQuery(ctx, ['mode']);
    const mode = choice(query, 'mode', ['merge', 'replace'], 'merge');
    const progress = acceptsJsonLines(ctx) ? progressAnswer() : undefined;
    const options = { mode, actor: requireActor(ctx), ...(progress ? { onProgress: progress.report } : {}) };
    const run = isJsonLinesRequest(ctx)
      ? importJsonLines(readLines(streamedBody(ctx), services.config.bodyLimitBytes), options, services)
      : bundleOf(ctx).then(({ bundle, leftAlone }) => importBundle(bundle, { ...options, leftAlone }, services));
    if (!progress) return ok(ctx, await run);
    // Failures before the first progress line are ordinary answers (400 naming the line, …).
    const early = await Promise.race([run.then((result) => ({ result })), progress.started.then(() => null)]);
    ctx.status = 200;
    ctx.type = JSON_LINES_TYPE;
    ctx.body = progress.stream;
    if (early) return progress.finish({ success: true, data: early.result });
    run.then(
      (result) => progress.finish({ success: true, data: result }),
      (error: unknown) => {
        const rendered = errorResponse(error);
        if (rendered.status >= 500) services.logger.error('project import failed', { error });
        progress.finish({ ...(rendered.body as object), status: rendered.status });
      },
    );
  });

  router.get('/project/status', manage, async (ctx) => {
    readQuery(ctx, []);
    ok(ctx, services.projectStatus.view());
  });

  // Which file of the project directory holds each definition (the admin shows it in the
  // editor): `[{kind, key, file, handlerFile?}]`, `key` as in plan changes (`GET /api/x`, a group's
  // lower-cased name), `file` relative to the project directory. Read-only; read on each call.
  router.get('/project/files', manage, async (ctx) => {
    readQuery(ctx, []);
    const { files } = loadProject(services.config.projectDir);
    ok(ctx, [...files.values()].map(({ kind, key, relPath, handlerFile }) => ({ kind, key, file: relPath, ...(handlerFile ? { handlerFile: handlerFile.relPath } : {}) })));
  });
}

/**
 * A streamed body with backpressure (Koa pipes it). The first chunk is read before the answer
 * starts, so a failure there is an ordinary error answer; a failure later is logged and the
 * connection is cut (the chunked answer never ends properly): clients see a truncated body —
 * for JSON Lines, one without its end line.
 */
async function streamBody(ctx: DynContext, type: string, chunks: AsyncGenerator<string>, logger: Logger): Promise<void> {
  const first = await chunks.next();
  async function* all(): AsyncGenerator<string> {
    try {
      if (!first.done) yield first.value;
      yield* chunks;
    } catch (error) {
      logger.error('project export failed while streaming; the connection is cut', { error });
      throw error;
    }
  }
  ctx.type = type;
  ctx.set('cache-control', 'no-store');
  ctx.body = Readable.from(all(), { objectMode: false });
}

async function refuseBigYaml(services: Services): Promise<void> {
  const records = await services.records.countedTotal();
  if (records > YAML_DATA_MAX_RECORDS) {
    throw badRequest(`YAML export with records is limited to ${YAML_DATA_MAX_RECORDS} records (the store holds ${records}): use format=jsonl (or format=json), which stream`, [
      { field: 'format', message: `yaml holds at most ${YAML_DATA_MAX_RECORDS} records` },
    ]);
  }
}

/**
 * The request body as it arrives, for the import: exempt from the server's requestTimeout, but
 * cut off after IMPORT_IDLE_MS without a byte. A dropped connection is a 400 (nothing imported).
 */
async function* streamedBody(ctx: DynContext): AsyncGenerator<Buffer> {
  allowLongRequest(ctx);
  const socket = ctx.req.socket;
  const idle = (): void => {
    ctx.req.destroy(new AppError(408, `No data for ${IMPORT_IDLE_MS / 1000} s: the import was cut off, and nothing was imported`));
  };
  socket.setTimeout(IMPORT_IDLE_MS);
  socket.on('timeout', idle);
  let ended = false;
  try {
    // Not destroyed when the import stops early (a bad line): the client must still get the answer.
    for await (const chunk of ctx.req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) yield chunk;
    ended = true;
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError(400, 'The request body was cut off before its end; nothing was imported');
  } finally {
    socket.off('timeout', idle);
    socket.setTimeout(0);
    if (!ended && !ctx.req.destroyed) {
      // The rest of the body is read and dropped, and the connection closed after the answer.
      if (!ctx.headerSent) ctx.set('connection', 'close');
      ctx.req.resume();
    }
  }
}

/** Progress lines `{"progress":{"records","bytes"}}`, started by the first report, then the result line. */
function progressAnswer(): { stream: PassThrough; started: Promise<void>; report: (progress: ImportProgress) => void; finish: (last: Record<string, unknown>) => void } {
  const stream = new PassThrough();
  let start!: () => void;
  const started = new Promise<void>((resolve) => (start = resolve));
  return {
    stream,
    started,
    report(progress) {
      start();
      // A client that reads slowly only misses progress: it is never waited for.
      if (stream.writableLength < 64 * 1024) stream.write(`${JSON.stringify({ progress })}\n`);
    },
    finish(result) {
      stream.end(`${JSON.stringify(result)}\n`);
    },
  };
}

function flag(query: Record<string, string>, name: string): boolean {
  const value = query[name];
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw badRequest(`Query parameter "${name}" must be true or false`, [{ field: name, message: 'must be true or false' }]);
}

function choice<T extends string>(query: Record<string, string>, name: string, allowed: readonly T[], fallback: T): T {
  const value = query[name];
  if (value === undefined) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw badRequest(`Query parameter "${name}" must be one of: ${allowed.join(', ')}`, [{ field: name, message: `must be one of: ${allowed.join(', ')}` }]);
}

/** Plan and apply manage definitions; records and settings go through import. */
function definitionsOnly(bundle: Bundle): Bundle {
  const extra = (['data', 'settings'] as const).filter((field) => bundle[field] !== undefined);
  if (extra.length > 0) {
    throw badRequest(`Invalid bundle: ${extra.join(' and ')} can only be imported (POST /api/project/import)`, extra.map((field) => ({ field, message: 'is only accepted by import' })));
  }
  return bundle;
}
