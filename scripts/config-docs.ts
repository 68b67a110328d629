// Keeps each component README's config table in step with its schema (as mdatagen does for the
// Collector). The table sits between `<!-- config:start -->` and `<!-- config:end -->`.
//
//   node --import tsx scripts/config-docs.ts          # rewrite the tables
//   node --import tsx scripts/config-docs.ts --check  # exit 1 if any table is stale

import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { builtinFactories } from '../plugins/index.ts';
import { configTable } from '../src/config/describe.ts';
import type { Factory } from '../src/pipeline/component.ts';

const START = '<!-- config:start -->';
const END = '<!-- config:end -->';

export function readmePath(factory: Factory): string {
  return fileURLToPath(new URL(`../plugins/${factory.kind}s/${factory.type}/README.md`, import.meta.url));
}

/** The README text with its table regenerated, or an error message when it has no markers. */
export function renderReadme(text: string, factory: Factory): string | Error {
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) return new Error(`has no ${START} … ${END} section`);
  return `${text.slice(0, start + START.length)}\n${configTable(factory.configSchema)}${text.slice(end)}`;
}

function main(check: boolean): number {
  let failures = 0;
  for (const factory of builtinFactories) {
    const path = readmePath(factory);
    const text = readFileSync(path, 'utf8');
    const rendered = renderReadme(text, factory);
    if (rendered instanceof Error) {
      console.error(`${path}: ${rendered.message}`);
      failures++;
    } else if (rendered !== text) {
      if (check) {
        console.error(`${path}: config table is stale; run scripts/config-docs.ts`);
        failures++;
      } else {
        writeFileSync(path, rendered);
        console.log(`updated ${path}`);
      }
    }
  }
  return failures > 0 ? 1 : 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(main(process.argv.includes('--check')));
