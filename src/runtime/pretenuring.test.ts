import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { runModuleSource, stopAllGroups } from '../testkit/processes.ts';

const MODULE = pathToFileURL(join(import.meta.dirname, 'pretenuring.ts')).href;

// A request's worth of objects made in one burst and all kept until the request is done, as a
// decoder's: with a 1 MiB young generation, young collections land inside the burst and find every
// object of the literal's allocation site alive — what makes V8 pretenure the site.
const WORKLOAD = `
if (process.argv[1] === 'stop') (await import(${JSON.stringify(MODULE)})).stopAllocationSitePretenuring();
const make = (index) => ({ index, text: 'span ' + index });
let sum = 0;
for (let request = 0; request < 200; request++) {
  const decoded = [];
  for (let i = 0; i < 20000; i++) decoded.push(make(i));
  for (const span of decoded) sum += span.index;
}
console.log('sum', sum);
`;

after(() => stopAllGroups('SIGKILL'));

/** V8's pretenuring decisions while the workload runs, with or without the module's call first. */
async function tenureDecisions(mode: 'default' | 'stop'): Promise<number> {
  const run = await runModuleSource(WORKLOAD, [mode], ['--max-semi-space-size=1', '--trace-pretenuring-statistics']);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^sum \d+$/m);
  return run.stdout.split('\n').filter((line) => line.includes('=> tenure')).length;
}

test('with V8 defaults, a burst of objects kept together gets its allocation site pretenured', async () => {
  assert.ok((await tenureDecisions('default')) > 0);
});

test('stopAllocationSitePretenuring: the same burst is never pretenured', async () => {
  assert.equal(await tenureDecisions('stop'), 0);
});
