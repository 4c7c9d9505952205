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
