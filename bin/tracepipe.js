#!/usr/bin/env node
// Entry point of the `tracepipe` command.
//
// It starts with Node's default young generation. A larger one (32 MiB semi-spaces) paid while the
// proxy allocated ~26 KB per span; since the decoder and the run writer allocate less, it costs
// CPU and ~30 MB of RSS instead (bench/pipeline/README.md, "2026-11-24, late night").
//
// It runs the compiled JavaScript in dist/ — built by `npm install` (the `prepare` script) in a
// checkout and by `npm pack` for the package — so a start compiles nothing. In a checkout whose
// dist/ is missing or older than a source file (you edited src/ and did not rebuild), or with
// TRACEPIPE_FROM_SOURCE=1, it runs the TypeScript sources through tsx instead, as every start did
// before dist/ existed: about half a second more. `npm run build` brings dist/ up to date;
// TRACEPIPE_FROM_SOURCE=0 runs dist/ even when it is older than the sources.
//
// Either way, the user's TypeScript — plugins, graphs — is compiled on demand by tsx.

import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const compiled = join(root, 'dist/distribution/main.js');
const stamp = join(root, 'dist/.build-stamp');

async function runFromSource() {
  if (process.env.TRACEPIPE_FROM_SOURCE === '1') return true;
  if (process.env.TRACEPIPE_FROM_SOURCE === '0' && existsSync(compiled)) return false;
  // An installed package ships dist/ and no sources: nothing to compare.
  if (!existsSync(join(root, 'src'))) return false;
  if (!existsSync(compiled) || !existsSync(stamp)) return true;
  // Only a checkout gets here; the walk is shared with the build, so both agree on what it reads.
  const { newestBuildInput } = await import('../scripts/build-inputs.mjs');
  return newestBuildInput(root) > statSync(stamp).mtimeMs;
}

if (await runFromSource()) {
  const { register } = await import('tsx/esm/api');
  register();
  // Plugins that import `tracepipe/plugin` (through the package's exports) get the sources too,
  // not a stale or missing dist/: the `tracepipe-source` export condition points at them.
  const { register: registerHooks } = await import('node:module');
  const hooks =
    'export async function resolve(specifier, context, next) {' +
    " return next(specifier, { ...context, conditions: [...context.conditions, 'tracepipe-source'] }); }";
  registerHooks(`data:text/javascript,${encodeURIComponent(hooks)}`);
  const { main } = await import('../distribution/main.ts');
  await main(process.argv);
} else {
  const { main } = await import('../dist/distribution/main.js');
  await main(process.argv);
}
