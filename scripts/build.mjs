#!/usr/bin/env node
// Builds dist/: compiles src/, plugins/ and distribution/ with tsc (tsconfig.build.json: JavaScript
// plus declarations, `.ts` import specifiers rewritten to `.js`), copies the non-TypeScript files
// the components read at run time (the web interface's static files), removes outputs whose
// source is gone, checks that nothing compiled imports a devDependency, and writes
// dist/.build-stamp, which bin/tracepipe.js compares with the sources' modification times.
//
//   node scripts/build.mjs              # build (incremental)
//   node scripts/build.mjs --if-stale   # only when a source is newer than the stamp; nothing to do
//                                       # where there are no sources (an installed package)
//   node scripts/build.mjs --strict     # fail on type errors (otherwise reported, and dist/ written)
//
// `npm install` runs it (`prepare`: --if-stale), and so does `npm pack` (`prepack`: --if-stale --strict).

import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { builtinModules } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SOURCE_ROOTS, newestBuildInput, walkBuildInputs, walkFiles } from './build-inputs.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const stamp = join(dist, '.build-stamp');
const buildInfo = join(root, '.tsbuild/build.tsbuildinfo');
if (!existsSync(join(root, 'src'))) {
  // An installed package: dist/ came in the tarball.
  process.exit(0);
}
if (process.argv.includes('--if-stale') && existsSync(stamp) && statSync(stamp).mtimeMs >= newestBuildInput(root)) {
  process.exit(0);
}

// The stamp is dated when tsc starts reading the sources, not when the build ends: a source saved
// while it compiles (a long build on a busy machine) is newer than the stamp, and dist/ stays stale.
const startedAt = new Date();
// tsc's incremental mode trusts its build info; without dist/ it must start over.
if (!existsSync(dist)) rmSync(buildInfo, { force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
// --listFiles names every file of the program, so that outputs of files it no longer holds
// (deleted, renamed, newly excluded) can be removed below.
const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--listFiles'], {
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
});
const expected = new Set();
for (const line of result.stdout.split('\n')) {
  const relativePath = line.startsWith(root) ? relative(root, line) : undefined;
  if (relativePath && SOURCE_ROOTS.some((dir) => relativePath.startsWith(`${dir}/`)) && relativePath.endsWith('.ts')) {
    const base = relativePath.slice(0, -'.ts'.length);
    expected.add(`${base}.js`).add(`${base}.d.ts`);
  } else if (line.trim() && !line.startsWith('/')) {
    console.log(line); // a diagnostic
  }
}
if (result.status !== 0) {
  // tsc still wrote JavaScript unless the configuration itself is broken. A package is never packed
  // from code with type errors (--strict, the prepack script); an install (prepare) goes on, with
  // the errors above, so that a type error does not stop `npm install` — `npm run typecheck` and CI fail on it.
  if (process.argv.includes('--strict') || !existsSync(join(dist, 'distribution/main.js'))) {
    console.error('build: tsc failed');
    process.exit(result.status ?? 1);
  }
  console.error('build: tsc reported type errors (above); dist/ was written anyway, but left stale');
}
const clean = result.status === 0;

// Copy run-time assets.
for (const dir of SOURCE_ROOTS) {
  walkBuildInputs(join(root, dir), (path) => {
    const relativePath = relative(root, path);
    if (path.endsWith('.ts')) return;
    const target = join(dist, relativePath);
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(path, target);
    expected.add(relativePath);
  });
}

// Remove what a deleted or renamed source left behind, and check the imports of the rest.
const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
// `@tracepipe/webui` is no package: the web pages' import map points it at src/http/webui/, the
// browser modules both interfaces share (src/http/webui.ts serves them).
const allowed = new Set([...Object.keys(packageJson.dependencies ?? {}), 'tracepipe', '@tracepipe/webui']);
const builtins = new Set(builtinModules);
const problems = [];
for (const dir of SOURCE_ROOTS) {
  if (!existsSync(join(dist, dir))) continue;
  // Every output file (outside test directories, which the build never writes): what it did not
  // just produce is left over.
  walkFiles(join(dist, dir), (path) => {
    const relativePath = relative(dist, path);
    if (!expected.has(relativePath)) {
      rmSync(path);
      return;
    }
    if (!path.endsWith('.js')) return;
    const text = readFileSync(path, 'utf8');
    for (const match of text.matchAll(
      /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm,
    )) {
      const specifier = match[1] ?? match[2];
      if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
      const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
      if (!allowed.has(name) && !builtins.has(name))
        problems.push(`${relativePath} imports ${specifier}, which is not a dependency`);
    }
  });
}
if (problems.length > 0) {
  console.error(`build: compiled code must use only production dependencies:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
// Only a clean build is up to date: after type errors, bin/ keeps running the sources and the
// next build (`npm pack` included) compiles again.
if (clean) {
  writeFileSync(stamp, `${startedAt.toISOString()}\n`);
  utimesSync(stamp, startedAt, startedAt);
}
