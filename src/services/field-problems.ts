import { AppError, badRequest, type ErrorDetail } from '../lib/errors.ts';

/**
 * The problems of one input, collected so that one 400 lists every one in `details` (a form can
 * show them all at once); its message is the first problem's. Checks throw their 400 as usual and
 * are run through `collect`, which keeps the problem instead; any other error still throws.
 */
export type FieldProblems = Array<{ message: string; details: ErrorDetail[] }>;

export function collect<T>(problems: FieldProblems, check: () => T): T | undefined {
  try {
    return check();
  } catch (error) {
    keep(problems, error);
    return undefined;
  }
}

export async function collectAsync<T>(problems: FieldProblems, check: () => Promise<T>): Promise<T | undefined> {
  try {
    return await check();
  } catch (error) {
    keep(problems, error);
    return undefined;
  }
}

function keep(problems: FieldProblems, error: unknown): void {
  if (!(error instanceof AppError) || error.status !== 400) throw error;
  problems.push({ message: error.message, details: error.details ?? [] });
}

/** One 400 for every problem collected: its message is the first one's. */
export function fieldProblemsError(problems: FieldProblems, fallback = 'Invalid request body'): AppError {
  return badRequest(problems[0]?.message ?? fallback, problems.flatMap((problem) => problem.details));
}

export function throwIfProblems(problems: FieldProblems): void {
  if (problems.length > 0) throw fieldProblemsError(problems);
}

/**
 * The input as `validate` returns it. When it throws a 400, one 400 lists its problems together
 * with those `alsoCheck` finds in the input's members of the right type (a form shows them all),
 * after any `problems` found before.
 */
export async function validatedWithAll<T>(
  validate: () => T,
  input: unknown,
  alsoCheck: (given: Record<string, unknown>, problems: FieldProblems) => Promise<void> | void,
  problems: FieldProblems = [],
): Promise<T> {
  const valid = collect(problems, validate);
  if (valid !== undefined) return valid;
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) await alsoCheck(input as Record<string, unknown>, problems);
  throw fieldProblemsError(problems);
}
