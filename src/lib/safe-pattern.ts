import { RE2JS } from 're2js';

/**
 * Patterns administrators write (a string field's `pattern`) run on RE2 — the re2js port —
 * whose matching time grows linearly with the input, so no pattern can stall the server.
 * ECMAScript's backtracking engine can take exponential time (`^(a+)+$` against a long run of
 * `a`s and one `!`), and one such request would block every other. RE2 has no lookaround and
 * no backreferences; `\uXXXX` and `\u{…}` escapes are accepted as in ECMAScript.
 */
export interface Pattern {
  test(input: string): boolean;
  toString(): string;
}

export class PatternSyntaxError extends Error {}

export function compilePattern(pattern: string): Pattern {
  try {
    const compiled = RE2JS.compile(withRe2Escapes(pattern));
    // ajv keys its cache of compiled patterns by toString(): it must name the pattern.
    return { test: (input) => compiled.test(input), toString: () => `/${pattern}/` };
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^error parsing regexp: /, '') : String(error);
    throw new PatternSyntaxError(reason);
  }
}

/** ajv's `code.regExp` option: JSON Schema `pattern` keywords compiled with compilePattern. */
export const patternEngine = Object.assign((pattern: string) => compilePattern(pattern), { code: 'compilePattern' });

/** `\uXXXX` and `\u{X…}` → RE2's `\x{…}`; every other escape is left as written. */
function withRe2Escapes(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char !== '\\') {
      out += char;
      continue;
    }
    const rest = pattern.slice(i + 1);
    const fixed = /^u([0-9a-fA-F]{4})/.exec(rest) ?? /^u\{([0-9a-fA-F]{1,6})\}/.exec(rest);
    if (fixed) {
      out += `\\x{${fixed[1] as string}}`;
      i += fixed[0].length;
    } else {
      out += char + (pattern[i + 1] ?? '');
      i++;
    }
  }
  return out;
}
