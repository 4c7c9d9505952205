import { checkContextName, updateConfig } from '../config-store.ts';
import type { CommandModule } from '../context.ts';
import { CliError, EXIT } from '../errors.ts';

/**
 * `dynctl context list|use|delete`: the named contexts of the config file, kubectl-style. Each
 * holds a server and the session `dynctl login --context NAME` stored for it; one is current.
 * `--context NAME` (or DYNCTL_CONTEXT) picks another for one command.
 */
export const contextCommands: CommandModule = {
  register(program, context) {
    const group = program.command('context').description('named contexts: one server and its session each (dynctl login --context NAME)');

    group
      .command('list')
      .description('list the stored contexts; * marks the current one')
      .action(async () => {
        const config = await context.readConfig();
        const current = context.contextName(config);
        const rows = Object.entries(config.contexts)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([name, session]) => ({ name, current: name === current, server: session.server ?? null, loggedIn: Boolean(session.accessToken && session.refreshToken) }));
        context.out.result(rows, () =>
          context.out.table(
            ['CURRENT', 'NAME', 'SERVER', 'SESSION'],
            rows.map((row) => [row.current ? '*' : '', row.name, row.server ?? '-', row.loggedIn ? 'logged in' : '-']),
            'No contexts: dynctl login --server URL stores one.',
          ),
        );
      });

    group
      .command('use')
      .description('make a stored context the current one')
      .argument('<name>', 'a context from dynctl context list')
      .action(async (name: string) => {
        checkContextName(name);
        const config = await context.readConfig();
        if (!config.contexts[name]) throw new CliError(`no context "${name}" (known: ${Object.keys(config.contexts).join(', ') || 'none'}); dynctl login --context ${name} --server URL creates it`, EXIT.failure);
        await updateConfig(context.configPath, (stored) => ({ ...stored, currentContext: name }));
        context.out.result({ currentContext: name, server: config.contexts[name].server ?? null }, () => context.out.success(`Current context: ${name} (${config.contexts[name]?.server ?? 'no server'})`));
      });

    group
      .command('delete')
      .description('forget a stored context and its tokens (the session is not ended on the server: dynctl --context NAME logout does that)')
      .argument('<name>', 'a context from dynctl context list')
      .action(async (name: string) => {
        const config = await context.readConfig();
        if (!config.contexts[name]) throw new CliError(`no context "${name}"`, EXIT.failure);
        await updateConfig(context.configPath, (stored) => {
          const { [name]: _gone, ...contexts } = stored.contexts;
          return stored.currentContext === name ? { contexts } : { ...stored, contexts };
        });
        context.out.result({ deleted: name }, () => context.out.success(`Deleted context ${name}`));
      });
  },
};
