#!/usr/bin/env node
// Thin shim: a build (npm run build) is preferred when present; otherwise Node 24 runs the
// TypeScript sources directly (type stripping), which is how the repository is used.
//
// The version check comes first and is plain ES2015 with no static import: on an older Node
// the TypeScript sources (or node:sqlite) would fail with a stack trace, so this file must
// parse and run there long enough to say what to install.
var major = Number(String(process.versions.node).split('.')[0]);
if (!(major >= 24)) {
  process.stderr.write(
    'dynctl: error: Node.js 24 or newer is required (this is ' + process.version + '); install it with nvm (nvm install, which reads .nvmrc) or from https://nodejs.org\n',
  );
  process.exit(1);
}

// A promise chain rather than top-level await, which older parsers reject before the check runs.
var compiled = new URL('../dist/cli/main.js', import.meta.url);
import('node:fs')
  .then(function (fs) {
    var entry = fs.existsSync(compiled) ? compiled : new URL('../src/cli/main.ts', import.meta.url);
    return import(entry.href);
  })
  .then(function (cli) {
    return cli.main(process.argv);
  });
