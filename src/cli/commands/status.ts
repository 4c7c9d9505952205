import { CREDENTIAL_SOURCES, type CommandModule } from '../context.ts';
import { ApiError, CliError, exitCodeOf, messageOf } from '../errors.ts';
import { shortDate, type Output } from '../output.ts';
import { formatProblem, type Problem } from '../../project/problem.ts';

/**
 * `dynctl status`: is the server up (GET /api/health) and what does it say about the project
 * (GET /api/project/status). Its problems are printed as `file:line: path message`, as validate
 * and diff print theirs; --json gives the server's document as it is. A server without the
 * project routes (404) is reported as such, not as a failure.
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
          out.line(`${label(out, 'Server')}${client.server}  ${out.paint(health.status === 'ok' ? 'green' : 'yellow', health.status)}  ${out.paint('dim', health.timestamp)}`);
          out.line(`${label(out, 'Auth')}${CREDENTIAL_SOURCES[client.credentialKind]}`);
          if (projectError) out.line(`${label(out, 'Project')}${out.paint('red', messageOf(projectError))}`);
          else if (project === null) out.line(`${label(out, 'Project')}${out.paint('yellow', 'this server has no /api/project routes (GET /api/project/status answered 404)')}`);
          else printProject(out, project);
        });
        if (projectError) throw new CliError(`project status: ${messageOf(projectError)}`, exitCodeOf(projectError), { resultPrinted: true });
      });
  },
};

const LABEL_WIDTH = 'Reconcile'.length;
const label = (out: Output, text: string): string => `${out.paint('bold', text.padEnd(LABEL_WIDTH))}  `;

interface ProjectStatus {
  dir?: unknown;
  watching?: unknown;
  lastReconcile?: { at?: unknown; ok?: unknown; summary?: { create?: unknown; update?: unknown; delete?: unknown }; error?: unknown } | null;
  problems?: unknown;
  [key: string]: unknown;
}

/**
 * `GET /api/project/status` (`{dir, watching, lastReconcile, problems}`, README "Watching and
 * write-back") for a person: one line each for the directory and the last reconcile, then one
 * `file:line: path message` line per problem. Fields this dynctl does not know are shown as JSON.
 */
function printProject(out: Output, value: unknown): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    out.line(`${label(out, 'Project')}${typeof value === 'string' ? value : JSON.stringify(value)}`);
    return;
  }
  const { dir, watching, lastReconcile, problems, ...rest } = value as ProjectStatus;
  const watched = typeof watching === 'boolean' ? `  ${out.paint(watching ? 'green' : 'dim', watching ? 'watching' : 'not watching')}` : '';
  out.line(`${label(out, 'Project')}${typeof dir === 'string' ? dir : '-'}${watched}`);
  if (lastReconcile === null || lastReconcile === undefined) out.line(`${label(out, 'Reconcile')}${out.paint('dim', 'none yet')}`);
  else {
    const { at, ok, summary, error } = lastReconcile;
    const outcome = ok === true ? out.paint('green', 'ok') : out.paint('red', 'failed');
    const said = ok === true && summary ? `${String(summary.create ?? 0)} created, ${String(summary.update ?? 0)} updated, ${String(summary.delete ?? 0)} deleted` : typeof error === 'string' ? error : '';
    out.line(`${label(out, 'Reconcile')}${shortDate(at)}  ${outcome}${said ? `: ${said}` : ''}`);
  }
  const list = Array.isArray(problems) ? (problems as Problem[]) : [];
  if (list.length > 0) {
    out.line(out.paint('bold', 'Problems'));
    for (const problem of list) out.line(`  ${formatProblem(problem)}`);
  }
  for (const [key, item] of Object.entries(rest)) out.line(`${label(out, key)}${typeof item === 'string' ? item : JSON.stringify(item)}`);
}
