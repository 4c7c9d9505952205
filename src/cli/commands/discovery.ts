import type { DynClient, RawResponse } from '../client.ts';
import type { CommandModule } from '../context.ts';
import { ApiError, CliError, EXIT, usageError } from '../errors.ts';

/**
 * `dynctl openapi`: the server's OpenAPI document on stdout (`dynctl openapi > openapi.json`).
 * `dynctl mcp tools`: the MCP tools the current credentials may call (a `tools/list` on
 * POST /api/mcp). Both send the stored credentials, so a non-public document or group
 * endpoints show what this user or key may see.
 */
export const discoveryCommands: CommandModule = {
  register(program, context) {
    program
      .command('openapi')
      .description('print the OpenAPI document of the dynamic endpoints (GET /api/openapi.json)')
      .option('--spec <version>', 'OpenAPI version: 3.0 or 3.1', '3.0')
      .addHelpText('after', '\nExamples:\n  dynctl openapi > openapi.json\n  dynctl openapi --spec 3.1 | npx openapi-typescript /dev/stdin')
      .action(async (options: { spec: string }) => {
        if (!['3.0', '3.1'].includes(options.spec)) throw usageError(`--spec must be 3.0 or 3.1 (got "${options.spec}")`);
        const client = await context.client();
        const response = await client.request('GET', '/api/openapi.json', { query: { version: options.spec } });
        const document = expectJson(response);
        context.out.result(document, () => context.out.line(JSON.stringify(document, null, 2)));
      });

    const mcp = program.command('mcp').description('the MCP server at /api/mcp');
    mcp
      .command('tools')
      .description('list the MCP tools your credentials may call')
      .action(async () => {
        const tools = await listTools(await context.client());
        context.out.result(tools, () =>
          context.out.table(['TOOL', 'DESCRIPTION'], tools.map((tool) => [tool.name, firstLine(tool.description)]), 'No tools.'),
        );
      });
  },
};

interface McpTool {
  name: string;
  description?: string;
}

/**
 * Pages of `tools/list` followed to the end: the server answers 500 tools a page. Bounded, so
 * that a server answering cursors forever cannot keep the command running: MAX_TOOL_PAGES pages
 * is 100,000 tools at the server's page size, ten times the scale dyn is measured at.
 */
const MAX_TOOL_PAGES = 200;

async function listTools(client: Pick<DynClient, 'request'>): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  const cursors = new Set<string>();
  let cursor: string | undefined;
  for (let page = 1; page <= MAX_TOOL_PAGES; page++) {
    const body = { jsonrpc: '2.0', id: page, method: 'tools/list', ...(cursor === undefined ? {} : { params: { cursor } }) };
    const answer = expectJson(await client.request('POST', '/api/mcp', { body })) as { result?: { tools?: McpTool[]; nextCursor?: unknown }; error?: { code: number; message: string } };
    if (answer.error) throw new CliError(`MCP error ${answer.error.code}: ${answer.error.message}`, EXIT.failure);
    tools.push(...(answer.result?.tools ?? []));
    const next = answer.result?.nextCursor;
    if (typeof next !== 'string' || next === '') return tools;
    if (cursors.has(next)) throw new CliError(`MCP error: the server gave the cursor ${JSON.stringify(next).slice(0, 60)} twice (tools/list page ${page})`, EXIT.failure);
    cursors.add(next);
    cursor = next;
  }
  throw new CliError(`MCP error: tools/list had more than ${MAX_TOOL_PAGES} pages; stopped there`, EXIT.failure);
}

/** The parsed JSON of a 2xx answer; otherwise the server's error, with the exit code of its status. */
function expectJson(response: RawResponse): unknown {
  const body = response.body as { error?: unknown; details?: unknown } | undefined;
  if (response.status >= 300) {
    const message = typeof body?.error === 'string' ? body.error : response.statusText || `HTTP ${response.status}`;
    throw new ApiError(response.status, message, Array.isArray(body?.details) ? body.details : undefined);
  }
  if (body === undefined) throw new ApiError(502, `unexpected answer from the server (HTTP ${response.status}, not JSON)`);
  return body;
}

function firstLine(text: string | undefined): string {
  const line = (text ?? '').split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
