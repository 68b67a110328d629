// Debian's Chromium (through playwright-core) for the browser tests: where it is, the flags it runs
// headless with, the skip reason when it is not installed, and one launch. Test-only (playwright-core
// is a devDependency), so tsconfig.build.json leaves this module out of the build.

import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The `skip` option of a browser test: false when Chromium is installed, else why it is skipped. */
export const noChromium: string | false = existsSync(CHROMIUM)
  ? false
  : `no browser at ${CHROMIUM} (install Debian's chromium package to run the browser tests)`;

/** Launches a headless Chromium; the caller closes it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
}
