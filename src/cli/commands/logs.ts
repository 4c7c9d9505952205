import { setTimeout as sleep } from 'node:timers/promises';
import type { DynClient, LogEntry } from '../client.ts';
import type { CommandModule } from '../context.ts';
import { ApiError, messageOf, NetworkError } from '../errors.ts';
import { parsePositiveInt } from '../option-parsers.ts';
import { oneLine, shortDate, type Output } from '../output.ts';

export const FOLLOW_INTERVAL_MS = 2_000;
/** Pages fetched per poll at most: more than this many new entries in 2 s are not all shown. */
const FOLLOW_MAX_PAGES = 5;
const FOLLOW_PAGE_SIZE = 100;
/** Ids remembered to tell new entries from old ones; far more than one poll can return. */
const SEEN_LIMIT = 5_000;

/**
 * `dynctl logs`: the audit log (GET /api/dashboard/logs, needs view_logs), oldest first like a
 * log file. `--follow` polls every 2 s and prints the entries it has not printed yet — by id,
 * not time, because buffered entries (api_call) can arrive with an earlier timestamp than
 * ones already shown. With --json: an array, or with --follow one JSON object per line.
 */
export const logsCommand: CommandModule = {
  register(program, context) {
    program
      .command('logs')
      .description('show the audit log, oldest first (needs view_logs)')
      .option('-f, --follow', 'keep polling (every 2 s) and print new entries as they come; Ctrl-C stops')
      .option('--action <action>', 'only entries with this action (login, api_call, api_key_created, …)')
      .option('--search <text>', 'only entries whose text fields contain this')
      .option('-n, --limit <n>', 'how many of the latest entries to show first (the server caps it at maxPageSize)', parsePositiveInt, 20)
      .action(async (options: { follow?: boolean; action?: string; search?: string; limit: number }) => {
        const client = await context.client();
        const filter = { action: options.action, search: options.search };
        // Following remembers a full page, so that older entries beyond --limit are not taken for new ones.
        const first = await client.logs({ ...filter, page: 1, limit: options.follow ? Math.max(options.limit, FOLLOW_PAGE_SIZE) : options.limit });
        const entries = first.items.slice(0, options.limit).reverse();
        if (!options.follow) {
          context.out.result(entries, () => {
            if (entries.length === 0) context.out.line(context.out.paint('dim', 'No log entries.'));
            for (const entry of entries) context.out.line(formatEntry(context.out, entry));
          });
          return;
        }
        const print = (entry: LogEntry): void => (context.out.json ? context.out.line(JSON.stringify(entry)) : context.out.line(formatEntry(context.out, entry)));
        entries.forEach(print);
        await follow(client, context.out, filter, new Set(first.items.map((entry) => entry._id)), print);
      });
  },
};

async function follow(client: DynClient, out: Output, filter: { action?: string; search?: string }, seen: Set<string>, print: (entry: LogEntry) => void): Promise<void> {
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    while (!stop.signal.aborted) {
      try {
        await sleep(FOLLOW_INTERVAL_MS, undefined, { signal: stop.signal });
      } catch {
        break;
      }
      let fresh: LogEntry[];
      try {
        fresh = await newEntries(client, filter, seen);
      } catch (error) {
        // A server restarting or a network blip is not the end of a follow; a lost login is.
        if (error instanceof NetworkError || (error instanceof ApiError && error.status >= 500)) {
          out.warn(`${messageOf(error)}; retrying`);
          continue;
        }
        throw error;
      }
      for (const entry of fresh.reverse()) {
        print(entry);
        seen.add(entry._id);
      }
      // Sets iterate in insertion order: drop the oldest ids.
      for (const id of seen) {
        if (seen.size <= SEEN_LIMIT) break;
        seen.delete(id);
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** The entries not seen yet, newest first: pages until one holds an entry already seen. */
async function newEntries(client: DynClient, filter: { action?: string; search?: string }, seen: Set<string>): Promise<LogEntry[]> {
  const fresh: LogEntry[] = [];
  for (let page = 1; page <= FOLLOW_MAX_PAGES; page++) {
    const result = await client.logs({ ...filter, page, limit: FOLLOW_PAGE_SIZE });
    const unseen = result.items.filter((entry) => !seen.has(entry._id));
    fresh.push(...unseen);
    if (unseen.length < result.items.length || result.items.length < result.limit) break;
  }
  return fresh;
}

function formatEntry(out: Output, entry: LogEntry): string {
  const request = entry.method && entry.path ? `${entry.method} ${entry.path}${entry.statusCode ? ` ${entry.statusCode}` : ''}` : '';
  const failed = entry.action === 'error' || entry.action === 'login_failed' || (entry.statusCode ?? 0) >= 400;
  return [
    out.paint('dim', shortDate(entry.createdAt)),
    out.paint(failed ? 'red' : 'cyan', entry.action.padEnd(22)),
    oneLine(entry.message),
    request ? out.paint('dim', `(${request}${entry.ip ? ` from ${entry.ip}` : ''})`) : entry.ip ? out.paint('dim', `(from ${entry.ip})`) : '',
  ]
    .filter(Boolean)
    .join('  ');
}
