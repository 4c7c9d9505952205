// Progress of a long transfer (dynctl export / import) on stderr. On a terminal: one line
// rewritten in place at most ten times a second, a bar when the total is known,
// `importing [#########-----------]  45%  12.3 MB / 27.1 MB  450,000 / 1,000,000 records`, cleared
// at the end. Elsewhere (CI logs, a pipe): a plain line every ten seconds. Off with --quiet and --json.

export interface ProgressState {
  bytes: number;
  totalBytes?: number;
  records?: number;
  totalRecords?: number;
}

export interface Progress {
  update(state: Partial<ProgressState>): void;
  /** Clears the line (terminal); call once, success or not. */
  done(): void;
}

export interface ProgressOptions {
  label: string;
  stream?: NodeJS.WriteStream;
  enabled: boolean;
  now?: () => number;
}

const BAR_WIDTH = 24;
const TTY_INTERVAL_MS = 100;
const PLAIN_INTERVAL_MS = 10_000;

const NONE: Progress = { update() {}, done() {} };

export function startProgress(options: ProgressOptions): Progress {
  if (!options.enabled) return NONE;
  const stream = options.stream ?? process.stderr;
  const tty = stream.isTTY === true;
  const now = options.now ?? (() => performance.now());
  const state: ProgressState = { bytes: 0 };
  let last = tty ? -Infinity : now();
  let shown = false;
  return {
    update(change) {
      Object.assign(state, change);
      const at = now();
      if (at - last < (tty ? TTY_INTERVAL_MS : PLAIN_INTERVAL_MS)) return;
      last = at;
      if (tty) {
        shown = true;
        stream.write(`\r\x1b[K${renderProgress(options.label, state, Math.max(20, (stream.columns ?? 80) - 1))}`);
      } else {
        stream.write(`${plainProgress(options.label, state)}\n`);
      }
    },
    done() {
      if (shown) stream.write('\r\x1b[K');
      shown = false;
    },
  };
}

/** The terminal line, cut to `columns`. */
export function renderProgress(label: string, state: ProgressState, columns = 100): string {
  const fraction = fractionOf(state);
  const bar = fraction === undefined ? '' : ` [${'#'.repeat(Math.round(fraction * BAR_WIDTH)).padEnd(BAR_WIDTH, '-')}] ${`${Math.floor(fraction * 100)}%`.padStart(4)}`;
  const bytes = `${formatBytes(state.bytes)}${state.totalBytes ? ` / ${formatBytes(state.totalBytes)}` : ''}`;
  const records = state.records === undefined ? '' : `  ${formatCount(state.records)}${state.totalRecords !== undefined ? ` / ${formatCount(state.totalRecords)}` : ''} records`;
  const line = `${label}${bar}  ${bytes}${records}`;
  return line.length > columns ? line.slice(0, columns) : line;
}

/** `importing: 45%, 12.3 MB of 27.1 MB, 450,000 records` */
export function plainProgress(label: string, state: ProgressState): string {
  const fraction = fractionOf(state);
  const parts = [
    ...(fraction === undefined ? [] : [`${Math.floor(fraction * 100)}%`]),
    `${formatBytes(state.bytes)}${state.totalBytes ? ` of ${formatBytes(state.totalBytes)}` : ''}`,
    ...(state.records === undefined ? [] : [`${formatCount(state.records)}${state.totalRecords !== undefined ? ` of ${formatCount(state.totalRecords)}` : ''} records`]),
  ];
  return `${label}: ${parts.join(', ')}`;
}

/** Records when their total is known (what is applied), else bytes. */
function fractionOf(state: ProgressState): number | undefined {
  if (state.records !== undefined && state.totalRecords) return Math.min(1, state.records / state.totalRecords);
  if (state.totalBytes) return Math.min(1, state.bytes / state.totalBytes);
  return undefined;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  return `${(bytes / 1024 / 1024 / 1024).toFixed(2)} GB`;
}

function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}
