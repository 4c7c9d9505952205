import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';

/** A fixture project directory under test/fixtures/projects/. */
export const fixture = (name: string): string => join(import.meta.dirname, '..', 'fixtures', 'projects', name);

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh directory removed after the test; `base` defaults to the OS temp dir. */
export function tempDir(base = tmpdir()): string {
  const dir = mkdtempSync(join(base, base === tmpdir() ? 'dyn-project-' : '.scratch-project-'));
  temps.push(dir);
  return dir;
}

/** A temp copy of a fixture project, for tests that change files. */
export function copyOf(name: string): string {
  const dir = tempDir();
  cpSync(fixture(name), dir, { recursive: true });
  return dir;
}

/** Writes files given as `{relative path: content}`. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/** Every file below dir (relative path → content), dotfiles included. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      // The writer's temp files (renamed into place a moment later) are not part of the project.
      if (name.startsWith('.') && name.endsWith('.tmp')) continue;
      if (statSync(join(dir, path)).isDirectory()) walk(path);
      else out[path] = readFileSync(join(dir, path), 'utf8');
    }
  };
  walk('');
  return out;
}
