// How the benchmarks start tracepipe: as the `tracepipe` command does. bin/tracepipe.js's shebang
// (`#!/usr/bin/env -S node --flag ...`) gives V8 flags that spawning `node bin/tracepipe.js`
// would skip; these arguments put them back, so a benchmark measures what users run.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readImageStart } from '../scripts/dockerfile.ts';

const repoRoot = join(import.meta.dirname, '..');
const bin = join(repoRoot, 'bin/tracepipe.js');

/** The node flags of bin/tracepipe.js's shebang line. */
export function tracepipeNodeFlags(): string[] {
  const first = readFileSync(bin, 'utf8').split('\n', 1)[0]!;
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

/** Arguments for `process.execPath` that run bin/tracepipe.js as the command does, extra node flags after its own. */
export function tracepipeArgs(extraNodeFlags: readonly string[] = []): string[] {
  return [...tracepipeNodeFlags(), ...extraNodeFlags, bin];
}
