// Builds the web admin (admin/src) into dist/admin: esbuild bundles the Preact app with code
// splitting (each page is its own chunk, so CodeMirror and elkjs load only on the pages that use
// them), hashes every file name (served with a year's cache) and writes index.html naming them.
// Run by `npm run build:admin`, and by `prepare` on `npm install`/`npm ci`.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Esbuild from 'esbuild';

const root = dirname(fileURLToPath(import.meta.url));
const out = join(root, '..', 'dist', 'admin');

let esbuild: typeof Esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  // An install without dev dependencies cannot build; the server then says how to build.
  process.stderr.write('build:admin: esbuild is not installed (dev dependency); /admin will ask for `npm run build:admin`\n');
  process.exit(0);
}

rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });

const result = await esbuild.build({
  entryPoints: { app: join(root, 'src', 'main.tsx') },
  bundle: true,
  splitting: true,
  format: 'esm',
  target: 'es2022',
  outdir: join(out, 'assets'),
  entryNames: '[name]-[hash]',
  chunkNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  minify: process.env.ADMIN_MINIFY !== '0',
  sourcemap: false,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
  define: { 'process.env.NODE_ENV': '"production"' },
});

const outputs = Object.entries(result.metafile.outputs);
const entry = outputs.find(([, meta]) => meta.entryPoint?.endsWith('main.tsx'));
if (!entry) throw new Error('build:admin: no entry output');
const asset = (file: string) => `/admin/assets/${relative(join(out, 'assets'), join(process.cwd(), file))}`;
const script = asset(entry[0]);
const css = entry[1].cssBundle ? asset(entry[1].cssBundle) : null;

writeFileSync(
  join(out, 'index.html'),
  `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="color-scheme" content="light dark">
    <meta name="dyn-csp-nonce" content="__DYN_CSP_NONCE__">
    <title>dyn admin</title>
    <link rel="icon" href="data:,">
    ${css ? `<link rel="stylesheet" href="${css}">` : ''}
    <script type="module" src="${script}"></script>
  </head>
  <body>
    <div id="app"><noscript>The dyn admin needs JavaScript.</noscript></div>
  </body>
</html>
`,
);
// Pre-compressed copies: the server sends `<file>.gz` to clients that accept gzip.
for (const [file] of outputs) if (/\.(js|css)$/.test(file)) writeFileSync(`${join(process.cwd(), file)}.gz`, gzipSync(readFileSync(join(process.cwd(), file)), { level: 9 }));
const bytes = outputs.filter(([file]) => file.endsWith('.js')).reduce((sum, [, meta]) => sum + meta.bytes, 0);
process.stdout.write(`build:admin: dist/admin (${outputs.length} files, ${Math.round(bytes / 1024)} kB of JavaScript)\n`);
