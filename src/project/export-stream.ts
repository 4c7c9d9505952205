// The project export written piece by piece, so a store of any size is sent in constant memory:
// definitions and settings (small) are read whole, records a keyset page at a time
// (Collection.scanJson) and written as their stored JSON text, never parsed.
//
// | format | shape                                                                                     |
// |--------|-------------------------------------------------------------------------------------------|
// | jsonl  | `{"kind":"header",…}`, one line per definition (`{"kind":"endpoint","spec":{…}}`), one    |
// |        | `{"kind":"settings","settings":{…}}`, one `{"kind":"record","path":…,"record":{…}}` per   |
// |        | record, and last `{"kind":"end","records":N}`: a file without its end line is truncated   |
// | json   | `{"success":true,"data":<bundle>}`, byte for byte what the in-memory export wrote          |
//
// Records go in (resourcePath, createdAt, _id) order — the in-memory export's order — so both
// formats stay byte-identical between two exports of the same state. A scan is not a snapshot:
// records written while an export runs may or may not be in it.
import type { JsonView } from '../store/types.ts';
import type { RecordDoc } from '../model/endpoint.ts';
import { toPlain } from '../services/settings.ts';
import { exportBundle } from './export.ts';
import { KINDS, specsOf } from './kinds/index.ts';
import type { ProjectServices } from './services.ts';

export const JSONL_FORMAT = 'dyn-project';
export const JSONL_VERSION = 1;

export interface StreamOptions {
  data: boolean;
  settings: boolean;
}

/** `{_id, ...data, createdAt, updatedAt, expiresAt?}` as flattenRecord builds it, plus the path to group by. */
const RECORD_VIEW: JsonView = { spread: 'data', tail: ['createdAt', 'updatedAt', 'expiresAt'], fields: ['resourcePath'] };
const ORDER = ['resourcePath', 'createdAt'];

const recordsOf = (services: Pick<ProjectServices, 'store'>) => services.store.collection<RecordDoc>('endpointdatas');

/**
 * Pages of `[path, json]`, in export order. After each page the event loop gets a turn: a client
 * that reads as fast as the export writes would otherwise keep it in microtasks from the first
 * page to the last, holding up every other request (and timers) for the whole export.
 */
async function* recordPages(services: Pick<ProjectServices, 'store'>): AsyncGenerator<Array<[string, string]>> {
  for await (const page of recordsOf(services).scanJson({}, RECORD_VIEW, { orderBy: ORDER })) {
    yield page.map((row) => [row.fields.resourcePath as string, row.json]);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** JSON Lines, one chunk per definition kind and per page of records. */
export async function* exportJsonLines(services: ProjectServices, options: StreamOptions): AsyncGenerator<string> {
  const bundle = await exportBundle(services, { settings: options.settings });
  // The counters' sum, not a count: a count of a million records reads the whole table.
  const expected = options.data ? await services.records.countedTotal() : undefined;
  yield `${JSON.stringify({ kind: 'header', format: JSONL_FORMAT, version: JSONL_VERSION, data: options.data, settings: options.settings, ...(expected !== undefined ? { expectedRecords: expected } : {}) })}\n`;
  for (const kind of KINDS) {
    const specs = specsOf(bundle, kind);
    if (specs.length > 0) yield specs.map((spec) => `{"kind":${JSON.stringify(kind.kind)},"spec":${JSON.stringify(spec)}}\n`).join('');
  }
  if (bundle.settings) yield `${JSON.stringify({ kind: 'settings', settings: bundle.settings })}\n`;
  let records = 0;
  if (options.data) {
    for await (const page of recordPages(services)) {
      records += page.length;
      yield page.map(([path, json]) => `{"kind":"record","path":${JSON.stringify(path)},"record":${json}}\n`).join('');
    }
  }
  yield `${JSON.stringify({ kind: 'end', records })}\n`;
}

/**
 * `{"success":true,"data":{…,"data":{path:[records]},"settings":…}}` written as it is read: the
 * same text as JSON.stringify of the in-memory bundle (the definitions are that; each record is
 * its stored JSON, which is what JSON.stringify(flattenRecord(record)) gives).
 */
export async function* exportJsonDocument(services: ProjectServices, options: StreamOptions): AsyncGenerator<string> {
  const bundle = await exportBundle(services, { settings: false });
  yield `{"success":true,"data":{${KINDS.map((kind) => `${JSON.stringify(kind.bundleKey)}:${JSON.stringify(specsOf(bundle, kind))}`).join(',')}`;
  if (options.data) {
    yield ',"data":{';
    let path: string | undefined;
    for await (const page of recordPages(services)) {
      let chunk = '';
      for (const [at, json] of page) {
        if (at !== path) {
          chunk += `${path === undefined ? '' : '],'}${JSON.stringify(at)}:[`;
          path = at;
        } else {
          chunk += ',';
        }
        chunk += json;
      }
      yield chunk;
    }
    yield path === undefined ? '}' : ']}';
  }
  // Read last, as the in-memory export read it after the records.
  if (options.settings) yield `,"settings":${JSON.stringify({ ...toPlain(await services.settings.get()) })}`;
  yield '}}';
}
