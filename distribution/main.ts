// The `tracepipe` command of this repository: the framework's command line with the built-in
// components. bin/tracepipe.js runs it (compiled, from dist/); a distribution of your own is the
// same few lines with your own catalog:
//
//   import { runCommandLine } from 'tracepipe';
//   await runCommandLine(process.argv, { name: 'mypipe', version: '1.0.0', components: [...] });

import { runCommandLine } from '../src/cli/main.ts';
import { components } from './components.ts';

export async function main(argv: readonly string[]): Promise<void> {
  await runCommandLine(argv, { components });
}
