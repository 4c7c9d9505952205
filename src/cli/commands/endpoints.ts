import { STATUS_CODES } from 'node:http';
import { InvalidArgumentError } from 'commander';
import type { DynClient, Endpoint } from '../client.ts';
import type { CommandModule } from '../context.ts';
import { CliError, EXIT, exitCodeForStatus, usageError } from '../errors.ts';
import { checkJson, parseData } from '../option-parsers.ts';
import { readStdin } from '../prompt.ts';
import { normalizePath } from '../../lib/paths.ts';

/**
 * `dynctl endpoints list`: the endpoint definitions (GET /api/endpoints, every page).
 * `dynctl endpoints test NAME|ID`: POST /api/endpoints/:id/test — the endpoint run through the
 * same dispatch as a live call, as you; prints the status, the body and the time it took, and
 * exits by the tested status as `dynctl call` does.
 */
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

    endpoints
      .command('test')
      .description('run an endpoint as a live call would, as you (POST /api/endpoints/:id/test; needs manage_api)')
      .argument('<endpoint>', 'the endpoint: its id, its name, or "METHOD path" (as endpoints list shows them)')
      .option('-d, --data <json>', 'request body: JSON, @file or @- for stdin', parseData)
      .option('--client-ip <ip>', 'the address the call comes from (default: yours)')
      .option('--apply-network-access', 'apply the endpoint\'s network rules (skipped otherwise)')
      .option('--param <name=value>', 'a :param of the path (repeatable)', collectParam)
      .option('--record <id>', 'a record id: tests PATH/:id')
      .addHelpText(
        'after',
        '\nExamples:\n  dynctl endpoints test "Create category" --data \'{"name": "Books"}\'\n  dynctl endpoints test "GET /api/shop/products" --client-ip 203.0.113.9 --apply-network-access',
      )
      .action(async (which: string, options: TestOptions) => {
        const body = options.data === '@-' ? stdinJson(await readStdin()) : options.data;
        const client = await context.client();
        const endpoint = await findEndpoint(client, which);
        const input = {
          ...(body !== undefined ? { body: JSON.parse(body) as unknown } : {}),
          ...(options.clientIp !== undefined ? { clientIp: options.clientIp } : {}),
          ...(options.applyNetworkAccess ? { applyNetworkAccess: true } : {}),
          ...(options.param ? { params: options.param } : {}),
          ...(options.record !== undefined ? { recordId: options.record } : {}),
        };
        const result = await client.data<TestResult>('POST', `/api/endpoints/${encodeURIComponent(endpoint._id)}/test`, { body: input });
        const out = context.out;
        out.result(result, () => {
          const colour = result.status >= 500 ? 'red' : result.status >= 400 ? 'yellow' : 'green';
          const rules = result.request.networkRulesApplied ? 'network rules applied' : 'network rules skipped';
          out.line(`${out.paint(['bold', colour], `${result.status} ${STATUS_CODES[result.status] ?? ''}`.trim())}  ${out.paint('dim', `${result.request.method} ${result.request.path}  ${result.durationMs} ms  (from ${result.request.clientIp}, ${rules})`)}`);
          if (result.body !== undefined && result.body !== null) out.line(JSON.stringify(result.body, null, 2));
        });
        const code = exitCodeForStatus(result.status);
        if (code !== EXIT.ok) throw new CliError(`${endpoint.method} ${endpoint.path} answered ${result.status}`, code, { resultPrinted: true });
      });
  },
};

interface TestOptions {
  data?: string;
  clientIp?: string;
  applyNetworkAccess?: boolean;
  param?: Record<string, string>;
  record?: string;
}

interface TestResult {
  request: { method: string; path: string; clientIp: string; networkRulesApplied: boolean };
  status: number;
  body: unknown;
  durationMs: number;
}

function stdinJson(text: string): string {
  try {
    return checkJson(text, 'stdin');
  } catch (error) {
    throw usageError((error as Error).message);
  }
}

function collectParam(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const equals = value.indexOf('=');
  if (equals < 1) throw new InvalidArgumentError(`"${value}" is not name=value`);
  return { ...previous, [value.slice(0, equals)]: value.slice(equals + 1) };
}

/** By id, else by name (case-insensitive), else by `METHOD path`; more than one match is a usage error. */
async function findEndpoint(client: DynClient, which: string): Promise<Endpoint> {
  const all = await client.listEndpoints();
  const wanted = which.trim().toLowerCase();
  const byId = all.find((endpoint) => endpoint._id === which.trim());
  if (byId) return byId;
  const byName = all.filter((endpoint) => endpoint.name.toLowerCase() === wanted);
  // `METHOD path` with the path as the server keeps it (`/api/items/` is `/api/items`).
  const words = wanted.split(/\s+/);
  const key = words.length === 2 ? `${words[0]} ${normalizePath(words[1] as string)}` : wanted;
  const matches = byName.length > 0 ? byName : all.filter((endpoint) => `${endpoint.method} ${endpoint.path}`.toLowerCase() === key);
  const [only] = matches;
  if (only && matches.length === 1) return only;
  if (matches.length > 1) throw usageError(`"${which}" names ${matches.length} endpoints (${matches.map((e) => `${e.method} ${e.path} ${e._id}`).join(', ')}): give the id`);
  throw new CliError(`no endpoint "${which}" (dynctl endpoints list shows them)`, EXIT.failure);
}

function endpointRow(endpoint: Endpoint): string[] {
  const state = [endpoint.enabled ? 'enabled' : 'disabled', endpoint.isSystem ? 'system' : '', endpoint.handler?.enabled ? 'handler' : '']
    .filter(Boolean)
    .join(',');
  const path = endpoint.apiVersion ? `${endpoint.path} (${endpoint.apiVersion})` : endpoint.path;
  return [endpoint.method, path, endpoint.name, endpoint.accessType, state, String(endpoint.callCount ?? 0), endpoint._id];
}
