import type { ApiKey } from '../client.ts';
import type { CommandModule } from '../context.ts';
import { parseExpiry, parsePermissions } from '../option-parsers.ts';
import { shortDate } from '../output.ts';
import { PERMISSIONS } from '../../model/permissions.ts';

/** `dynctl keys create|list|revoke`: API keys (POST/GET/DELETE /api/api-keys), needs manage_api. */
export const keysCommands: CommandModule = {
  register(program, context) {
    const keys = program.command('keys').description('create, list and revoke API keys (needs manage_api)');

    keys
      .command('create')
      .description('create an API key and print it (the only time it is shown)')
      .requiredOption('--name <name>', 'a name to recognise the key by')
      .requiredOption('--permissions <list>', `comma-separated permissions: ${PERMISSIONS.join(', ')}`, parsePermissions)
      .option('--expires <when>', 'expiry: an ISO date or date-time, or a duration from now (12h, 30d, 2w); default: never', (value: string) => parseExpiry(value))
      .addHelpText('after', '\nThe key goes to stdout on its own line, remarks to stderr:\n  KEY=$(dynctl keys create --name ci --permissions view,manage_api --expires 30d)')
      .action(async (options: { name: string; permissions: string[]; expires?: string }) => {
        const client = await context.client();
        const created = await client.createApiKey({ name: options.name, permissions: options.permissions, ...(options.expires ? { expiresAt: options.expires } : {}) });
        context.out.result(created, () => {
          context.out.line(created.key);
          context.out.note(
            `${context.out.paint('green', '✓', true)} API key "${created.name}" created (id ${created._id}, permissions ${created.permissions.join(', ') || 'none'}, expires ${shortDate(created.expiresAt) === '-' ? 'never' : shortDate(created.expiresAt)}).`,
          );
          context.out.note('Store it now: it is not shown again. Use it as X-API-Key, or DYNCTL_API_KEY for dynctl.');
        });
      });

    keys
      .command('list')
      .description('list API keys (never the keys themselves)')
      .action(async () => {
        const client = await context.client();
        const list = await client.listApiKeys();
        context.out.result(list, () => context.out.table(['ID', 'NAME', 'PREFIX', 'PERMISSIONS', 'EXPIRES', 'LAST USED'], list.map(keyRow), 'No API keys.'));
      });

    keys
      .command('revoke')
      .description('revoke an API key; it stops working on the next request')
      .argument('<id>', 'the key id (ID column of dynctl keys list)')
      .action(async (id: string) => {
        const client = await context.client();
        const revoked = await client.revokeApiKey(id);
        context.out.result(revoked, () => context.out.success(`Revoked API key "${revoked.name}" (${revoked._id})`));
      });
  },
};

function keyRow(key: ApiKey): string[] {
  const expired = key.expiresAt !== null && Date.parse(key.expiresAt) <= Date.now();
  return [key._id, key.name, key.prefix, key.permissions.join(',') || '-', `${shortDate(key.expiresAt)}${expired ? ' (expired)' : ''}`, shortDate(key.lastUsedAt)];
}
