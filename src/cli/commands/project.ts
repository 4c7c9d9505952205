import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { Option, type Command } from 'commander';
import type { DynClient, ProjectBundle, ProjectChange, ProjectImportResult, ProjectSummary } from '../client.ts';
import type { CliContext, CommandModule } from '../context.ts';
import { ApiError, CliError, EXIT, messageOf, usageError } from '../errors.ts';
import type { Output, Style } from '../output.ts';
import { changeTitleOf, fieldLines, groupNamesOf, type ChangeTitle } from '../plan-text.ts';
import { ask } from '../prompt.ts';
import { formatBytes, startProgress, type Progress } from '../progress.ts';
import { exportJsonLines, importJsonLinesFile, type LineTally } from './project-stream.ts';
import { formatProblem, locateProblem, sortProblems, type DefinitionLocator, type Problem } from '../../project/problem.ts';

/**
 * The project commands: the project directory (GitOps, see README) against a server.
 *
 * | command    | does                                                    | exit 1 when                         |
 * |------------|---------------------------------------------------------|-------------------------------------|
 * | `validate` | loads the directory offline, lists every problem        | any problem                         |
 * | `diff`     | POST /api/project/plan: what apply would do             | apply would change anything         |
 * | `apply`    | POST /api/project/apply (asks before deleting)          | problems, a refusal, a failed apply |
 * | `export`   | GET /api/project/export to stdout, a file or a directory| —                                   |
 * | `import`   | a bundle file or a directory to POST /api/project/import| problems, a refusal                 |
 *
 * The src/project modules are imported when a command runs: they load the handler compiler
 * (isolated-vm), which the other commands should not pay for at start-up.
 */
export const projectCommands: CommandModule = {
  register(program, context) {
    registerValidate(program, context);
    registerDiff(program, context);
    registerApply(program, context);
    registerExport(program, context);
    registerImport(program, context);
  },
};

const DIR_ARGUMENT = 'the project directory (default: $PROJECT_DIR, else ./project)';

function projectDir(context: CliContext, dir: string | undefined): string {
  return dir ?? (context.env.PROJECT_DIR?.trim() || './project');
}

// ---- validate -------------------------------------------------------------------------------

function registerValidate(program: Command, context: CliContext): void {
  program
    .command('validate')
    .description('check a project directory offline (no server): YAML, schemas, references, handler syntax')
    .argument('[dir]', DIR_ARGUMENT)
    .addHelpText(
      'after',
      '\nPrints every problem as file:line: path message and exits 1 if there is any.\nA placeholder that does not resolve here (${env:NAME} unset, ${file:/path} unreadable) is a warning:\nthe server that applies the project resolves it from its own environment.',
    )
    .action(async (dirArgument: string | undefined) => {
      const dir = projectDir(context, dirArgument);
      const { loadProject } = await import('../../project/files.ts');
      const { KINDS, specsOf } = await import('../../project/kinds/index.ts');
      const { refusedPlaceholders, unresolvedPlaceholders } = await import('../definition-files.ts');
      const loaded = loadProject(dir);
      const { bundle } = loaded;
      const refused = refusedPlaceholders(loaded, context.env);
      const problems = sortProblems([...loaded.problems, ...refused]);
      // A refused placeholder is a problem already, whether or not it resolves here.
      const where = (problem: Problem): string => `${problem.file ?? ''}:${problem.line ?? ''}:${problem.path}`;
      const warnings = unresolvedPlaceholders(loaded, context.env).filter((warning) => !refused.some((problem) => where(problem) === where(warning)));
      const perKind = KINDS.map((kind) => ({ noun: kind.kind, count: specsOf(bundle, kind).length }));
      const definitions = perKind.reduce((sum, kind) => sum + kind.count, 0);
      const out = context.out;
      // On stderr, before the result: a person sees them; stdout stays the result alone.
      for (const warning of warnings) out.warn(`${formatProblem(warning)} here (the server that applies ${dir} must have it)`);
      out.result({ valid: problems.length === 0, dir, definitions, problems, warnings }, () => {
        if (problems.length === 0) {
          out.success(`${definitions} definitions valid (${perKind.map((kind) => plural(kind.count, kind.noun)).join(', ')}) in ${dir}`);
        } else {
          for (const problem of problems) out.line(formatProblem(problem));
        }
      });
      if (problems.length > 0) throw new CliError(`${plural(problems.length, 'problem')} in ${dir}`, EXIT.failure, { resultPrinted: true });
    });
}

// ---- diff -----------------------------------------------------------------------------------

function registerDiff(program: Command, context: CliContext): void {
  program
    .command('diff')
    .description('show what apply would change on the server (with --prune: what apply --prune would do, deletions included)')
    .argument('[dir]', DIR_ARGUMENT)
    .option('--prune', 'also show and count what apply --prune would delete')
    .addHelpText(
      'after',
      '\nExits 0 when apply would change nothing, 1 when it would change something (like kubectl diff).\n  + create   ~ update (with the fields)   - delete (only with --prune)\nWithout --prune, definitions only on the server are listed on stderr as a note: apply keeps them.',
    )
    .action(async (dirArgument: string | undefined, options: { prune?: boolean }) => {
      const dir = projectDir(context, dirArgument);
      const prune = options.prune ?? false;
      const { bundle, locate } = await loadOrFail(context, dir);
      if (prune) await refuseEmptyPrune(bundle, dir);
      const client = await context.client();
      const plan = await refusals(context, () => client.planProject(bundle, { prune }), locate);
      // Without --prune the same plan as apply; what only the server has is a remark, not a change.
      const onlyOnServer = prune ? [] : await serverOnly(client, bundle);
      const title = await changeTitles(client, bundle, [...plan.changes, ...onlyOnServer]);
      const out = context.out;
      out.result(prune ? plan : { ...plan, onlyOnServer }, () => {
        if (plan.changes.length === 0) out.line(`No differences: apply${prune ? ' --prune' : ''} would change nothing on the server from ${dir}.`);
        else {
          printChanges(out, plan.changes, title);
          out.line();
          out.line(`Plan: ${counts(plan.summary, 'to create', 'to update', 'to delete')}.`);
        }
        if (onlyOnServer.length > 0) {
          const n = onlyOnServer.length;
          out.note(`Note: ${plural(n, 'definition')} on the server ${n === 1 ? 'is' : 'are'} not in ${dir}; apply keeps ${n === 1 ? 'it' : 'them'}, apply --prune would delete ${n === 1 ? 'it' : 'them'}:`);
          for (const change of onlyOnServer) out.note(`  ${title(change)}`);
        }
      });
      // Differences found is not an error: no message, only the exit code.
      if (plan.changes.length > 0) process.exitCode = EXIT.failure;
    });
}

/** apply --prune of a directory without definitions would delete every definition: the server refuses it, and so does dynctl, before asking anything. */
async function refuseEmptyPrune(bundle: ProjectBundle, dir: string): Promise<void> {
  if ((await import('../../project/bundle-shape.ts')).isEmptyBundle(bundle)) {
    throw new CliError(`${dir} holds no definitions: apply --prune would delete every definition on the server; refusing`, EXIT.failure);
  }
}

/** The deletions apply --prune would make; none when the server refuses that plan (a remark only). */
async function serverOnly(client: DynClient, bundle: ProjectBundle): Promise<ProjectChange[]> {
  try {
    return (await client.planProject(bundle, { prune: true })).changes.filter((change) => change.action === 'delete');
  } catch (error) {
    if (error instanceof ApiError && error.status === 400) return [];
    throw error;
  }
}

// ---- apply ----------------------------------------------------------------------------------

interface ApplyOptions {
  dryRun?: boolean;
  prune?: boolean;
  yes?: boolean;
}

function registerApply(program: Command, context: CliContext): void {
  program
    .command('apply')
    .description('make the server match a project directory (creates and updates; deletes with --prune)')
    .argument('[dir]', DIR_ARGUMENT)
    .option('--dry-run', 'show what would change; change nothing')
    .option('--prune', 'also delete definitions that are not in the directory')
    .option('-y, --yes', 'do not ask before deleting (needed for --prune without a terminal)')
    .addHelpText('after', '\nExamples:\n  dynctl apply ./project\n  dynctl apply --prune --yes   # in CI: the directory is the whole truth')
    .action(async (dirArgument: string | undefined, options: ApplyOptions) => {
      const dir = projectDir(context, dirArgument);
      const prune = options.prune ?? false;
      const dryRun = options.dryRun ?? false;
      const { bundle, locate } = await loadOrFail(context, dir);
      if (prune) await refuseEmptyPrune(bundle, dir);
      const client = await context.client();
      if (prune && !dryRun && !options.yes) await confirmDeletions(context, client, bundle, dir);

      const result = await refusals(context, () => client.applyProject(bundle, { prune, dryRun }), locate);
      const title = await changeTitles(client, bundle, result.changes);
      const out = context.out;
      out.result(result, () => {
        if (result.changes.length === 0) {
          out.line(`No changes: the server already matches ${dir}.`);
          return;
        }
        printChanges(out, result.changes, title);
        out.line();
        if (dryRun) out.line(`Dry run: ${counts(result.summary, 'to create', 'to update', 'to delete')}; nothing was changed.`);
        else out.success(`Applied: ${counts(result.summary, 'created', 'updated', 'deleted')}.`);
      });
      if (!prune && !out.json) await noteExtra(context, client, bundle, dir);
    });
}

/**
 * Before an apply with prune deletes anything: ask on a terminal, refuse (exit 2) without one.
 * The plan is taken now; the apply plans again, so a definition created on the server in
 * between would be deleted without having been shown.
 */
async function confirmDeletions(context: CliContext, client: DynClient, bundle: ProjectBundle, dir: string): Promise<void> {
  const plan = await refusals(context, () => client.planProject(bundle, { prune: true }));
  const deletes = plan.changes.filter((change) => change.action === 'delete');
  if (deletes.length === 0) return;
  const what = `${plural(deletes.length, 'definition')} not in ${dir}`;
  const changeTitle = await changeTitles(client, bundle, deletes);
  if (!process.stdin.isTTY || !process.stderr.isTTY) {
    throw usageError(`apply --prune would delete ${what} (${deletes.map(changeTitle).join(', ')}); confirm with --yes (there is no terminal to ask on)`);
  }
  process.stderr.write(`apply --prune deletes ${what}:\n`);
  for (const change of deletes) process.stderr.write(`  ${context.out.paint('red', `- ${changeTitle(change)}`, true)}\n`);
  const answer = await ask(`delete ${plural(deletes.length, 'definition')}? [y/N] `);
  if (!/^y(es)?$/i.test(answer.trim())) throw new CliError('cancelled: nothing was changed', EXIT.failure);
}

/** After an apply without prune: say what is on the server but not in the directory. */
async function noteExtra(context: CliContext, client: DynClient, bundle: ProjectBundle, dir: string): Promise<void> {
  try {
    const plan = await client.planProject(bundle, { prune: true });
    const extra = plan.summary.delete;
    if (extra > 0) context.out.note(`${plural(extra, 'definition')} on the server ${extra === 1 ? 'is' : 'are'} not in ${dir} and ${extra === 1 ? 'was' : 'were'} kept (apply --prune deletes ${extra === 1 ? 'it' : 'them'}; dynctl diff lists ${extra === 1 ? 'it' : 'them'}).`);
  } catch {
    // Only a remark: a refused plan (a group only the store has) is no reason to fail the apply.
  }
}

// ---- export ---------------------------------------------------------------------------------

type FileFormat = 'yaml' | 'json' | 'jsonl';

interface ExportOptions {
  out?: string;
  data?: boolean;
  settings?: boolean;
  format?: FileFormat;
  quiet?: boolean;
  prune?: boolean;
}

type Target = { kind: 'stdout'; format: FileFormat } | { kind: 'file'; path: string; format: FileFormat } | { kind: 'dir'; path: string };

/** `.jsonl` and `.ndjson` files are JSON Lines, streamed both ways (any size). */
function formatOfFile(path: string): FileFormat | undefined {
  const ext = extname(path).toLowerCase();
  if (ext === '.json') return 'json';
  if (ext === '.yaml' || ext === '.yml') return 'yaml';
  if (ext === '.jsonl' || ext === '.ndjson') return 'jsonl';
  return undefined;
}

function registerExport(program: Command, context: CliContext): void {
  program
    .command('export')
    .description('export the server\'s definitions (and optionally records and settings): YAML on stdout, a file or a project directory')
    .option('-o, --out <path>', 'write to a file (.yaml, .yml, .json, or .jsonl/.ndjson: JSON Lines, streamed) or a project directory (a directory, or a path without extension)')
    .option('--data', 'include the records of every collection (not for a directory)')
    .option('--settings', 'include the system settings (not for a directory)')
    .addOption(new Option('--format <format>', 'yaml, json or jsonl (stdout and files; default: yaml, or the file\'s extension)').choices(['yaml', 'json', 'jsonl']))
    .option('-q, --quiet', 'no progress on stderr')
    .option('--prune', 'into a project directory: remove the files of definitions the server does not have (without it, such files stop the export)')
    .addHelpText(
      'after',
      '\nExamples:\n  dynctl export > project.yaml\n  dynctl export --out ./project          # one file per definition\n  dynctl export --out ./project --prune  # and remove definitions the server does not have\n  dynctl export --data --settings --out backup.jsonl   # any size: streamed to the file\n\nWith --data, prefer .jsonl: .yaml and .json files are built in memory (and the server refuses YAML with more than 50,000 records).',
    )
    .action(async (options: ExportOptions) => {
      const target = exportTarget(options, context.out.json);
      const client = await context.client();
      const started = performance.now();
      const query = { data: options.data ?? false, settings: options.settings ?? false };
      const out = context.out;
      if (target.kind !== 'dir' && target.format === 'jsonl') {
        const path = target.kind === 'file' ? target.path : undefined;
        const tally = await exportJsonLines(context, client, query, path, options.quiet ?? false);
        const ms = Math.round(performance.now() - started);
        const counts = countsOfTally(tally, query);
        out.note(exportedLine(counts, ms));
        if (path) out.result({ out: path, type: 'file', format: 'jsonl', bytes: tally.bytes, ...counts, durationMs: ms }, () => out.success(`wrote ${path} (${formatBytes(tally.bytes)}, jsonl)`));
        return;
      }
      const progress = options.data && !options.quiet ? progressOf(context, 'receiving') : undefined;
      const transfer = progress ? { onDownloadProgress: (bytes: number, total: number | undefined) => progress.update({ bytes, ...(total ? { totalBytes: total } : {}) }) } : {};

      if (target.kind === 'dir') {
        const bundle = await withProgress(progress, () => client.exportProject(query, transfer));
        const ms = Math.round(performance.now() - started);
        context.out.note(exportedLine(countsOf(bundle), ms));
        const { definitionsNotIn, writeProject } = await import('../../project/write.ts');
        const { bundleOf, specsOf } = await import('../../project/kinds/index.ts');
        // Fields at their defaults left out, as the server's own write-back writes them: an
        // export into a directory in step changes no file.
        const compact = bundleOf((kind) => specsOf(bundle, kind).map((spec) => kind.compact(spec)));
        // Definitions only the directory holds may be work not yet applied: removed when asked to.
        const others = options.prune ? [] : definitionsNotIn(target.path, compact);
        if (others.length > 0) {
          const shown = others.slice(0, 10).join(', ') + (others.length > 10 ? `, and ${others.length - 10} more` : '');
          throw new CliError(`${target.path} holds ${others.length} definition${others.length === 1 ? '' : 's'} the server does not have: ${shown}. Nothing was written: apply them first, export into an empty directory, or pass --prune to remove them`);
        }
        const written = writeProject(target.path, compact, { handlers: 'file' });
        out.result({ out: target.path, type: 'directory', ...countsOf(bundle), durationMs: ms, ...written }, () => {
          for (const file of written.written) out.line(`${out.paint('green', 'wrote  ')} ${join(target.path, file)}`);
          for (const file of written.removed) out.line(`${out.paint('red', 'removed')} ${join(target.path, file)}`);
          out.success(`${target.path}: ${written.written.length} written, ${written.unchanged.length} unchanged, ${written.removed.length} removed`);
        });
        return;
      }

      let text: string;
      let bundle: ProjectBundle;
      if (target.format === 'yaml') {
        text = await withProgress(progress, () => client.exportProjectText({ ...query, format: 'yaml' }, transfer));
        const { parse } = await import('yaml');
        bundle = (parse(text) ?? {}) as ProjectBundle;
      } else {
        bundle = await withProgress(progress, () => client.exportProject(query, transfer));
        text = `${JSON.stringify(bundle, null, 2)}\n`;
      }
      const ms = Math.round(performance.now() - started);
      context.out.note(exportedLine(countsOf(bundle), ms));
      if (target.kind === 'stdout') {
        if (out.json) out.printJson(bundle);
        else process.stdout.write(text);
        return;
      }
      writeFileAtomic(target.path, text);
      const bytes = Buffer.byteLength(text);
      out.result({ out: target.path, type: 'file', format: target.format, bytes, ...countsOf(bundle), durationMs: ms }, () => out.success(`wrote ${target.path} (${formatBytes(bytes)}, ${target.format})`));
    });
}

function exportTarget(options: ExportOptions, json: boolean): Target {
  if (options.out === undefined) return { kind: 'stdout', format: json ? 'json' : (options.format ?? 'yaml') };
  const path = options.out;
  if (!path) throw usageError('--out is empty');
  const ext = extname(path).toLowerCase();
  const existing = kindOfPath(path);
  const isDir = existing === 'dir' || (existing === undefined && (ext === '' || path.endsWith('/')));
  if (isDir) {
    const extra = [options.data ? '--data' : '', options.settings ? '--settings' : '', options.format ? '--format' : ''].filter(Boolean);
    if (extra.length > 0) throw usageError(`${extra.join(' and ')} cannot be written to a project directory (${path}); use --out with a .yaml or .json file`);
    return { kind: 'dir', path };
  }
  if (options.prune) throw usageError('--prune is for a project directory (--out dir): a file is written whole');
  const byExtension = formatOfFile(path);
  if (byExtension && options.format && options.format !== byExtension) throw usageError(`--format ${options.format} does not match the file name ${basename(path)}`);
  return { kind: 'file', path, format: byExtension ?? options.format ?? 'yaml' };
}

/** What is at `path` now: a directory, something else, or nothing. */
function kindOfPath(path: string): 'dir' | 'other' | undefined {
  try {
    return statSync(path).isDirectory() ? 'dir' : 'other';
  } catch {
    return undefined;
  }
}

/** A temp file beside the target, then a rename: a reader never sees half an export. */
function writeFileAtomic(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    writeFileSync(temp, text);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new CliError(`cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

function countsOf(bundle: ProjectBundle): { groups: number; endpoints: number; cronJobs: number; webhooks: number; records: number | null; settings: boolean } {
  const records = bundle.data ? Object.values(bundle.data).reduce((sum, rows) => sum + (Array.isArray(rows) ? rows.length : 0), 0) : null;
  return { groups: bundle.groups?.length ?? 0, endpoints: bundle.endpoints?.length ?? 0, cronJobs: bundle.cronJobs?.length ?? 0, webhooks: bundle.webhooks?.length ?? 0, records, settings: bundle.settings !== undefined };
}

type Counts = ReturnType<typeof countsOf>;

/** What a JSON Lines export held, from its lines (records: null without --data, as for a bundle). */
function countsOfTally(tally: LineTally, query: { data: boolean; settings: boolean }): Counts {
  const n = (kind: string): number => tally.kinds.get(kind) ?? 0;
  return { groups: n('group'), endpoints: n('endpoint'), cronJobs: n('cronJob'), webhooks: n('webhook'), records: query.data ? tally.records : null, settings: n('settings') > 0 };
}

function exportedLine(c: Counts, ms: number): string {
  const parts = [plural(c.endpoints, 'endpoint'), plural(c.groups, 'group'), ...(c.cronJobs > 0 ? [plural(c.cronJobs, 'cron job')] : []), ...(c.webhooks > 0 ? [plural(c.webhooks, 'webhook')] : []), ...(c.records !== null ? [plural(c.records, 'record')] : []), ...(c.settings ? ['settings'] : [])];
  return `exported ${parts.join(', ')} in ${ms} ms`;
}

// ---- import ---------------------------------------------------------------------------------

/** Uploads from this size on show their progress (on a terminal). */
const BIG_UPLOAD_BYTES = 256 * 1024;

function registerImport(program: Command, context: CliContext): void {
  program
    .command('import')
    .description('import a bundle file (.yaml, .yml, .json) or a project directory, records and settings included')
    .argument('<file>', 'a bundle file written by dynctl export (.yaml, .yml, .json, or .jsonl/.ndjson: streamed), or a project directory')
    .addOption(new Option('--mode <mode>', 'merge: add and update; replace: also delete what the bundle lacks').choices(['merge', 'replace']).default('merge'))
    .option('-q, --quiet', 'no progress on stderr')
    .addHelpText('after', '\nExamples:\n  dynctl import backup.yaml\n  dynctl import backup.jsonl --mode replace   # the server becomes the bundle (records too); any size')
    .action(async (file: string, options: { mode: 'merge' | 'replace'; quiet?: boolean }) => {
      const started = performance.now();
      let result: ProjectImportResult;
      let size: number;
      let bundle: ProjectBundle | undefined;
      const client = await context.client();
      if (formatOfFile(file) === 'jsonl' && !isDirectory(file)) {
        ({ result, bytes: size } = await refusals(context, () => importJsonLinesFile(context, client, file, options.mode, options.quiet ?? false)));
      } else {
        const { body, locate } = await importBody(context, file);
        if (!('text' in body)) bundle = body;
        size = 'text' in body ? Buffer.byteLength(body.text) : 0;
        const progress = size >= BIG_UPLOAD_BYTES && !options.quiet ? progressOf(context, 'sending') : undefined;
        const send = (): Promise<ProjectImportResult> =>
          withProgress(progress, () => client.importProject(body, { mode: options.mode, ...(progress ? { onUploadProgress: (sent: number, total: number) => progress.update({ bytes: sent, totalBytes: total }) } : {}) }));
        result = await refusals(context, () => ('text' in body && body.type === 'yaml' ? yamlRefusals(context, file, body.text, send) : send()), locate);
      }
      const ms = Math.round(performance.now() - started);
      const title = await changeTitles(client, bundle, result.changes);
      const out = context.out;
      if (size > 0) out.note(`sent ${formatBytes(size)} in ${ms} ms`);
      out.result(result, () => {
        printChanges(out, result.changes, title);
        if (result.changes.length > 0) out.line();
        const extra = [result.records !== null ? plural(result.records, 'record') : '', result.settings ? 'settings' : ''].filter(Boolean);
        const definitions = result.changes.length === 0 ? 'no changes to definitions' : counts(result.summary, 'created', 'updated', 'deleted');
        out.success(`Imported (${result.mode}): ${definitions}${extra.length ? `; ${extra.join(', ')} written` : ''}.`);
      });
    });
}

type ImportBody = { body: ProjectBundle | { text: string; type: 'json' | 'yaml' }; locate?: DefinitionLocator };

/** A directory is loaded (its problems stop the import); a file is sent as it is. */
async function importBody(context: CliContext, file: string): Promise<ImportBody> {
  let directory: boolean;
  try {
    directory = statSync(file).isDirectory();
  } catch (error) {
    throw usageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (directory) return loadOrFail(context, file).then(({ bundle, locate }) => ({ body: bundle, locate }));
  const ext = extname(file).toLowerCase();
  if (ext !== '.json' && ext !== '.yaml' && ext !== '.yml') throw usageError(`${file}: expected a .yaml, .yml, .json or .jsonl bundle file, or a project directory`);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw usageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (ext !== '.json') return { body: { text, type: 'yaml' } };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CliError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  // Also accepted: the {success, data} answer of GET /api/project/export?format=json, saved as is.
  if (isObject(parsed) && parsed.success === true && isObject(parsed.data)) return { body: { text: JSON.stringify(parsed.data), type: 'json' } };
  return { body: { text, type: 'json' } };
}

// ---- shared ---------------------------------------------------------------------------------

/**
 * The directory's bundle, and where each of its definitions is written (for the server's
 * refusals); its problems (listed on stderr) stop the command with exit 1.
 */
async function loadOrFail(context: CliContext, dir: string): Promise<{ bundle: ProjectBundle; locate: DefinitionLocator }> {
  const { loadProject } = await import('../../project/files.ts');
  const { definitionLocator } = await import('../definition-files.ts');
  const loaded = loadProject(dir);
  const { bundle, problems } = loaded;
  if (problems.length === 0) return { bundle, locate: definitionLocator(loaded) };
  const message = `${plural(problems.length, 'problem')} in ${dir}; nothing was sent to the server (dynctl validate ${dir} lists them)`;
  if (context.out.json) context.out.printJson({ error: message, problems: problems satisfies Problem[] });
  else for (const problem of problems) context.out.note(formatProblem(problem));
  throw new CliError(message, EXIT.failure, { resultPrinted: true });
}

/**
 * A refusal with details (the server's 400 listing every problem of a bundle): the details are
 * listed on stderr (with --json: `{error, details}` on stdout), then the one-line error, exit 1.
 * `locate`: where the definitions sent are written; a detail naming one of them is listed as
 * `project/endpoints/x.yaml:4: description ...` (with --json: `problems` beside `details`).
 */
async function refusals<T>(context: CliContext, work: () => Promise<T>, locate?: DefinitionLocator): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 400 || !error.details?.length) throw error;
    const problems = error.details.map((detail): Problem => ({ path: detail.field, message: detail.message }));
    const located = locate ? problems.map((problem) => locateProblem(problem, locate)) : problems;
    if (context.out.json) {
      context.out.printJson({ error: messageOf(error), details: error.details, ...(locate ? { problems: located } : {}) });
      throw new CliError(messageOf(error), EXIT.failure, { resultPrinted: true });
    }
    // One detail is already in the error line; several, or one with its file to add, are listed first.
    const [only] = error.details;
    if (error.details.length > 1 || located.some((problem) => problem.file !== undefined) || (only && !error.message.includes(only.message))) {
      for (const problem of located) context.out.note(`  ${formatProblem(problem)}`);
    }
    throw error;
  }
}

/**
 * A YAML bundle file the server refuses without details is most likely not valid YAML: the
 * server's message ends where its excerpt of the text would start, so the file is parsed here
 * to list each syntax problem as `file:line: invalid YAML: ...` before the server's line.
 * Parsed only after a refusal: a big file is not parsed twice on the way to a good import.
 */
async function yamlRefusals<T>(context: CliContext, file: string, text: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 400 || error.details?.length) throw error;
    const { parseYaml } = await import('../../project/yaml-source.ts');
    const problems = parseYaml(text).problems.map((problem) => ({ ...problem, file }));
    if (problems.length === 0) throw error;
    if (context.out.json) context.out.printJson({ error: messageOf(error), problems });
    else for (const problem of problems) context.out.note(formatProblem(problem));
    throw new CliError(messageOf(error), EXIT.failure, { resultPrinted: true });
  }
}

const SIGNS: Record<ProjectChange['action'], { sign: string; style: Style }> = {
  create: { sign: '+', style: 'green' },
  update: { sign: '~', style: 'yellow' },
  delete: { sign: '-', style: 'red' },
};


/**
 * `endpoint GET /api/x`, `group Shop`: a group's key is its name lower-cased (names match
 * case-insensitively), so the name is shown as written — in the bundle, else on the server
 * (asked only when a group change is not in the bundle, e.g. a deletion).
 */
async function changeTitles(client: DynClient, bundle: ProjectBundle | undefined, changes: readonly ProjectChange[]): Promise<ChangeTitle> {
  const names = groupNamesOf(bundle);
  if (changes.some((change) => change.kind === 'group' && !names.has(change.key))) {
    try {
      for (const group of await client.listEndpointGroups()) if (!names.has(group.name.toLowerCase())) names.set(group.name.toLowerCase(), group.name);
    } catch {
      // Only cosmetic: the key is shown instead.
    }
  }
  return changeTitleOf(bundle, names);
}

/** `+ endpoint GET /api/x`, `~ …` with one `    field: from → to` line per changed value, `- …`. */
function printChanges(out: Output, changes: readonly ProjectChange[], changeTitle: ChangeTitle): void {
  for (const change of changes) {
    const { sign, style } = SIGNS[change.action];
    out.line(out.paint(style, `${sign} ${changeTitle(change)}`));
    const { lines, more } = fieldLines(change);
    for (const line of lines) out.line(`    ${out.paint('cyan', `${line.path}:`)} ${out.paint('red', line.from)} → ${out.paint('green', line.to)}`);
    if (more > 0) out.line(out.paint('dim', `    … ${more} more`));
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function counts(summary: ProjectSummary, create: string, update: string, remove: string): string {
  return `${summary.create} ${create}, ${summary.update} ${update}, ${summary.delete} ${remove}`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** Bytes of a JSON or YAML transfer on stderr (see progress.ts). */
function progressOf(context: CliContext, verb: string): Progress {
  return startProgress({ label: verb, enabled: !context.out.json });
}

function isDirectory(path: string): boolean {
  return kindOfPath(path) === 'dir';
}

async function withProgress<T>(progress: Progress | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } finally {
    progress?.done();
  }
}
