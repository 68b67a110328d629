// Debian's Chromium (through playwright-core) for the browser tests: where it is, the flags it runs
// headless with, the skip reason when it is not installed, and one launch. playwright-core is the
// tests' dependency, not tracepipe's: the test passes its `chromium` in, so that this module (part of
// `tracepipe/testing`) loads without it — and its types name none of playwright-core's, so that a
// plugin without playwright-core installed typechecks against `tracepipe/testing` too.

import { existsSync } from 'node:fs';

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

/**
 * What `launchChromium` needs of a browser launcher: playwright-core's `chromium` is one. The
 * browser type is the launcher's, so a test gets playwright-core's `Browser` back.
 */
export interface ChromiumLauncher<Browser> {
  launch(options: { executablePath: string; args: string[] }): Promise<Browser>;
}

/** Launches a headless Chromium through playwright-core's `chromium`; the caller closes it. */
export function launchChromium<Browser>(chromium: ChromiumLauncher<Browser>): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
}
