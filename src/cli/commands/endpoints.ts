import type { Endpoint } from '../client.ts';
import type { CommandModule } from '../context.ts';

/** `dynctl endpoints list`: the endpoint definitions (GET /api/endpoints, every page). */
export const endpointsCommands: CommandModule = {
  register(program, context) {
    const endpoints = program.command('endpoints').description('dynamic endpoint definitions');

    endpoints
      .command('list')
      .description('list endpoint definitions (needs view or manage_api)')
      .option('--search <text>', 'only definitions whose name, path, description or slug contains this')
      .action(async (options: { search?: string }) => {
        const client = await context.client();
        const list = await client.listEndpoints(options.search);
        context.out.result(list, () =>
          context.out.table(['METHOD', 'PATH', 'NAME', 'ACCESS', 'STATE', 'CALLS', 'ID'], list.map((endpoint) => endpointRow(endpoint)), 'No endpoints.'),
        );
      });
  },
};

function endpointRow(endpoint: Endpoint): string[] {
  const state = [endpoint.enabled ? 'enabled' : 'disabled', endpoint.isSystem ? 'system' : '', endpoint.handler?.enabled ? 'handler' : '']
    .filter(Boolean)
    .join(',');
  const path = endpoint.apiVersion ? `${endpoint.path} (${endpoint.apiVersion})` : endpoint.path;
  return [endpoint.method, path, endpoint.name, endpoint.accessType, state, String(endpoint.callCount ?? 0), endpoint._id];
}
