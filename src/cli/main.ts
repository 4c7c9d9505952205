import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { COMMANDS } from './commands/index.ts';
import { CliContext } from './context.ts';
import { CliError, EXIT, exitCodeOf, messageOf } from './errors.ts';

const HELP_FOOTER = `
Configuration:
  login stores the server and its session in a named context ("default" unless --context) in
  $XDG_CONFIG_HOME/dynctl/config.json (~/.config/dynctl/config.json), mode 0600; stored tokens
  are only ever sent to the server they were stored for. Environment overrides:
    DYNCTL_CONFIG   path of the config file
    DYNCTL_CONTEXT  the context to use (like --context)
    DYNCTL_SERVER   server URL (like --server)
    DYNCTL_API_KEY  an API key (sent as X-API-Key; wins over the others)
    DYNCTL_TOKEN    a bearer access token (wins over the stored session)
    NO_COLOR        no colours

Exit codes:
  0 success   1 validation failure or other refusal   2 usage   3 authentication   4 server or network

Run "dynctl <command> --help" for a command's options.`;

// src/cli/main.ts and dist/cli/main.js are both two levels below package.json (read, not
// imported: the build's rootDir is src).
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Builds the program: global options, then every command module in the registry. */
export function buildProgram(context: CliContext): Command {
  const program = new Command();
  program
    .name('dynctl')
    .description('dyn: define REST endpoints at runtime and manage them as code')
    .version(VERSION, '-V, --version', 'print the version')
    .option('--json', 'machine-readable output on stdout (errors as {"error": "..."})')
    .option('--context <name>', 'the stored context to use (default: DYNCTL_CONTEXT, else the current one; see dynctl context)')
    .option('--server <url>', 'the server to talk to (default: DYNCTL_SERVER, else the context\'s server); stored tokens are sent only to their own server')
    .helpOption('-h, --help', 'show help')
    .helpCommand('help [command]', 'show help for a command')
    .configureHelp({ showGlobalOptions: true })
    .showSuggestionAfterError(true)
    .showHelpAfterError('(add --help for usage)')
    // Set before the commands are added: subcommands inherit exitOverride and the output.
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`${context.out.paint('red', 'dynctl: error:', true)} ${text.replace(/^error: /, '')}`) })
    .addHelpText('after', HELP_FOOTER)
    .hook('preAction', (_command, action) => context.setGlobals(action.optsWithGlobals()));
  for (const module of COMMANDS) module.register(program, context);
  return program;
}

/** Runs dynctl: the exit code is set on the process (0, 1, 2, 3 or 4 — see errors.ts). */
export async function main(argv: string[]): Promise<void> {
  quietWhenOutputCloses();
  const context = new CliContext(process.env);
  const program = buildProgram(context);
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and --version end in a CommanderError with exit code 0; anything else is usage.
      // Commander has printed its message already.
      if (error.exitCode === 0) return;
      if (wantsJson(argv)) process.stdout.write(`${JSON.stringify({ error: error.message.replace(/^error: /, '') })}\n`);
      process.exitCode = EXIT.usage;
      return;
    }
    if (!context.out.json && wantsJson(argv)) context.setJson(true);
    context.out.error(messageOf(error), { resultPrinted: error instanceof CliError && error.resultPrinted });
    process.exitCode = exitCodeOf(error);
  }
}

/** --json before commander has parsed it (a usage error stops parsing first). */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/**
 * A reader that stops early (`dynctl endpoints list | head -1`) closes the pipe; the next write
 * fails with EPIPE. That is the reader's choice, not a failure: stop quietly with the exit code
 * so far, instead of an uncaught error and its stack.
 */
function quietWhenOutputCloses(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      process.exit(process.exitCode ?? 0);
    });
  }
}
