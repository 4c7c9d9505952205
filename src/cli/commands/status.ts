import { CREDENTIAL_SOURCES, type CommandModule } from '../context.ts';
import { ApiError, CliError, exitCodeOf, messageOf } from '../errors.ts';
import type { Output } from '../output.ts';

/**
 * `dynctl status`: is the server up (GET /api/health) and what does it say about the project
 * (GET /api/project/status, printed as the server gives it). A server without the project
 * routes (404) is reported as such, not as a failure.
 */
export const statusCommand: CommandModule = {
  register(program, context) {
    program
      .command('status')
      .description('show server health and the project status the server reports')
      .action(async () => {
        const client = await context.client();
        const health = await client.health();
        // A refused project status (not logged in, no permission, a 5xx) still shows the health.
        let project: unknown = null;
        let projectError: ApiError | undefined;
        try {
          project = await client.projectStatus();
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          projectError = error;
        }
        const result = {
          server: client.server,
          credentials: client.credentialKind,
          health,
          projectRoutes: projectError ? null : project !== null,
          project,
          ...(projectError ? { projectError: messageOf(projectError) } : {}),
        };
        context.out.result(result, () => {
          const out = context.out;
          out.line(`${out.paint('bold', 'Server ')}  ${client.server}  ${out.paint(health.status === 'ok' ? 'green' : 'yellow', health.status)}  ${out.paint('dim', health.timestamp)}`);
          out.line(`${out.paint('bold', 'Auth   ')}  ${CREDENTIAL_SOURCES[client.credentialKind]}`);
          if (projectError) out.line(`${out.paint('bold', 'Project')}  ${out.paint('red', messageOf(projectError))}`);
          else if (project === null) out.line(`${out.paint('bold', 'Project')}  ${out.paint('yellow', 'this server has no /api/project routes (GET /api/project/status answered 404)')}`);
          else printValue(out, 'Project', project);
        });
        if (projectError) throw new CliError(`project status: ${messageOf(projectError)}`, exitCodeOf(projectError), { resultPrinted: true });
      });
  },
};

/** Scalars on one line, objects as indented `key: value` lines, deeper values as JSON. */
function printValue(out: Output, label: string, value: unknown): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    out.line(`${out.paint('bold', label.padEnd(7))}  ${typeof value === 'string' ? value : JSON.stringify(value)}`);
    return;
  }
  out.line(out.paint('bold', label));
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const text = item !== null && typeof item === 'object' ? JSON.stringify(item, null, 2).replace(/\n/g, '\n    ') : String(item);
    out.line(`  ${out.paint('cyan', `${key}:`)} ${text}`);
  }
}
