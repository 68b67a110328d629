// Source files as the type extraction and its cache see them: which graph modules the compiler can
// read, and the content hash that tells whether a file is still the one the schemas were read from.
// Light on purpose: the main thread uses it without loading the compiler.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

const TYPESCRIPT_FILE = /\.(?:[cm]?ts|tsx)$/i;

/** Whether the compiler reads `path` as TypeScript (a JavaScript graph's types are not read). */
export function isTypeScriptModule(path: string): boolean {
  return TYPESCRIPT_FILE.test(path);
}

/** SHA-256 of `content`, hex. */
export function contentHash(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/** The content hash of the file at `path`; `undefined` when it cannot be read. */
export function fileHash(path: string): string | undefined {
  try {
    return contentHash(readFileSync(path));
  } catch {
    return undefined;
  }
}
