import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The JSON Schemas of the project files live in the package's `schemas/` directory, beside
 * `src/` (and beside `dist/` in a build). They are read from disk rather than imported, so one
 * file serves editors, ajv and the key order of written files.
 */
export type JsonSchema = Record<string, unknown>;

function findSchemasDir(): string {
  for (let dir = import.meta.dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'schemas', 'endpoint.schema.json'))) return join(dir, 'schemas');
    if (dirname(dir) === dir) throw new Error(`dyn: the schemas/ directory was not found above ${import.meta.dirname}`);
  }
}

export const SCHEMAS_DIR = findSchemasDir();

const cache = new Map<string, JsonSchema>();

/** A schema file of SCHEMAS_DIR, parsed once. */
export function readSchema(file: string): JsonSchema {
  let schema = cache.get(file);
  if (!schema) {
    schema = JSON.parse(readFileSync(join(SCHEMAS_DIR, file), 'utf8')) as JsonSchema;
    cache.set(file, schema);
  }
  return schema;
}
