/* eslint-disable no-console -- a command-line check: its output is the point */
// `npm run lint` runs this: the house stays free of import cycles (static and type imports alike,
// among the given directory's .ts/.tsx files). Prints each cycle and exits 1 when there is one.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, dirname, resolve } from 'node:path';
const root = resolve(process.argv[2] ?? 'src');
const files = [];
const walk = (d) => { for (const n of readdirSync(d)) { const p = join(d, n); if (statSync(p).isDirectory()) walk(p); else if (/\.tsx?$/.test(n)) files.push(p); } };
walk(root);
const graph = new Map();
for (const f of files) {
  const src = readFileSync(f, 'utf8');
  const deps = [...src.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]/g)].map((m) => resolve(dirname(f), m[1]));
  graph.set(f, deps.filter((d) => graph.has(d) || files.includes(d)));
}
const seen = new Set(), stack = [], on = new Set(), cycles = [];
const dfs = (n) => { seen.add(n); stack.push(n); on.add(n);
  for (const d of graph.get(n) ?? []) { if (on.has(d)) cycles.push(stack.slice(stack.indexOf(d)).concat(d)); else if (!seen.has(d)) dfs(d); }
  stack.pop(); on.delete(n); };
for (const f of files) if (!seen.has(f)) dfs(f);
for (const c of cycles) console.log(c.map((p) => p.slice(root.length + 1)).join(' -> '));
if (cycles.length > 0) {
  console.error(`${cycles.length} import cycle(s) in ${root}`);
  process.exit(1);
}
