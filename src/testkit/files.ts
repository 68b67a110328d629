// Temporary directories for tests (part of `tracepipe/testing`).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh temporary directory (left for the OS to clean; tests run in throwaway machines). */
export function tempDir(prefix = 'tracepipe-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}
