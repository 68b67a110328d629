// Types of scripts/app-lock.mjs (plain JavaScript, so that the Dockerfile runs it without a loader).

/** Writes `<dir>/package.json` and `<dir>/package-lock.json`; returns the dependency names. */
export function writeAppLock(dir: string, tarballs: readonly string[], name?: string): string[];
