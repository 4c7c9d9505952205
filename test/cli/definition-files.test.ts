import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definitionLocator, unresolvedPlaceholders } from '../../src/cli/definition-files.ts';
import { loadProject } from '../../src/project/files.ts';
import { locateProblem, type DefinitionLocator } from '../../src/project/problem.ts';
import { ROOT } from '../helpers/server-process.ts';

/** Putting what the server says about a definition (`endpoints[GET /api/x].path`) at its file and line. */
let work: string;
let dir: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'dynctl-locate-'));
  dir = join(work, 'project');
  cpSync(join(ROOT, 'project'), dir, { recursive: true });
  writeFileSync(join(dir, 'endpoints', 'widgets.yaml'), 'name: Widgets\npath: /api/widgets\nmethod: GET\naccessType: public\ndescription: ${env:DYN_UNSET_VAR}\nschema: {}\n');
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('locating a bundle problem in the project directory', () => {
  it.each([
    { name: 'a field of a definition file', path: 'endpoints[GET /api/widgets].description', expected: { file: 'endpoints/widgets.yaml', line: 5, path: 'description' } },
    { name: 'the definition as a whole', path: 'endpoints[GET /api/widgets]', expected: { file: 'endpoints/widgets.yaml', line: 1, path: '' } },
    { name: "a method's own field in a resource file", path: 'endpoints[GET /api/shop/categories].description', expected: { file: 'endpoints/categories.yaml', line: 8, path: 'description' } },
    { name: 'a shared field in a resource file', path: 'endpoints[POST /api/shop/categories].group', expected: { file: 'endpoints/categories.yaml', line: 13, path: 'group' } },
  ])('$name', ({ path, expected }) => {
    const located = locateProblem({ path, message: 'is wrong' }, definitionLocator(loadProject(dir)));
    expect(located).toEqual({ ...expected, file: join(dir, expected.file), message: 'is wrong' });
  });

  it('leaves a problem naming no known definition as it is', () => {
    const locate = definitionLocator(loadProject(dir));
    for (const path of ['endpoints[GET /api/nowhere].description', 'endpoints.3.description', 'settings.x', '']) {
      expect(locateProblem({ path, message: 'is wrong' }, locate)).toEqual({ path, message: 'is wrong' });
    }
  });

  it('finds a key holding "]" and "." by trying each "]"', () => {
    const asked: string[] = [];
    const locate: DefinitionLocator = (bundleKey, key, path) => {
      asked.push(`${bundleKey}|${key}|${path}`);
      return key === 'a].b' ? { file: 'groups/x.yaml', line: 2 } : undefined;
    };
    expect(locateProblem({ path: 'groups[a].b].name', message: 'm' }, locate)).toEqual({ file: 'groups/x.yaml', line: 2, path: 'name', message: 'm' });
    expect(asked).toEqual(['groups|a|b].name', 'groups|a].b|name']);
  });
});

describe('placeholders that do not resolve here', () => {
  it('are found at their file and line, and not when the environment has them', () => {
    const loaded = loadProject(dir);
    expect(unresolvedPlaceholders(loaded, {})).toEqual([{ file: join(dir, 'endpoints', 'widgets.yaml'), line: 5, path: 'description', message: 'needs the environment variable DYN_UNSET_VAR, which is not set' }]);
    expect(unresolvedPlaceholders(loaded, { DYN_UNSET_VAR: '' })).toEqual([]);
  });
});
