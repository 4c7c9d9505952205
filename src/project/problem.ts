/**
 * One thing wrong with a project, as precise as the source allows: the file and line when it came
 * from the project directory, always the path inside the definition (`schema.price.type`).
 * Every check reports problems instead of throwing, so `dynctl validate` lists them all at once.
 * There is no severity: a project is applied as a whole, so every problem blocks it.
 */
export interface Problem {
  /** The file as reached from the project directory given (`project/endpoints/orders.yaml`). */
  file?: string;
  /** 1-based line in `file`. */
  line?: number;
  /** Dotted path inside the definition (`schema.price.type`, `allowedGroups.1`); '' for the whole file. */
  path: string;
  message: string;
}

/** `project/endpoints/orders.yaml:12: schema.price.type must be one of: ...` */
export function formatProblem(problem: Problem): string {
  const where = problem.file === undefined ? '' : `${problem.file}${problem.line === undefined ? '' : `:${problem.line}`}: `;
  return `${where}${problem.path ? `${problem.path} ` : ''}${problem.message}`;
}

/** By file, then line; problems without a file last. Stable, so equal places keep their order. */
export function sortProblems(problems: readonly Problem[]): Problem[] {
  const text = (value: string | undefined): string => value ?? '\uffff';
  return [...problems].sort((a, b) => {
    const fa = text(a.file);
    const fb = text(b.file);
    if (fa !== fb) return fa < fb ? -1 : 1;
    return (a.line ?? 0) - (b.line ?? 0);
  });
}

export const joinPath = (base: string, key: string | number): string => (base === '' ? String(key) : `${base}.${key}`);

/** Where a definition is written (its file) and the line of a path inside it, when known. */
export type DefinitionLocator = (bundleKey: string, key: string, path: string) => { file: string; line?: number } | undefined;

/**
 * A bundle problem names its definition by key (`endpoints[GET /api/x].description`, as apply
 * and the project API report them); when `locate` knows the file holding that definition, the
 * problem is put as a file's problem is: `project/endpoints/x.yaml:4: description ...`. Keys may
 * hold `]` and `.`, so each `]` that ends a candidate key is tried. Anything else is returned as it is.
 */
export function locateProblem(problem: Problem, locate: DefinitionLocator): Problem {
  if (problem.file !== undefined) return problem;
  const open = /^([A-Za-z]+)\[/.exec(problem.path);
  if (!open) return problem;
  for (let end = problem.path.indexOf(']', open[0].length); end !== -1; end = problem.path.indexOf(']', end + 1)) {
    const after = problem.path[end + 1];
    if (after !== undefined && after !== '.') continue;
    const inner = problem.path.slice(end + 2);
    const found = locate(open[1] as string, problem.path.slice(open[0].length, end), inner);
    if (found) return { file: found.file, ...(found.line !== undefined ? { line: found.line } : {}), path: inner, message: problem.message };
  }
  return problem;
}
