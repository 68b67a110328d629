// How the benchmarks start tracepipe: as the `tracepipe` command does. bin/tracepipe.js's shebang
// (`#!/usr/bin/env -S node --flag ...`) gives V8 flags that spawning `node bin/tracepipe.js`
// would skip; these arguments put them back, so a benchmark measures what users run.

import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { newestBuildInput } from '../scripts/build-inputs.mjs';
import { readImageStart } from '../scripts/dockerfile.ts';

const repoRoot = join(import.meta.dirname, '..');

/** The node flags of bin/tracepipe.js's shebang line (of the checkout at `root`). */
export function tracepipeNodeFlags(root = repoRoot): string[] {
  const first = readFileSync(join(root, 'bin/tracepipe.js'), 'utf8').split('\n', 1)[0]!;
  return first.startsWith('#!') ? first.split(' ').filter((word) => word.startsWith('--')) : [];
}

/**
 * The allocator settings the container image runs tracepipe with: its `MALLOC_*` variables (glibc
 * reads them when the process starts, so they must be in a child's environment).
 */
export function imageAllocatorEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(readImageStart(repoRoot).env).filter(([name]) => name.startsWith('MALLOC_')),
  );
}

/**
 * Arguments for `process.execPath` that run bin/tracepipe.js as the command does, extra node flags
 * after its own. `root` picks another checkout (built, with its own node_modules), so that a
 * benchmark can set an earlier commit against this one on the same machine.
 */
export function tracepipeArgs(extraNodeFlags: readonly string[] = [], root = repoRoot): string[] {
  assertBuilt(root);
  return [...tracepipeNodeFlags(root), ...extraNodeFlags, join(root, 'bin/tracepipe.js')];
}

/**
 * Refuses a checkout whose dist/ is missing or older than its sources. bin/tracepipe.js would run
 * the sources through tsx instead, silently: ~25 MB more RSS and more CPU per span, figures of tsx
 * as much as of the change. TRACEPIPE_FROM_SOURCE set (0 or 1) says the caller chose.
 */
function assertBuilt(root: string): void {
  if (process.env.TRACEPIPE_FROM_SOURCE !== undefined) return;
  // A checkout from before dist/ existed always ran its sources.
  if (!existsSync(join(root, 'scripts/build-inputs.mjs'))) return;
  const stamp = join(root, 'dist/.build-stamp');
  if (!existsSync(stamp) || newestBuildInput(root) > statSync(stamp).mtimeMs) {
    throw new Error(
      `${root}: dist/ is older than the sources (run \`npm run build\` there), or set TRACEPIPE_FROM_SOURCE`,
    );
  }
}
