import { InvalidArgumentError } from 'commander';
import type { RawResponse } from '../client.ts';
import type { CommandModule } from '../context.ts';
import { CliError, EXIT, exitCodeForStatus, usageError } from '../errors.ts';
import { CALL_METHODS, checkJson, collectHeader, parseData, parseMethod } from '../option-parsers.ts';
import type { Output } from '../output.ts';
import { readStdin } from '../prompt.ts';

/**
 * `dynctl call <METHOD> <path>`: one request to any path of the server (a dynamic endpoint, a
 * management route), with the stored credentials unless --no-auth. Prints status, time and
 * body; the exit code follows the status (2xx/3xx 0, 401/403 3, 5xx 4, other 4xx 1).
 */
export const callCommand: CommandModule = {
  register(program, context) {
    program
      .command('call')
      .description('send a test request to the server and print status, timing and body')
      .argument('<method>', `HTTP method: ${CALL_METHODS.join(', ')}`, parseMethod)
      .argument('<path>', 'path on the server, with a query string if any (/api/shop/items?limit=5)')
      .option('-d, --data <json>', 'request body: JSON, @file or @- for stdin', parseData)
      .option('-H, --header <name:value>', 'extra request header (repeatable)', collectHeader)
      .option('--no-auth', 'send no credentials (call as an anonymous client)')
      .addHelpText('after', '\nExamples:\n  dynctl call GET /api/shop/products\n  dynctl call POST /api/shop/products --data \'{"title":"Dune"}\'\n  dynctl call PUT /api/shop/products/ID --data @product.json -H "X-Trace: 1"')
      .action(async (method: string, path: string, options: { data?: string; header?: Record<string, string>; auth: boolean }) => {
        if (!path.startsWith('/')) throw usageError(`the path must start with "/" (got "${path}")`);
        const body = options.data === '@-' ? checkStdin(await readStdin()) : options.data;
        const client = await context.client({ anonymous: !options.auth });
        const response = await client.request(method, path, { ...(body !== undefined ? { body } : {}), headers: options.header ?? {} });
        printResponse(context.out, method, path, response);
        const code = exitCodeForStatus(response.status);
        if (code !== EXIT.ok) {
          throw new CliError(`${method} ${path} answered ${response.status}${describe(response)}`, code, { resultPrinted: true });
        }
      });
  },
};

function checkStdin(text: string): string {
  try {
    return checkJson(text, 'stdin');
  } catch (error) {
    throw usageError(error instanceof InvalidArgumentError ? error.message : String(error));
  }
}

function describe(response: RawResponse): string {
  const error = (response.body as { error?: unknown } | undefined)?.error;
  return typeof error === 'string' ? `: ${error}` : response.statusText ? ` ${response.statusText}` : '';
}

function printResponse(out: Output, method: string, path: string, response: RawResponse): void {
  const body = response.body !== undefined ? response.body : response.text;
  out.result({ method, path, status: response.status, statusText: response.statusText, durationMs: response.durationMs, headers: response.headers, body }, () => {
    const colour = response.status >= 500 ? 'red' : response.status >= 400 ? 'yellow' : 'green';
    out.line(`${out.paint(['bold', colour], `${response.status} ${response.statusText}`.trim())}  ${out.paint('dim', `${method} ${path}  ${response.durationMs} ms`)}`);
    if (response.body !== undefined) out.line(JSON.stringify(response.body, null, 2));
    else if (response.text) out.line(response.text);
  });
}
