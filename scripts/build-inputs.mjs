// Which files the build reads, in one place: scripts/build.mjs compiles and copies them, and
// bin/tracepipe.js compares their modification times with dist/.build-stamp to tell whether dist/
// is stale. Both must agree, or a start runs from stale output, or needlessly from source through
// tsx after an edit the build ignores (a README, a test).

import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The trees the build compiles (`.ts`) and copies (every other file: the web interface's assets). */
export const SOURCE_ROOTS = ['src', 'plugins', 'distribution'];
/** Files beside the trees whose change changes the output. */
const CONFIG_FILES = ['tsconfig.json', 'tsconfig.build.json'];
/** Not needed at run time: tests, their data, documentation. */
const NOT_BUILT_DIRS = new Set(['node_modules', 'testdata', 'fixtures', 'testing']);
const NOT_BUILT_FILE = /\.(test\.ts|md)$/;

/** Calls `visit` with the path of every file under `dir`, outside the directories of tests. */
export function walkFiles(dir, visit) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!NOT_BUILT_DIRS.has(entry.name)) walkFiles(path, visit);
    } else {
      visit(path);
    }
  }
}

/** Calls `visit` with the path of every file under `dir` that the build reads. */
export function walkBuildInputs(dir, visit) {
  walkFiles(dir, (path) => {
    if (!NOT_BUILT_FILE.test(path)) visit(path);
  });
}

/** The newest modification time (ms) of the files the build reads in the checkout at `root`. */
export function newestBuildInput(root) {
  let newest = 0;
  const see = (path) => (newest = Math.max(newest, statSync(path).mtimeMs));
  for (const dir of SOURCE_ROOTS) walkBuildInputs(join(root, dir), see);
  for (const file of CONFIG_FILES) see(join(root, file));
  return newest;
}
