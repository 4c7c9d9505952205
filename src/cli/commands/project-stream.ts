// dynctl export / import in JSON Lines (`.jsonl`, `.ndjson`, `--format jsonl`): streamed both ways,
// so a project of any size moves in constant memory. Export writes the answer to a temp file as it
// arrives and renames it into place only once its end line has come (a cut-off export never
// replaces a good file); import sends the file as it is read and shows the server's progress.
import { createReadStream, createWriteStream, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { basename, dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import type { DynClient, ProjectExportQuery, ProjectImportResult } from '../client.ts';
import type { CliContext } from '../context.ts';
import { CliError, usageError } from '../errors.ts';
import { startProgress } from '../progress.ts';
import { lastLineOf } from '../../lib/json-lines.ts';

/** What a JSON Lines export held, counted as it went by. */
export interface Tally {
  kinds: Map<string, number>;
  /** The header's `expectedRecords`, the end line's `records`. */
  expectedRecords: number | undefined;
  endRecords: number | undefined;
  bytes: number;
}

/** Only this much of a line is kept to read its kind (and the short header and end lines). */
const KEEP_BYTES = 4096;

/** Counts lines by kind from each line's start, never holding more than KEEP_BYTES of one. */
export class LineTally implements Tally {
  kinds = new Map<string, number>();
  expectedRecords: number | undefined;
  endRecords: number | undefined;
  bytes = 0;
  private current: Buffer[] = [];
  private kept = 0;

  push(chunk: Uint8Array): void {
    const buffer = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.bytes += buffer.length;
    let start = 0;
    for (;;) {
      const newline = buffer.indexOf(0x0a, start);
      this.keep(buffer.subarray(start, newline === -1 ? buffer.length : newline));
      if (newline === -1) return;
      this.line();
      start = newline + 1;
    }
  }

  finish(): void {
    if (this.kept > 0) this.line();
  }

  get records(): number {
    return this.kinds.get('record') ?? 0;
  }

  /** True when the end line came and agrees with the records counted. */
  get complete(): boolean {
    return this.endRecords !== undefined && this.endRecords === this.records;
  }

  private keep(part: Buffer): void {
    if (this.kept >= KEEP_BYTES || part.length === 0) return;
    const slice = part.subarray(0, KEEP_BYTES - this.kept);
    this.current.push(Buffer.from(slice));
    this.kept += slice.length;
  }

  private line(): void {
    const text = Buffer.concat(this.current).toString('utf8');
    this.current = [];
    this.kept = 0;
    const kind = /^\{"kind":"([A-Za-z]+)"/.exec(text)?.[1];
    if (!kind) return;
    this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
    if (kind === 'header' || kind === 'end') {
      try {
        const value = JSON.parse(text) as { expectedRecords?: unknown; records?: unknown };
        if (kind === 'header' && typeof value.expectedRecords === 'number') this.expectedRecords = value.expectedRecords;
        if (kind === 'end' && typeof value.records === 'number') this.endRecords = value.records;
      } catch {
        // not the whole line: not a header or end line dyn wrote
      }
    }
  }
}

/** Streams GET /api/project/export?format=jsonl to stdout or, through a temp file, to `path`. */
export async function exportJsonLines(context: CliContext, client: DynClient, query: ProjectExportQuery, path: string | undefined, quiet: boolean): Promise<LineTally> {
  const body = await client.exportProjectStream({ ...query, format: 'jsonl' });
  const tally = new LineTally();
  const progress = startProgress({ label: 'exporting', enabled: !quiet && !context.out.json && path !== undefined });
  const temp = path === undefined ? undefined : join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  let out: Writable;
  if (temp && path) {
    mkdirSync(dirname(path), { recursive: true });
    out = createWriteStream(temp);
  } else {
    out = process.stdout;
  }
  try {
    for await (const chunk of body) {
      tally.push(chunk);
      progress.update({ bytes: tally.bytes, records: tally.records, ...(tally.expectedRecords !== undefined ? { totalRecords: tally.expectedRecords } : {}) });
      if (!out.write(chunk)) await once(out, 'drain');
    }
    tally.finish();
  } catch (error) {
    if (temp) rmSync(temp, { force: true });
    throw new CliError(`the export was cut off (${(error as Error).message})${path ? `: ${path} was not written` : ''}`);
  } finally {
    progress.done();
  }
  if (!tally.complete) {
    if (temp) rmSync(temp, { force: true });
    throw new CliError(`the export was cut off: its end line is missing${path ? `; ${path} was not written` : ''}`);
  }
  if (temp && path) {
    out.end();
    await once(out, 'close');
    renameSync(temp, path);
  }
  return tally;
}

/** POST /api/project/import with the file streamed as it is read; the bar shows bytes sent and records staged. */
export async function importJsonLinesFile(context: CliContext, client: DynClient, file: string, mode: 'merge' | 'replace', quiet: boolean): Promise<{ result: ProjectImportResult; bytes: number }> {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (error) {
    throw usageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const totalRecords = endRecordsOf(file);
  const progress = startProgress({ label: 'importing', enabled: !quiet && !context.out.json });
  const state = { bytes: 0, totalBytes: size, ...(totalRecords !== undefined ? { totalRecords } : {}) };
  const reader = createReadStream(file, { highWaterMark: 256 * 1024 })[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await reader.next();
      if (next.done) {
        controller.close();
        return;
      }
      state.bytes += next.value.length;
      progress.update(state);
      controller.enqueue(new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.byteLength));
    },
    async cancel() {
      await reader.return?.();
    },
  });
  try {
    const result = await client.importProjectStream(body, { mode, onProgress: ({ records }) => progress.update({ ...state, records }) });
    return { result, bytes: size };
  } finally {
    progress.done();
    await reader.return?.();
  }
}

/** The `records` of the file's end line (the total for the bar). */
function endRecordsOf(file: string): number | undefined {
  const last = lastLineOf(file);
  try {
    const value = JSON.parse(last) as { kind?: unknown; records?: unknown };
    return value.kind === 'end' && typeof value.records === 'number' ? value.records : undefined;
  } catch {
    return undefined;
  }
}
