import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { Problem } from './problem.ts';

/**
 * A YAML file parsed with its positions kept, so that a problem found later in the plain value
 * (`schema.price.type`) can be pointed at its line. YAML 1.2 core schema: `yes`, `on` and
 * `2026-01-01` stay strings; keys must be strings; duplicate keys and several documents in one
 * file are errors, as are tags the schema does not know.
 */
export interface ParsedYaml {
  doc: Document.Parsed;
  lineCounter: LineCounter;
  /** The plain value, or undefined when the text is not valid YAML. */
  value: unknown;
  /** Syntax problems, each with its line; empty when `value` is usable. */
  problems: Problem[];
}

/** More aliases than this in one file is an expansion attack, not a definition. */
const MAX_ALIAS_COUNT = 100;
/** Deeper than any definition needs (field definitions nest 8 levels), shallow enough for recursive checks. */
const MAX_DEPTH = 64;

export const PARSE_OPTIONS = { prettyErrors: false, stringKeys: true, uniqueKeys: true } as const;

export function parseYaml(text: string): ParsedYaml {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { ...PARSE_OPTIONS, lineCounter });
  const problems = syntaxProblems(text, doc, lineCounter);
  if (problems.length) return { doc, lineCounter, value: undefined, problems };
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    return { doc, lineCounter, value: undefined, problems: [{ line: 1, path: '', message: `invalid YAML: ${(error as Error).message}` }] };
  }
  const shape = shapeProblem(value);
  if (shape) return { doc, lineCounter, value: undefined, problems: [{ line: 1, path: '', message: shape }] };
  return { doc, lineCounter, value, problems };
}

/**
 * One problem per line, at the line a person would fix. The parser reports a cascade for one
 * mistake (a stray `- b` gives four errors on its line): the first says it. An unclosed quote is
 * reported at the end of the input; it is pointed at the line where the quote opens.
 */
function syntaxProblems(text: string, doc: Document.Parsed, lineCounter: LineCounter): Problem[] {
  const lastLine = lineCounter.linePos(text.replace(/\s+$/, '').length).line;
  const problems: Problem[] = [];
  for (const error of [...doc.errors, ...doc.warnings]) {
    let offset = error.pos[0];
    const quote = /^Missing closing (["'])quote/.exec(error.message)?.[1];
    if (quote) offset = openingQuote(text, quote, offset);
    const line = Math.min(lineCounter.linePos(offset).line, Math.max(lastLine, 1));
    if (problems.some((problem) => problem.line === line)) continue;
    problems.push({ line, path: '', message: `invalid YAML: ${error.message}` });
  }
  return problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}

/** Where an unclosed quoted scalar starts: the last unescaped quote before `end`. */
function openingQuote(text: string, quote: string, end: number): number {
  for (let at = Math.min(end, text.length) - 1; at >= 0; at--) {
    if (text[at] === quote && (quote === "'" || text[at - 1] !== '\\')) return at;
  }
  return end;
}

const isJsonContainer = (value: object): boolean => {
  if (Array.isArray(value)) return true;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/**
 * Definitions are JSON: tags that build other values (`!!binary`, `!!set`) are refused. An alias
 * inside its own anchor makes a cycle, and every later step walks values recursively, so cycles
 * and extreme nesting are refused too. Iterative itself.
 */
function shapeProblem(value: unknown): string | undefined {
  const stack: Array<{ node: object; depth: number; ancestors: ReadonlySet<object> }> = [];
  if (typeof value === 'object' && value !== null) stack.push({ node: value, depth: 1, ancestors: new Set() });
  for (let next = stack.pop(); next; next = stack.pop()) {
    if (!isJsonContainer(next.node)) return 'invalid YAML: holds a value JSON cannot (a tag such as !!binary or !!set)';
    if (next.depth > MAX_DEPTH) return `nests deeper than ${MAX_DEPTH} levels`;
    const ancestors = new Set(next.ancestors).add(next.node);
    for (const child of Object.values(next.node)) {
      if (typeof child === 'number' && !Number.isFinite(child)) return 'holds .inf or .nan, which JSON cannot';
      if (typeof child !== 'object' || child === null) continue;
      if (ancestors.has(child)) return 'invalid YAML: an alias refers to its own anchor (a cycle)';
      stack.push({ node: child, depth: next.depth + 1, ancestors });
    }
  }
  return undefined;
}

/**
 * The line of a dotted path (`schema.price.type`, `allowedGroups.1`): the line of the deepest key
 * or item that exists, so a missing field points at its parent and an unknown one at itself.
 * Field names may contain dots the path cannot tell apart, so a segment that is not a key is
 * tried joined with the next ones.
 */
export function lineOf(parsed: ParsedYaml, path: string): number {
  const linePos = (node: Node | null | undefined, fallback: number): number =>
    node?.range ? parsed.lineCounter.linePos(node.range[0]).line : fallback;
  let node: unknown = parsed.doc.contents;
  let line = linePos(parsed.doc.contents, 1);
  const tokens = path === '' ? [] : path.split('.');
  for (let index = 0; index < tokens.length; ) {
    if (isMap(node)) {
      const map = node;
      let advanced = false;
      for (let end = index + 1; end <= tokens.length && !advanced; end++) {
        const key = tokens.slice(index, end).join('.');
        const pair = map.items.find((item) => isScalar(item.key) && String(item.key.value) === key);
        if (pair) {
          line = linePos(pair.key as Node, line);
          node = pair.value;
          index = end;
          advanced = true;
        }
      }
      if (!advanced) break;
    } else if (isSeq(node)) {
      const item = node.items[Number(tokens[index])];
      if (!/^\d+$/.test(tokens[index] ?? '') || item === undefined) break;
      line = linePos(item as Node, line);
      node = item;
      index++;
    } else {
      break;
    }
  }
  return line;
}
