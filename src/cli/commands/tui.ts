import { Option } from 'commander';
import type { CommandModule } from '../context.ts';
import { usageError } from '../errors.ts';

/**
 * `dynctl tui`: the terminal admin (src/tui). Loaded when the command runs, so that the other
 * commands do not load React and Ink at start-up; src/tui is the one layer outside cli.
 */
export const tuiCommand: CommandModule = {
  register(program, context) {
    program
      .command('tui')
      .description('full-screen terminal admin (dashboard, endpoints, logs, cron, webhooks, keys, users, project)')
      .addOption(new Option('--screen <name>', 'the screen to open on').choices(['dashboard', 'endpoints', 'logs', 'cron', 'webhooks', 'keys', 'users', 'project']))
      .addHelpText('after', '\nKeys: 1-8 screens, : go to by name, arrows or j/k move, / search, Enter open, Esc back, ? help, q quit.')
      .action(async (options: { screen?: string }) => {
        if (!process.stdin.isTTY || !process.stdout.isTTY) throw usageError('dynctl tui needs a terminal (stdin and stdout)');
        const { runTui } = await import('../../tui/main.ts');
        await runTui(context, { screen: options.screen });
      });
  },
};
