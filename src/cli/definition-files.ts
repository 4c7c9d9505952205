// Where the definitions of a project directory loaded by dynctl are written, so that what the
// server says about a definition (`endpoints[GET /api/x].description ...`) and what dynctl finds
// itself can be shown as `project/endpoints/x.yaml:4: description ...`, as validate shows its
// problems. Imported when a project command runs (it loads src/project, see commands/project.ts).
import { readFileSync } from 'node:fs';
import type { Env } from './config-store.ts';
import { projectFileKey, type LoadedProject } from '../project/files.ts';
import { keyOf, KINDS, specsOf } from '../project/kinds/index.ts';
import { findPlaceholders, placeholderPolicyFromEnv, refusedByPolicy, resolvePlaceholders } from '../project/placeholders.ts';
import { locateProblem, type DefinitionLocator, type Problem } from '../project/problem.ts';
import { lineOf, parseYaml, type ParsedYaml } from '../project/yaml-source.ts';

/** Finds a definition's file in `loaded.files` and a path's line in it (each file parsed once, when first asked). */
export function definitionLocator(loaded: Pick<LoadedProject, 'files'>): DefinitionLocator {
  const parsed = new Map<string, ParsedYaml | undefined>();
  const parse = (file: string): ParsedYaml | undefined => {
    if (!parsed.has(file)) {
      let text: string | undefined;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        text = undefined; // changed since it was loaded: the file alone is named
      }
      const result = text === undefined ? undefined : parseYaml(text);
      parsed.set(file, result?.problems.length === 0 ? result : undefined);
    }
    return parsed.get(file);
  };
  return (bundleKey, key, path) => {
    const kind = KINDS.find((candidate) => candidate.bundleKey === bundleKey);
    const found = kind && loaded.files.get(projectFileKey(kind.kind, key));
    if (!found) return undefined;
    const yaml = parse(found.file);
    if (!yaml) return { file: found.file };
    // A method of a resource file: its own fields are under `methods.<METHOD>`, shared ones at the top.
    const own = found.resource ? `methods.${found.resource.method}${path ? `.${path}` : ''}` : undefined;
    return { file: found.file, line: lineOf(yaml, own !== undefined && holds(yaml.value, own) ? own : path) };
  };
}

function holds(value: unknown, path: string): boolean {
  let cursor = value;
  for (const part of path.split('.')) {
    if (typeof cursor !== 'object' || cursor === null || !Object.hasOwn(cursor, part)) return false;
    cursor = (cursor as Record<string, unknown>)[part];
  }
  return true;
}

/**
 * Placeholders the server's policy refuses whatever its environment holds (`${env:PATH}` where
 * only `DYN_` variables may be used), each at its file and line: apply would be a 400. The policy
 * is read from `env` as the server reads it from its own (PLACEHOLDER_ENV_PREFIX, SECRET_FILES_DIR).
 */
export function refusedPlaceholders(loaded: Pick<LoadedProject, 'bundle' | 'files'>, env: Env): Problem[] {
  const locate = definitionLocator(loaded);
  const policy = placeholderPolicyFromEnv(env);
  const problems: Problem[] = [];
  for (const kind of KINDS) {
    specsOf(loaded.bundle, kind).forEach((spec, index) => {
      for (const placeholder of findPlaceholders(spec, `${kind.bundleKey}[${keyOf(kind, spec) ?? index}]`)) {
        const refused = refusedByPolicy(placeholder, policy);
        if (refused) problems.push(locateProblem({ path: placeholder.path, message: `has ${placeholder.text}: ${refused}` }, locate));
      }
    });
  }
  return problems;
}

/**
 * Placeholders that do not resolve in `env` (an unset variable, an unreadable file), each at its
 * file and line. Only a warning for `dynctl validate`: the server that applies the project
 * resolves them from its own environment and files, which need not be this one.
 */
export function unresolvedPlaceholders(loaded: Pick<LoadedProject, 'bundle' | 'files'>, env: Env): Problem[] {
  const locate = definitionLocator(loaded);
  const problems: Problem[] = [];
  for (const kind of KINDS) {
    specsOf(loaded.bundle, kind).forEach((spec, index) => {
      const resolved = resolvePlaceholders(spec, { env, at: `${kind.bundleKey}[${keyOf(kind, spec) ?? index}]` });
      if (!resolved.ok) problems.push(...resolved.problems.map((problem) => locateProblem(problem, locate)));
    });
  }
  return problems;
}
