#!/usr/bin/env node
// `npm create connector` and `npx create-connector` run this: it hands over to the scaffolder of the kit it depends
// on, `connector create`, with the same arguments, so that the templates and the kit a project starts with match.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

// Resolved as CommonJS would: it works on every Node, so an old one gets the kit's own clear message.
const kitPackage = createRequire(import.meta.url).resolve('approval-connector-kit/package.json');
const { bin } = JSON.parse(readFileSync(kitPackage, 'utf8'));
const child = spawn(
  process.execPath,
  [join(dirname(kitPackage), bin.connector), 'create', ...process.argv.slice(2)],
  {
    stdio: 'inherit',
  },
);
// Ctrl+C reaches both processes from the terminal: the scaffolder decides what it means. A SIGTERM sent to this
// process alone is passed on.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('exit', (code) => {
  process.exitCode = code ?? 1;
});
