#!/usr/bin/env node
// Thin shim: a build (npm run build) is preferred when present; otherwise Node 24 runs the
// TypeScript sources directly (type stripping), which is how the repository is used.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
const entry = existsSync(compiled) ? compiled : new URL('../src/cli/main.ts', import.meta.url);
const { main } = await import(entry.href);
await main(process.argv);
